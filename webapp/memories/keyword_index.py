"""The keyword indexes: SQLite FTS5 in the embedded default, PostgreSQL full text at scale.

They are created next to the tables (idempotent, so an existing database gains them on the next
`init-db`) and kept current by the database itself: FTS5 triggers, or a GIN expression index.
Deleting a row deletes its index entry (the triggers; PostgreSQL indexes the row itself).
"""
from sqlalchemy import event, text

from ..extensions import db

SQLITE_DDL = {
    "memories_fts": ("memories", "content"),
    "turns_fts": ("turns", "question, answer"),
}
POSTGRES_DDL = [
    "CREATE INDEX IF NOT EXISTS ix_memories_fulltext ON memories "
    "USING gin (to_tsvector('english', content))",
    "CREATE INDEX IF NOT EXISTS ix_turns_fulltext ON turns "  # keywords.TURN_TEXT asks for it
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


def drop_keyword_indexes(metadata, connection, **kw):
    """A dropped table takes its triggers along; its FTS5 index must go too, or it would go stale."""
    if connection.dialect.name == "sqlite":
        for name in SQLITE_DDL:
            connection.exec_driver_sql(f"DROP TABLE IF EXISTS {name}")


def forget_deleted_words() -> None:
    """SQLite: an FTS5 delete only records that a row's words are gone; the words stay in the
    index's older segments until they merge. Merge them now ('optimize'; freed pages are zeroed,
    secure_delete), then write the WAL back into the file and empty it. PostgreSQL indexes the
    rows themselves: nothing to do."""
    if db.engine.dialect.name != "sqlite":
        return
    with db.engine.begin() as connection:
        for name in SQLITE_DDL:
            connection.exec_driver_sql(f"INSERT INTO {name}({name}) VALUES ('optimize')")
    with db.engine.connect() as connection:
        connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


LISTENERS = ((db.metadata, "after_create", create_keyword_indexes),
             (db.metadata, "before_drop", drop_keyword_indexes))


def listen() -> None:
    """Create and drop the keyword indexes with the tables (once per process)."""
    for target, name, listener in LISTENERS:
        if not event.contains(target, name, listener):
            event.listen(target, name, listener)
