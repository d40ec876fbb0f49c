"""Keyword search: SQLite FTS5 in the embedded default, PostgreSQL full text at scale.

The indexes are created next to the tables (idempotent, so an existing database gains them on the
next `init-db`) and kept current by the database itself: FTS5 triggers, or a GIN expression index.
"""
import re

from sqlalchemy import column, event, func, literal_column, select, table, text

from ...extensions import db
from ...models import Conversation, Turn
from .models import Memory

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


def ranked(statement_for, fts_name: str, indexed, id_column, query: str, limit: int) -> list:
    """Rows best match first; any word may match (OR), the ranking rewards matching more."""
    words = informative(query_words(query), fts_name, indexed, id_column)
    if not words:
        return []
    if db.engine.dialect.name == "postgresql":
        statement = statement_for(postgres_match, " | ".join(words))
    else:
        statement = statement_for(sqlite_match, " OR ".join(f'"{w}"' for w in words))
    return list(db.session.execute(statement.limit(limit)))


def informative(words: list[str], fts_name: str, indexed, id_column) -> list[str]:
    """Drop words found in over half of all rows: their IDF is below ln 2, they barely rank, and
    scoring every row they match is what would make a search slow at scale. One statement."""
    rows = select(func.coalesce(func.max(id_column), 0)).scalar_subquery()
    enough = rows.op("/")(2) + 1  # integer division in SQLite and PostgreSQL alike
    counts = [select(func.count()).select_from(matching(word, fts_name, indexed, id_column)
                                               .limit(enough).subquery()).scalar_subquery()
              for word in words]
    total, *hits = db.session.execute(select(rows, *counts)).one()
    if (total or 0) < COMMON_WORD_MIN_ROWS:
        return words
    return [word for word, count in zip(words, hits) if count <= total // 2]


def matching(word: str, fts_name: str, indexed, id_column):
    """Rows containing one word (stemmed, as the index stores it)."""
    if db.engine.dialect.name == "postgresql":
        vector = func.to_tsvector(literal_column("'english'"), indexed)
        return select(id_column).where(vector.op("@@")(
            func.plainto_tsquery(literal_column("'english'"), word)))
    return (select(literal_column("rowid")).select_from(table(fts_name))
            .where(text(f"{fts_name} MATCH :word_{word}").bindparams(**{f"word_{word}": f'"{word}"'})))


def sqlite_match(fts_name: str, indexed, match: str):
    fts = table(fts_name, column("rowid"))
    return (fts, fts.c.rowid, text(f"{fts_name} MATCH :match").bindparams(match=match),
            text(f"bm25({fts_name})"))


def postgres_match(fts_name: str, indexed, match: str):
    vector = func.to_tsvector(literal_column("'english'"), indexed)
    query = func.to_tsquery(literal_column("'english'"), match)
    return None, None, vector.op("@@")(query), func.ts_rank(vector, query).desc()


def memory_matches(condition, query: str, limit: int) -> list:
    """(id, embedding, embedding_model) of the memories best matching the query among those
    meeting `condition` (the session's scope): the vectors come along for free."""
    def statement(match, expression):
        fts, rowid, matches, order = match("memories_fts", Memory.content, expression)
        base = select(Memory.id, Memory.embedding, Memory.embedding_model)
        if fts is not None:
            base = base.join(fts, rowid == Memory.id)
        return base.where(matches, condition).order_by(order)
    return ranked(statement, "memories_fts", Memory.content, Memory.id, query, limit)


def turn_ids(user, query: str, limit: int) -> list[int]:
    """Finished turns of this person's own conversations matching the query."""
    def statement(match, expression):
        fts, rowid, matches, order = match("turns_fts", Turn.question + " " + Turn.answer,
                                           expression)
        base = select(Turn.id).join(Conversation, Conversation.id == Turn.conversation_id)
        if fts is not None:
            base = base.join(fts, rowid == Turn.id)
        return base.where(matches, Conversation.user_id == user.id,
                          Conversation.tenant_id == user.tenant_id,
                          Turn.outcome != "pending").order_by(order)
    return [row[0] for row in ranked(statement, "turns_fts", Turn.question + " " + Turn.answer,
                                     Turn.id, query, limit)]
