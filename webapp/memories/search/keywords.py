"""Keyword search within a scope: candidates from SQLite FTS5 or PostgreSQL full text (the
indexes are in keyword_index.py), scored by BM25 with the scope's own statistics (ranking.py).
"""
import re
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Callable

from sqlalchemy import (ARRAY, Text, and_, any_, bindparam, cast, column, func, literal_column, or_,
                        select, table, text)
from sqlalchemy.dialects.postgresql import TSQUERY

from ...extensions import db
from ...local_time import reader_zone, stored, wall_clock_now
from ...models import Conversation, Turn
from .dates import find_dates
from .keyword_index import (POSTGRES_MEMORY_VECTOR, POSTGRES_SCOPE_TOKEN, POSTGRES_TURN_VECTOR,
                            session_tokens)
from ..models import Memory, TurnVector
from .bm25 import Candidate, ScopeStatistics, bm25_scores
from .statements import built, newest_in, read

STOPWORDS = set("""a an the is are was were be been am i me my we our you your it its to of in on
for and or but with what which who whom how when where why do does did can could would should will
please tell know about that this there here any some have has had not no so if as at by from""".split())
MAX_QUERY_WORDS = 12
SAYING = r"(?:\w+\s+)?(?:said|say|told|tell|recommend\w*|suggest\w*|advis\w*|mention\w*|explain\w*)\b"
ASSISTANT_SAID = re.compile(rf"\b(?:you|nimbus|the assistant)\s+{SAYING}", re.I)
CUSTOMER_SAID = re.compile(rf"\bI\s+{SAYING}", re.I)
COMMON_WORD_MIN_ROWS = 1000  # below this, scoring every match is cheap: keep every word
COUNT_CAP = 1000  # a word's rows are counted up to this many: the cost stays flat past it
# Past the cap a word's count is estimated from the scope's newest rows back to its COUNT_CAP-th
# hit, counted up to this many (see beyond_the_cap).
ESTIMATE_WINDOW = 20 * COUNT_CAP
RECOUNT_SECONDS = 600  # a scope's row count is topped up with new rows, recounted this often
TOTALS: OrderedDict = OrderedDict()  # (database, index, scope key) -> (rows, highest id, when)

def query_words(query: str) -> list[str]:
    found = [w for w in re.findall(r"\w+", (query or "").lower()) if w not in STOPWORDS]
    return list(dict.fromkeys(found))[:MAX_QUERY_WORDS]


@dataclass
class Indexed:
    """One searchable table: its FTS5 index, the text PostgreSQL indexes, and the scope's rows."""
    fts_name: str
    id: object
    text: object
    created: object
    columns: tuple  # selected for each candidate: id, text parts..., vector, model (+ on_date)
    scoped: Callable  # select -> the same select joined and filtered to the session's scope
    key: tuple | None = None  # names the scope, so its row count can be kept between searches
    joined: Callable = lambda statement: statement  # what else a candidate row brings along
    values: dict = field(default_factory=dict)  # the scope's bound parameters, when it has some
    form: tuple | None = None  # names the scope's conditions: its statements are built once
    branches: tuple = ()  # the scope as disjoint (condition, in id order) pairs, walked apart
    text_columns: str = ""  # the FTS5 columns a word is looked for in (the rest say whose)
    vector: object = None  # what PostgreSQL's GIN index holds (default: the text's tsvector)
    # The scope as the index names it: (values -> its tokens, the FTS5 column / the PostgreSQL
    # lexeme's first word holding them); a search then walks only the scope's rows of a word.
    tokens: Callable | None = None
    token_column: tuple = ("", "")
    matched: Callable | None = None  # `scoped` for the rows the index found (default: scoped)
    ranged: Callable | None = None  # `scoped` for a range of ids, the newest (default: scoped)

    def scope_hits(self, statement):
        return (self.matched or self.scoped)(statement)

    def form_of(self, *what) -> tuple | None:
        return None if self.form is None else (self.fts_name, *self.form, *what)


