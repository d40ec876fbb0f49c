"""Keyword search: SQLite FTS5 in the embedded default, PostgreSQL full text at scale.

The indexes are created next to the tables (idempotent, so an existing database gains them on the
next `init-db`) and kept current by the database itself: FTS5 triggers, or a GIN expression index.
"""
import re
from dataclasses import dataclass
from typing import Callable

from sqlalchemy import and_, column, event, func, literal_column, or_, select, table, text

from ...extensions import db
from ...models import Conversation, Turn, utcnow
from .dates import find_dates
from .models import Memory
from .ranking import Candidate, ScopeStatistics, bm25_scores

STOPWORDS = set("""a an the is are was were be been am i me my we our you your it its to of in on
for and or but with what which who whom how when where why do does did can could would should will
please tell know about that this there here any some have has had not no so if as at by from""".split())
MAX_QUERY_WORDS = 12
COMMON_WORD_MIN_ROWS = 1000  # below this, scoring every match is cheap: keep every word

SQLITE_DDL = {
    "memories_fts": ("memories", "content"),
    "turns_fts": ("turns", "question, answer"),
}
POSTGRES_DDL = [
    "CREATE INDEX IF NOT EXISTS ix_memories_fulltext ON memories "
    "USING gin (to_tsvector('english', content))",
    "CREATE INDEX IF NOT EXISTS ix_turns_fulltext ON turns "
    "USING gin (to_tsvector('english', question || ' ' || answer))",
]


def sqlite_statements(name: str, base: str, columns: str) -> list[str]:
    new = ", ".join(f"new.{c.strip()}" for c in columns.split(","))
    old = ", ".join(f"old.{c.strip()}" for c in columns.split(","))
    return [
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {name} USING fts5({columns}, content='{base}', "
        f"content_rowid='id', tokenize='porter unicode61')",
        f"CREATE TRIGGER IF NOT EXISTS {name}_insert AFTER INSERT ON {base} BEGIN "
        f"INSERT INTO {name}(rowid, {columns}) VALUES (new.id, {new}); END",
        f"CREATE TRIGGER IF NOT EXISTS {name}_delete AFTER DELETE ON {base} BEGIN "
        f"INSERT INTO {name}({name}, rowid, {columns}) VALUES ('delete', old.id, {old}); END",
        f"CREATE TRIGGER IF NOT EXISTS {name}_update AFTER UPDATE OF {columns} ON {base} BEGIN "
        f"INSERT INTO {name}({name}, rowid, {columns}) VALUES ('delete', old.id, {old}); "
        f"INSERT INTO {name}(rowid, {columns}) VALUES (new.id, {new}); END",
    ]


@event.listens_for(db.metadata, "after_create")
def create_keyword_indexes(metadata, connection, **kw):
    """Runs after every create_all; creates what is missing and indexes rows that predate it."""
    if connection.dialect.name == "sqlite":
        for name, (base, columns) in SQLITE_DDL.items():
            existed = connection.execute(text(
                "SELECT 1 FROM sqlite_master WHERE name = :name"), {"name": name}).first()
            for statement in sqlite_statements(name, base, columns):
                connection.exec_driver_sql(statement)
            if not existed:
                connection.exec_driver_sql(f"INSERT INTO {name}({name}) VALUES ('rebuild')")
    elif connection.dialect.name == "postgresql":
        for statement in POSTGRES_DDL:
            connection.exec_driver_sql(statement)


@event.listens_for(db.metadata, "before_drop")
def drop_keyword_indexes(metadata, connection, **kw):
    """A dropped table takes its triggers along; its FTS5 index must go too, or it would go stale."""
    if connection.dialect.name == "sqlite":
        for name in SQLITE_DDL:
            connection.exec_driver_sql(f"DROP TABLE IF EXISTS {name}")


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


def word_match(indexed: Indexed, word: str):
    """Condition: the row holds this word (stemmed, as the index stores it)."""
    if db.engine.dialect.name == "postgresql":
        return func.to_tsvector(literal_column("'english'"), indexed.text).op("@@")(
            func.plainto_tsquery(literal_column("'english'"), word))
    return indexed.id.in_(select(literal_column("rowid")).select_from(table(indexed.fts_name))
                          .where(text(f"{indexed.fts_name} MATCH :w_{word}")
                                 .bindparams(**{f"w_{word}": f'"{word}"'})))


def any_match(indexed: Indexed, words: list[str]):
    """(join target or None, condition, order): rows holding any of the words, best first by
    the database's own rank (only used to choose the candidates when there are too many)."""
    if db.engine.dialect.name == "postgresql":
        vector = func.to_tsvector(literal_column("'english'"), indexed.text)
        query = func.to_tsquery(literal_column("'english'"), " | ".join(words))
        return None, vector.op("@@")(query), func.ts_rank(vector, query).desc()
    fts = table(indexed.fts_name, column("rowid"))
    match = text(f"{indexed.fts_name} MATCH :match").bindparams(
        match=" OR ".join(f'"{w}"' for w in words))
    return (fts, fts.c.rowid == indexed.id), match, text(f"bm25({indexed.fts_name})")


def on_dates(indexed: Indexed, ranges):
    return or_(*(and_(indexed.created >= start, indexed.created < end) for start, end in ranges))


def statistics(indexed: Indexed, words: list[str], ranges) -> ScopeStatistics:
    """The scope's row count, how many of its rows hold each word and fall on the dates: one
    statement."""
    def count(*conditions):
        return indexed.scoped(select(func.count()).select_from(indexed.id.table)
                              .where(*conditions)).scalar_subquery()
    counts = [count()] + [count(word_match(indexed, w)) for w in words]
    if ranges:
        counts.append(count(on_dates(indexed, ranges)))
    total, *rest = db.session.execute(select(*counts)).one()
    holding = dict(zip(words, rest))
    stats = ScopeStatistics(total or 0, holding, rest[-1] if ranges else 0, list(ranges))
    if stats.rows >= COMMON_WORD_MIN_ROWS:  # over half the rows: IDF below ln 2, costly to score
        stats.holding = {w: n for w, n in holding.items() if n <= stats.rows // 2}
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
    ranges, rest = find_dates(query, utcnow())
    words = query_words(rest)
    if not words and not ranges:
        return {}, {}
    stats = statistics(indexed, words, ranges)
    words = [w for w in words if w in stats.holding]
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
            Turn.outcome != "pending")
    return Indexed("turns_fts", Turn.id, Turn.question + " " + Turn.answer, Turn.created_at,
                   (Turn.id, Turn.question, Turn.answer, Turn.created_at), scoped)


def turn_scores(user, query: str, limit: int) -> dict[int, float]:
    """{turn id: keyword score} of this person's own finished turns matching the query."""
    return scored(turns_indexed(user), query, limit,
                  lambda row: f"{row.question}\n{row.answer}")[0]
