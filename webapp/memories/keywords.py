"""Keyword search within a scope: candidates from SQLite FTS5 or PostgreSQL full text (the
indexes are in keyword_index.py), scored by BM25 with the scope's own statistics (ranking.py).
"""
import re
import time
from collections import OrderedDict, namedtuple
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from sqlalchemy import and_, column, func, literal_column, or_, select, table, text

from ..extensions import db
from ..local_time import reader_zone, stored, wall_clock_now
from ..models import Conversation, Turn
from .dates import find_dates
from .models import Memory, TurnVector
from .ranking import Candidate, ScopeStatistics, bm25_scores

STOPWORDS = set("""a an the is are was were be been am i me my we our you your it its to of in on
for and or but with what which who whom how when where why do does did can could would should will
please tell know about that this there here any some have has had not no so if as at by from""".split())
MAX_QUERY_WORDS = 12
SAYING = r"(?:\w+\s+)?(?:said|say|told|tell|recommend\w*|suggest\w*|advis\w*|mention\w*|explain\w*)\b"
ASSISTANT_SAID = re.compile(rf"\b(?:you|nimbus|the assistant)\s+{SAYING}", re.I)
CUSTOMER_SAID = re.compile(rf"\bI\s+{SAYING}", re.I)
COMMON_WORD_MIN_ROWS = 1000  # below this, scoring every match is cheap: keep every word
COUNT_CAP = 1000  # a word's rows are counted up to this many: the cost stays flat past it
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
    columns: tuple  # selected for each candidate: id, text parts..., created_at
    scoped: Callable  # select -> the same select joined and filtered to the session's scope
    key: tuple | None = None  # names the scope, so its row count can be kept between searches
    joined: Callable = lambda statement: statement  # what else a candidate row brings along


def holding(indexed: Indexed, word: str, statement, name: str):
    """`statement` narrowed to rows holding this word (stemmed, as the index stores it), the index
    driving: SQLite walks the word's FTS5 entries newest first, so a LIMIT stops it early."""
    if db.engine.dialect.name == "postgresql":
        return statement.where(func.to_tsvector(literal_column("'english'"), indexed.text).op("@@")(
            func.plainto_tsquery(literal_column("'english'"), word))), indexed.id.desc()
    fts = table(indexed.fts_name, column("rowid"))
    return (statement.join(fts, fts.c.rowid == indexed.id)
            .where(text(f"{indexed.fts_name} MATCH :{name}").bindparams(**{name: f'"{word}"'})),
            fts.c.rowid.desc())


def on_dates(indexed: Indexed, ranges):
    return or_(*(and_(indexed.created >= start, indexed.created < end) for start, end in ranges))


def scope_rows(indexed: Indexed) -> int:
    """Rows in the scope (statistics counts them in its own statement)."""
    counted, finish = row_count(indexed)
    return finish(*db.session.execute(select(counted.c.scope_rows, counted.c.scope_top)).one())


def row_count(indexed: Indexed) -> tuple:
    """(a subquery of one row, scope_rows and scope_top, and the function that turns its values
    into the scope's row count). A named scope is counted once, then topped up with the rows
    added since (a range on the id index), and recounted every RECOUNT_SECONDS so deletions show:
    the count only feeds IDF, and counting every row on every search grew with the scope."""
    key = None if indexed.key is None else (str(db.engine.url), indexed.fts_name, indexed.key)
    known, now = TOTALS.get(key) if key else None, time.monotonic()
    again = key is None or known is None or now - known[2] > RECOUNT_SECONDS or known[1] is None
    counted = indexed.scoped(
        select(func.count().label("scope_rows"), func.max(indexed.id).label("scope_top"))
        .select_from(indexed.id.table).where(*([] if again else [indexed.id > known[1]]))
    ).subquery()

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
    return counted, finish


def statistics(indexed: Indexed, words: list[str], ranges) -> ScopeStatistics:
    """The scope's row count, how many of its rows hold each word (up to COUNT_CAP, or half the
    scope) and how many fall on the dates: one statement, each count driven by the index. The
    counts stop at COUNT_CAP and are cut to half the scope once its count is known, the same
    figure as stopping there."""
    counted, finish = row_count(indexed)

    def count(rows, order):  # the order makes SQLite walk the index, not the scope
        return select(func.count()).select_from(
            indexed.scoped(rows).order_by(order).limit(COUNT_CAP).subquery()).scalar_subquery()
    base = select(indexed.id).select_from(indexed.id.table)
    counts = [count(*holding(indexed, word, base, f"w{i}")) for i, word in enumerate(words)]
    if ranges:
        counts.append(count(base.where(on_dates(indexed, ranges)), indexed.id.desc()))
    rows, top, *found = db.session.execute(
        select(counted.c.scope_rows, counted.c.scope_top, *counts)).one()
    total = finish(rows, top)
    half = total // 2 + 1 if total >= COMMON_WORD_MIN_ROWS else None
    cap = min(half or COUNT_CAP, COUNT_CAP)
    found = [min(n, cap) for n in found]
    held = dict(zip(words, found))
    total = max([total, *found])  # a count kept from before a purge never undercuts a word's
    stats = ScopeStatistics(total, held, found[-1] if ranges else 0, list(ranges))
    if half and half <= cap:  # over half the rows: IDF below ln 2, and costly to score
        stats.holding = {w: n for w, n in held.items() if n < half}
    return stats