def holding(indexed: Indexed, statement, name: str):
    """`statement` narrowed to rows holding the word bound as `name` (see word_value), the index
    driving, and with scope tokens only the scope's: SQLite walks the word's FTS5 entries merged
    with the scope's newest first, so a LIMIT stops it early. PostgreSQL finds them in its GIN
    index (its fast scan skipping the word's postings to the scope's) and sorts them: ordered by
    -id, which no index offers, since walking the primary key newest first computed each row's
    tsvector (a second and more per search over 10,000 turns)."""
    if db.engine.dialect.name == "postgresql":
        vector = indexed.vector if indexed.vector is not None else func.to_tsvector(
            literal_column("'english'"), indexed.text)
        statement = statement.where(vector.op("@@")(
            func.plainto_tsquery(literal_column("'english'"), bindparam(name))))
        if indexed.tokens is not None:  # apart, so a stop word still matches nothing
            statement = statement.where(vector.op("@@")(
                cast(bindparam("scope_lexemes"), TSQUERY)))
        return statement, -indexed.id
    fts = table(indexed.fts_name, column("rowid"))
    return (statement.join(fts, fts.c.rowid == indexed.id)
            .where(text(f"{indexed.fts_name} MATCH :{name}")), fts.c.rowid.desc())


def word_value(indexed: Indexed, word: str) -> str:
    """A word as the index is asked for it: on SQLite an FTS5 phrase (stemmed as it stores
    them) in the text columns, and with scope tokens in the scope's rows only."""
    if db.engine.dialect.name == "postgresql":
        return word
    found = f'{{{indexed.text_columns}}} : "{word}"' if indexed.text_columns else f'"{word}"'
    return found if indexed.tokens is None else f"{found} AND {scope_match(indexed)}"


def scope_match(indexed: Indexed) -> str:
    """The FTS5 query for the scope's rows: any of its tokens in the token column."""
    tokens = " OR ".join(f'"{token}"' for token in indexed.tokens(indexed.values))
    return f"{indexed.token_column[0]} : ({tokens})"


def scope_values(indexed: Indexed) -> dict:
    """The values holding() binds besides the word: PostgreSQL's tsquery of the scope's tokens
    (quoted lexemes; a space keeps them apart from any word)."""
    if indexed.tokens is None or db.engine.dialect.name != "postgresql":
        return {}
    tokens = indexed.tokens(indexed.values)
    return {"scope_lexemes": " | ".join(f"'{indexed.token_column[1]} {token}'" for token in tokens),
            "scope_tokens": tokens}


def on_dates(indexed: Indexed, count: int):
    """Rows on any of `count` days, bound as d0_start, d0_end, ... (see date_values)."""
    return or_(*(and_(indexed.created >= bindparam(f"d{i}_start"),
                      indexed.created < bindparam(f"d{i}_end")) for i in range(count)))


def date_values(ranges) -> dict:
    return {f"d{i}_{edge}": moment for i, (start, end) in enumerate(ranges)
            for edge, moment in (("start", start), ("end", end))}


def scope_rows(indexed: Indexed) -> int:
    """Rows in the scope (statistics counts them in its own statement)."""
    counted, values, finish = row_count(indexed)
    counted = counted()
    return finish(*read(select(counted.c.scope_rows, counted.c.scope_top), values).one())


def row_count(indexed: Indexed) -> tuple:
    """(a function building a subquery of one row, scope_rows and scope_top; its bound values;
    and the function that turns its row into the scope's row count). A named scope is counted
    once, then topped up with the rows added since (a range on the id index), and recounted every
    RECOUNT_SECONDS so deletions show: the count only feeds IDF, and counting every row on every
    search grew with the scope."""
    key = None if indexed.key is None else (str(db.engine.url), indexed.fts_name, indexed.key)
    known, now = TOTALS.get(key) if key else None, time.monotonic()
    again = key is None or known is None or now - known[2] > RECOUNT_SECONDS or known[1] is None

    def counted():
        return indexed.scoped(
            select(func.count().label("scope_rows"), func.max(indexed.id).label("scope_top"))
            .select_from(indexed.id.table)
            .where(*([] if again else [indexed.id > bindparam("known")]))).subquery()
    values = {**indexed.values, **({} if again else {"known": known[1]})}

    def finish(rows, top) -> int:
        rows = rows or 0
        if key is None:
            return rows
        if again:
            TOTALS[key] = (rows, top, now)
        else:
            TOTALS[key] = (known[0] + rows, top or known[1], known[2])
        TOTALS.move_to_end(key)
        while len(TOTALS) > 10_000:
            TOTALS.popitem(last=False)
        return TOTALS[key][0]
    return counted, values, finish


