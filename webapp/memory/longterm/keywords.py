"""Keyword search within a scope: candidates from SQLite FTS5 or PostgreSQL full text (the
indexes are in keyword_index.py), scored by BM25 with the scope's own statistics (ranking.py).
"""
import re
from dataclasses import dataclass
from typing import Callable

from sqlalchemy import and_, column, func, literal_column, or_, select, table, text

from ...extensions import db
from ...local_time import reader_zone, stored, wall_clock_now
from ...models import Conversation, Turn
from .dates import find_dates
from . import keyword_index  # noqa: F401 (its listeners create the indexes with the tables)
from .models import Memory
from .ranking import Candidate, ScopeStatistics, bm25_scores

STOPWORDS = set("""a an the is are was were be been am i me my we our you your it its to of in on
for and or but with what which who whom how when where why do does did can could would should will
please tell know about that this there here any some have has had not no so if as at by from""".split())
MAX_QUERY_WORDS = 12
SAYING = r"(?:\w+\s+)?(?:said|say|told|tell|recommend\w*|suggest\w*|advis\w*|mention\w*|explain\w*)\b"
ASSISTANT_SAID = re.compile(rf"\b(?:you|nimbus|the assistant)\s+{SAYING}", re.I)
CUSTOMER_SAID = re.compile(rf"\bI\s+{SAYING}", re.I)
COMMON_WORD_MIN_ROWS = 1000  # below this, scoring every match is cheap: keep every word

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


def word_match(indexed: Indexed, word: str, name: str):
    """Condition: the row holds this word (stemmed, as the index stores it)."""
    if db.engine.dialect.name == "postgresql":
        return func.to_tsvector(literal_column("'english'"), indexed.text).op("@@")(
            func.plainto_tsquery(literal_column("'english'"), word))
    return indexed.id.in_(select(literal_column("rowid")).select_from(table(indexed.fts_name))
                          .where(text(f"{indexed.fts_name} MATCH :{name}")
                                 .bindparams(**{name: f'"{word}"'})))


def any_match(indexed: Indexed, words: list[str], name: str = "match"):
    """(join target or None, condition, order): rows holding any of the words (stemmed, as the
    index stores them), best first by the database's own rank (only used to choose the
    candidates when there are too many). `name` keeps bound values apart in one statement."""
    if db.engine.dialect.name == "postgresql":
        vector = func.to_tsvector(literal_column("'english'"), indexed.text)
        query = func.to_tsquery(literal_column("'english'"), " | ".join(words))
        return None, vector.op("@@")(query), func.ts_rank(vector, query).desc()
    fts = table(indexed.fts_name, column("rowid"))
    match = text(f"{indexed.fts_name} MATCH :{name}").bindparams(
        **{name: " OR ".join(f'"{w}"' for w in words)})
    return (fts, fts.c.rowid == indexed.id), match, text(f"bm25({indexed.fts_name})")


def on_dates(indexed: Indexed, ranges):
    return or_(*(and_(indexed.created >= start, indexed.created < end) for start, end in ranges))


def statistics(indexed: Indexed, words: list[str], ranges) -> ScopeStatistics:
    """The scope's row count, then how many of its rows hold each word and fall on the dates (one
    statement, driven by the index; in a large scope a count stops past half of it)."""
    total = db.session.scalar(indexed.scoped(select(func.count()).select_from(indexed.id.table)))
    total = total or 0
    cap = total // 2 + 1 if total >= COMMON_WORD_MIN_ROWS else None

    def count(join, *conditions):
        rows = select(indexed.id).select_from(indexed.id.table)
        if join is not None:
            rows = rows.join(*join)
        rows = indexed.scoped(rows.where(*conditions))
        rows = rows.limit(cap) if cap else rows
        return select(func.count()).select_from(rows.subquery()).scalar_subquery()
    counts = [count(None, word_match(indexed, word, f"w{i}")) for i, word in enumerate(words)]
    if ranges:
        counts.append(count(None, on_dates(indexed, ranges)))
    found = list(db.session.execute(select(*counts)).one()) if counts else []
    holding = dict(zip(words, found))
    stats = ScopeStatistics(total, holding, found[-1] if ranges else 0, list(ranges))
    if cap:  # over half the rows: IDF below ln 2, and costly to score
        stats.holding = {w: n for w, n in holding.items() if n < cap}
    return stats


def candidates(indexed: Indexed, words: list[str], ranges, limit: int) -> list:
    """Rows of the scope holding a query word (the database's best `limit`), then rows on the
    named dates (newest first): each as (id, *text parts, created_at, ...)."""
    found = {}
    if words:
        join, match, order = any_match(indexed, words)
        statement = select(*indexed.columns)
        if join is not None:
            statement = statement.join(*join)
        for row in db.session.execute(indexed.scoped(statement.where(match)).order_by(order)
                                      .limit(limit)):
            found[row[0]] = row
    if ranges:
        for row in db.session.execute(indexed.scoped(select(*indexed.columns).where(
                on_dates(indexed, ranges))).order_by(indexed.id.desc()).limit(limit)):
            found.setdefault(row[0], row)
    return list(found.values())


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
    rows = candidates(indexed, words, ranges if stats.on_date else [], limit)
    pool = [Candidate(row[0], text_of(row), row.created_at) for row in rows]
    return bm25_scores(words, stats, pool), {row[0]: row for row in rows}


def memories_indexed(condition) -> Indexed:
    return Indexed("memories_fts", Memory.id, Memory.content, Memory.created_at,
                   (Memory.id, Memory.content, Memory.created_at, Memory.embedding,
                    Memory.embedding_model), lambda statement: statement.where(condition))


def memory_matches(condition, query: str, limit: int) -> tuple[dict[int, float], list]:
    """({id: keyword score}, [(id, embedding, embedding_model)]) of the memories meeting
    `condition` (the session's scope) that match the query: the vectors come along for free."""
    scores, rows = scored(memories_indexed(condition), query, limit, lambda row: row.content)
    return scores, [(row.id, row.embedding, row.embedding_model) for row in rows.values()]


def turns_indexed(user) -> Indexed:
    def scoped(statement):
        return statement.join(Conversation, Conversation.id == Turn.conversation_id).where(
            Conversation.user_id == user.id, Conversation.tenant_id == user.tenant_id,
            Conversation.deleted_at.is_(None), Turn.outcome != "pending")
    return Indexed("turns_fts", Turn.id, Turn.question + " " + Turn.answer, Turn.created_at,
                   (Turn.id, Turn.question, Turn.answer, Turn.created_at), scoped)


def turn_scores(user, query: str, limit: int) -> dict[int, float]:
    """{turn id: keyword score} of this person's own finished turns matching the query. A
    question about who said it ("what did you suggest…", "what did I tell you…") counts the words
    of that speaker's side twice (a BM25F-style field weight)."""
    if ASSISTANT_SAID.search(query or ""):
        query = re.sub(r"\b(?:nimbus|assistant)\b", " ", query, flags=re.I)
        return scored(turns_indexed(user), query, limit,
                      lambda row: f"{row.question}\n{row.answer}\n{row.answer}")[0]
    if CUSTOMER_SAID.search(query or ""):
        return scored(turns_indexed(user), query, limit,
                      lambda row: f"{row.question}\n{row.question}\n{row.answer}")[0]
    return scored(turns_indexed(user), query, limit,
                  lambda row: f"{row.question}\n{row.answer}")[0]