def candidates(indexed: Indexed, words: list[str], ranges, limit: int,
               held: dict[str, int] | None = None) -> list:
    """Rows of the scope holding a query word, the rarest word's first and each word's newest
    first, `limit` in all; then rows on the named dates (newest first): each as (id, *text
    parts, created_at, ...). Each query stops at its limit, whatever the size of the scope."""
    found = {}
    for i, word in enumerate(sorted(words, key=lambda w: (held or {}).get(w, 0))):
        if len(found) >= limit:
            break
        statement, newest_first = holding(indexed, word, select(*indexed.columns), f"c{i}")
        keep(found, db.session.execute(indexed.joined(indexed.scoped(statement))
                                       .order_by(newest_first).limit(limit - len(found))))
    if ranges:
        on_the_dates = indexed.scoped(select(*indexed.columns).where(on_dates(indexed, ranges)))
        keep(found, db.session.execute(indexed.joined(on_the_dates).order_by(indexed.id.desc())
                                       .limit(limit)))
    return list(found.values())


def keep(found: dict, result) -> None:
    """Each new row, by id, as a named tuple: the same fields as the result's rows, read by name
    at a tuple's speed (a Row's named access costs about a microsecond; hundreds per search)."""
    record = row_type(tuple(result.keys()))
    for row in result:
        if row[0] not in found:
            found[row[0]] = record._make(row)


@lru_cache(maxsize=64)
def row_type(fields: tuple[str, ...]):
    return namedtuple("Found", fields, rename=True)


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
    rows = candidates(indexed, words, ranges if stats.on_date else [], limit, stats.holding)
    pool = [Candidate(row[0], text_of(row), row.created_at) for row in rows]
    return bm25_scores(words, stats, pool), {row[0]: row for row in rows}


def memories_indexed(condition, key: tuple | None = None) -> Indexed:
    return Indexed("memories_fts", Memory.id, Memory.content, Memory.created_at,
                   (Memory.id, Memory.content, Memory.created_at, Memory.embedding,
                    Memory.embedding_model), lambda statement: statement.where(condition), key)


def memory_matches(condition, query: str, limit: int, key: tuple | None = None
                   ) -> tuple[dict[int, float], list]:
    """({id: keyword score}, [(id, embedding, embedding_model)]) of the memories meeting
    `condition` (the session's scope, named by `key`) that match the query: the vectors come
    along for free."""
    scores, rows = scored(memories_indexed(condition, key), query, limit, lambda row: row.content)
    return scores, [(row.id, row.embedding, row.embedding_model) for row in rows.values()]


def turns_indexed(user) -> Indexed:
    of_its_conversation = Conversation.id == Turn.conversation_id
    own = and_(Conversation.user_id == user.id, Conversation.tenant_id == user.tenant_id,
               Conversation.deleted_at.is_(None), Turn.outcome != "pending")

    def scoped(statement):  # the conditions are built once, not for every statement
        return statement.join(Conversation, of_its_conversation).where(own)

    def with_vector(statement):  # last, so the index still drives the query
        return statement.outerjoin(TurnVector, TurnVector.turn_id == Turn.id)
    return Indexed("turns_fts", Turn.id, Turn.question + " " + Turn.answer, Turn.created_at,
                   (Turn.id, Turn.question, Turn.answer, Turn.created_at, TurnVector.embedding,
                    TurnVector.embedding_model), scoped, ("user", user.tenant_id, user.id),
                   with_vector)


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
    return scores, [(row.id, row.embedding, row.embedding_model) for row in rows.values()]


def asked_and_answered(row) -> str:
    return f"{row.question}\n{row.answer}"


def answer_twice(row) -> str:
    return f"{row.question}\n{row.answer}\n{row.answer}"


def question_twice(row) -> str:
    return f"{row.question}\n{row.question}\n{row.answer}"


def turn_scores(user, query: str, limit: int) -> dict[int, float]:
    """{turn id: keyword score} of this person's own finished turns matching the query."""
    return turn_matches(user, query, limit)[0]