def statistics(indexed: Indexed, words: list[str], ranges) -> ScopeStatistics:
    """The scope's row count, how many of its rows hold each word and how many fall on the
    dates: one statement, each count driven by the index and stopping at COUNT_CAP. A word that
    reaches the cap in a scope larger than it is estimated (beyond_the_cap), so IDF and the rule
    that leaves out words held by over half the scope hold at any size."""
    counted, values, finish = row_count(indexed)

    def build():
        base = select(indexed.id).select_from(indexed.id.table)
        counts = [count_of(newest_holding(indexed, base, f"w{i}", COUNT_CAP))
                  for i in range(len(words))]
        if ranges:
            counts.append(count_of(newest_of(indexed, [indexed.id], COUNT_CAP,
                                             on_dates(indexed, len(ranges)))))
        rows = counted()
        return select(rows.c.scope_rows, rows.c.scope_top, *counts)
    statement = built(indexed.form_of("statistics", len(words), len(ranges), "known" in values),
                      build)
    asked = {**scope_values(indexed), **{f"w{i}": word_value(indexed, word)
                                         for i, word in enumerate(words)}}
    rows, top, *found = read(statement, {**values, **date_values(ranges), **asked}).one()
    total = finish(rows, top)
    full = [i for i, n in enumerate(found[:len(words)]) if n >= COUNT_CAP]
    if full and total > COUNT_CAP:
        for i, n in beyond_the_cap(indexed, full, total, asked).items():
            found[i] = n
    half = total // 2 + 1 if total >= COMMON_WORD_MIN_ROWS else None
    held = dict(zip(words, found))
    total = max([total, *found])  # a count kept from before a purge never undercuts a word's
    stats = ScopeStatistics(total, held, found[-1] if ranges else 0)
    if half:  # over half the rows: IDF below ln 2, and costly to score
        stats.holding = {w: n for w, n in held.items() if n < half}
    return stats


def count_of(limited):
    """How many rows `limited` (a select with a LIMIT) gives. Its order makes SQLite walk an
    index, not the scope, up to the limit; PostgreSQL's GIN index hands a word's rows over
    unordered, so the order made it fetch and sort every one of them before the limit (0.1 s a
    common word for a customer with 50,000 turns): the count is the same without it."""
    if db.engine.dialect.name == "postgresql":
        limited = limited.order_by(None)
    return select(func.count()).select_from(limited.subquery()).scalar_subquery()


def newest_holding(indexed: Indexed, base, name: str, limit: int):
    """`base` (ids) of the scope's rows holding the word bound as `name`, newest first."""
    rows, order = holding(indexed, base, name)
    return indexed.scope_hits(rows).order_by(order).limit(limit)


def beyond_the_cap(indexed: Indexed, full: list[int], total: int, asked: dict) -> dict[int, int]:
    """{word position: estimated rows holding it} for the words counted to COUNT_CAP: the cap
    times the scope's rows over its rows since the word's COUNT_CAP-th newest hit (a sample of
    the newest rows, exact when the word is spread evenly over the scope's history; a word whose
    share drifts over time is counted at its recent share). That window is counted up to
    ESTIMATE_WINDOW rows: a word held by fewer than one in ESTIMATE_WINDOW / COUNT_CAP of the
    newest rows counts as that share, an overestimate that only lowers the IDF of a word far
    from the over-half rule. Two index walks per word, each bounded, whatever the scope's size:
    on SQLite the window is the scope's tokens' own FTS5 entries (0.6 ms for 2,500 rows, against
    12 ms through the conversations' index), which also count a pending turn or a deleted
    conversation's: it is an estimate. Elsewhere the window's turns are checked by the person
    each records (Indexed.ranged), not by a join to the person's conversations for each of the
    shop's ids above the hit."""
    in_fts = indexed.tokens is not None and db.engine.dialect.name == "sqlite"

    def build():
        base = select(indexed.id).select_from(indexed.id.table)
        fts = table(indexed.fts_name, column("rowid"))
        counts = []
        for i in full:
            hits = newest_holding(indexed, base, f"w{i}", COUNT_CAP).subquery()
            kth = select(func.min(hits.c[indexed.id.name])).scalar_subquery()
            window = (select(fts.c.rowid).where(text(f"{indexed.fts_name} MATCH :scope_only"),
                                                fts.c.rowid >= kth) if in_fts
                      else (indexed.ranged or indexed.scoped)(base.where(indexed.id >= kth)))
            counts.append(count_of(window.limit(ESTIMATE_WINDOW)))
        return select(*counts)
    statement = built(indexed.form_of("beyond the cap", tuple(full)), build)
    since = read(statement, {**indexed.values, **asked,
                             **({"scope_only": scope_match(indexed)} if in_fts else {})}).one()
    return {i: max(COUNT_CAP, min(total, round(COUNT_CAP * total / max(n, COUNT_CAP))))
            for i, n in zip(full, since)}


def candidates(indexed: Indexed, words: list[str], ranges, limit: int,
               held: dict[str, int] | None = None) -> list:
    """Rows of the scope holding a query word, the rarest word's first and each word's newest
    first, `limit` in all; then rows on the named dates (newest first): each as (id, *text
    parts, ..., and on_date when the question names dates: whether the row falls on one, decided
    by the database as it counts them, since parsing each date in Python cost more than reading
    the row). Each query stops at its limit, whatever the size of the scope."""
    columns = (*indexed.columns, on_dates(indexed, len(ranges)).label("on_date")
               ) if ranges else indexed.columns
    dated = {**date_values(ranges), **scope_values(indexed)}

    def holding_the_word():
        statement, newest_first = holding(indexed, select(*columns), "word")
        return (indexed.joined(indexed.scope_hits(statement)).order_by(newest_first)
                .limit(bindparam("row_limit")))

    def on_the_dates():
        return indexed.joined(newest_of(indexed, columns, bindparam("row_limit"),
                                        on_dates(indexed, len(ranges))))
    found = {}
    for word in sorted(words, key=lambda w: (held or {}).get(w, 0)):
        if len(found) >= limit:
            break
        keep(found, read(built(indexed.form_of("candidates", len(ranges)), holding_the_word), {
            **indexed.values, **dated, "word": word_value(indexed, word), "row_limit": limit - len(found)}))
    if ranges:
        keep(found, read(built(indexed.form_of("on dates", len(ranges)), on_the_dates), {
            **indexed.values, **dated, "row_limit": limit}))
    return list(found.values())


def newest_of(indexed: Indexed, columns, limit, *where):
    """`columns` of the scope's rows meeting `where`, newest first, up to `limit`: a scope made
    of branches (memories) walks each apart (see statements.newest_in)."""
    if indexed.branches:
        return newest_in(indexed.branches, columns, indexed.id, limit, *where)
    return indexed.scoped(select(*columns).where(*where)).order_by(indexed.id.desc()).limit(limit)


def keep(found: dict, result) -> None:
    """Each new row, by id, as the database gave it. Rows are read by position where hundreds
    are read per search (see Indexed.columns): a Row's named access costs about a microsecond."""
    for row in result.fetchall():  # one call for all rows, not one Python-level call per row
        if row[0] not in found:
            found[row[0]] = row


def scored(indexed: Indexed, query: str, limit: int, text_of) -> tuple[dict[int, float], dict]:
    """({id: BM25 score with the scope's statistics}, {id: candidate row}) for the query."""
    zone = reader_zone()  # "on March 14" is the reader's March 14
    ranges, rest = find_dates(query, wall_clock_now(zone))
    ranges = [(stored(start, zone), stored(end, zone)) for start, end in ranges]
    words = query_words(rest)
    if not words and not ranges:
        return {}, {}
    stats = statistics(indexed, words, ranges)
    words = [w for w in words if stats.holding.get(w)]
    dated = ranges if stats.on_date else []
    rows = candidates(indexed, words, dated, limit, stats.holding)
    pool = [Candidate(row[0], text_of(row), bool(row[-1]) if dated else False) for row in rows]
    return bm25_scores(words, stats, pool), {row[0]: row for row in rows}


def memories_indexed(condition, key: tuple | None = None, values: dict | None = None,
                     form: tuple | None = None, branches: tuple = ()) -> Indexed:
    """The session's memories: `condition` with its values written in, or, with `form` (see
    SessionScope.bound), with the bound `values`; `branches`, the same condition in parts."""
    return Indexed("memories_fts", Memory.id, Memory.content, Memory.created_at,
                   (Memory.id, Memory.content, Memory.embedding, Memory.embedding_model),
                   lambda statement: statement.where(condition), key, values=values or {},
                   form=form, branches=tuple(branches), text_columns="content",
                   vector=literal_column(POSTGRES_MEMORY_VECTOR.format(t="memories.")),
                   tokens=memory_tokens if values and "scope_tenant" in values else None,
                   token_column=("scope", "scope"),
                   matched=memories_by_token if values and "scope_tenant" in values
                   and db.engine.dialect.name == "postgresql" else None)


def memories_by_token(statement):
    """PostgreSQL: the session's scope for memories its GIN index found, checked on each row's
    own columns as its token (one per (memorable, subject) pairing, the same pairings as the
    scope's branches). Written as the branches, the scope was the cheaper way in for the planner,
    which then computed the tsvector of every memory in it (9 ms for 250; 5,000 at a busy
    customer of a million-turn shop); as a token it is a filter on the index's hits."""
    return statement.where(literal_column(POSTGRES_SCOPE_TOKEN.format(t="memories.")) == any_(
        cast(bindparam("scope_tokens"), ARRAY(Text))))


def memory_tokens(values: dict) -> list[str]:
    """The index's tokens of a session's scope bound as SessionScope.bound() binds it."""
    return session_tokens(values["scope_tenant"], values.get("scope_subject"),
                          values.get("scope_orders"))


def memory_matches(condition, query: str, limit: int, key: tuple | None = None,
                   values: dict | None = None, form: tuple | None = None, branches: tuple = ()
                   ) -> tuple[dict[int, float], list]:
    """({id: keyword score}, [(id, embedding, embedding_model)]) of the memories meeting
    `condition` (the session's scope, named by `key`) that match the query: the vectors come
    along for free."""
    scores, rows = scored(memories_indexed(condition, key, values, form, branches), query, limit,
                          lambda row: row[1])  # (id, content, embedding, embedding_model, ...)
    return scores, [(row[0], row[2], row[3]) for row in rows.values()]


# A turn's text as ix_turns_fulltext indexes it (keyword_index.py): the space is written into the
# SQL, since a bound one makes a different expression, which the index cannot serve.
TURN_TEXT = Turn.question + literal_column("' '") + Turn.answer
# How a turn's words are looked up (the owner aside): what any search of turns passes to Indexed.
TURN_INDEX = {"text_columns": "question answer",
              "vector": literal_column(POSTGRES_TURN_VECTOR.format(t="turns."))}


def own_turns(statement):
    """`statement` joined and filtered to one person's finished turns, bound as scope_user and
    scope_tenant."""
    return statement.join(Conversation, Conversation.id == Turn.conversation_id).where(
        Conversation.user_id == bindparam("scope_user"),
        Conversation.tenant_id == bindparam("scope_tenant"),
        Conversation.deleted_at.is_(None), Turn.outcome != "pending")


def owned_turns(statement):
    """own_turns for rows the index found: the person as the turn records it, its conversation
    looked up by key. Planned without its values, a join on the person's conversations was
    walked once per hit (0.4 s for 579 hits of 2,500 turns on PostgreSQL); by key, 15 ms."""
    return statement.join(Conversation, Conversation.id == Turn.conversation_id).where(
        Turn.owner_id == bindparam("scope_user"),
        Conversation.tenant_id == bindparam("scope_tenant"),
        Conversation.deleted_at.is_(None), Turn.outcome != "pending")


def with_vector(statement):
    """A turn's vector along with it; joined last, so the index still drives the query."""
    return statement.outerjoin(TurnVector, TurnVector.turn_id == Turn.id)


def turns_indexed(user) -> Indexed:
    return replace(person_turns(), key=("user", user.tenant_id, user.id),
                   values={"scope_user": user.id, "scope_tenant": user.tenant_id})


@lru_cache(maxsize=1)
def person_turns() -> Indexed:
    """A person's turns, their scope bound (see own_turns): its expressions made once."""
    return Indexed("turns_fts", Turn.id, TURN_TEXT, Turn.created_at,
                   (Turn.id, Turn.question, Turn.answer, TurnVector.embedding,
                    TurnVector.embedding_model), own_turns, joined=with_vector,
                   form=("a person's turns",), **TURN_INDEX,
                   tokens=lambda values: [str(values["scope_user"])],
                   token_column=("owner_id", "owner"), matched=owned_turns, ranged=owned_turns)


def turn_matches(user, query: str, limit: int) -> tuple[dict[int, float], list]:
    """({turn id: keyword score}, [(id, embedding, embedding_model)]) of this person's own
    finished turns matching the query: the vectors come along, as with memory_matches. A question
    about who said it ("what did you suggest…", "what did I tell you…") counts the words of that
    speaker's side twice (a BM25F-style field weight)."""
    text_of = asked_and_answered
    if ASSISTANT_SAID.search(query or ""):
        query = re.sub(r"\b(?:nimbus|assistant)\b", " ", query, flags=re.I)
        text_of = answer_twice
    elif CUSTOMER_SAID.search(query or ""):
        text_of = question_twice
    scores, rows = scored(turns_indexed(user), query, limit, text_of)
    return scores, [(row[0], row[3], row[4]) for row in rows.values()]


# A turn's candidate row is (id, question, answer, embedding, embedding_model, ...).
def asked_and_answered(row) -> str:
    return f"{row[1]}\n{row[2]}"


def answer_twice(row) -> str:
    return f"{row[1]}\n{row[2]}\n{row[2]}"


def question_twice(row) -> str:
    return f"{row[1]}\n{row[1]}\n{row[2]}"


def turn_scores(user, query: str, limit: int) -> dict[int, float]:
    """{turn id: keyword score} of this person's own finished turns matching the query."""
    return turn_matches(user, query, limit)[0]
