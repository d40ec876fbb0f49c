"""owner-scoped keyword index: a word is looked up for one person or one session's scope, not
walked through every customer's rows of the shop and filtered afterwards. Turns keep their
conversation's person (owner_id, filled in by the database on insert); the FTS5 tables gain a
column naming whose a row is, and PostgreSQL's GIN indexes a lexeme saying the same. Existing
rows are indexed again in batches, with progress in the log; every row is kept

Revision ID: 0036_owner_scoped_keyword_index
Revises: 0021_sidebar_page_indexes
"""
import logging

import sqlalchemy as sa
from alembic import op


revision = '0036_owner_scoped_keyword_index'
down_revision = '0033_import_times'
branch_labels = None
depends_on = None

log = logging.getLogger('alembic.runtime.migration')
BATCH = 20_000

# The DDL as it is at this revision (webapp/memories/search/keyword_index.py keeps the current copy).
SQLITE_SCOPE_TOKEN = ("'t' || {t}tenant_id || CASE WHEN {t}memorable_type IS NULL THEN 'w0' "
                      "ELSE substr({t}memorable_type, 1, 1) || coalesce({t}memorable_id, 0) END "
                      "|| 's' || coalesce({t}subject_id, 0)")
POSTGRES_SCOPE_TOKEN = ("'t' || {t}tenant_id::text || CASE WHEN {t}memorable_type IS NULL THEN "
                        "'w0' ELSE left({t}memorable_type, 1) || coalesce({t}memorable_id, 0)::text "
                        "END || 's' || coalesce({t}subject_id, 0)::text")
POSTGRES_TURN_VECTOR = ("(to_tsvector('english', {t}question || ' ' || {t}answer) || "
                        "array_to_tsvector(ARRAY['owner ' || coalesce({t}owner_id, 0)::text]))")
POSTGRES_MEMORY_VECTOR = ("(to_tsvector('english', {t}content) || "
                          f"array_to_tsvector(ARRAY['scope ' || {POSTGRES_SCOPE_TOKEN}]))")
SCOPE_COLUMNS = "content, tenant_id, memorable_type, memorable_id, subject_id"
OWNER_OF = "(SELECT user_id FROM conversations WHERE id = new.conversation_id)"
SQLITE_DDL = [
    "CREATE TRIGGER IF NOT EXISTS turns_owner AFTER INSERT ON turns WHEN new.owner_id IS NULL "
    f"BEGIN UPDATE turns SET owner_id = {OWNER_OF} WHERE id = new.id; END",
    "CREATE VIRTUAL TABLE IF NOT EXISTS turns_fts USING fts5(question, answer, owner_id, "
    "content='turns', content_rowid='id', tokenize='porter unicode61')",
    "CREATE TRIGGER IF NOT EXISTS turns_fts_insert AFTER INSERT ON turns BEGIN "
    "INSERT INTO turns_fts(rowid, question, answer, owner_id) VALUES (new.id, new.question, "
    f"new.answer, coalesce(new.owner_id, {OWNER_OF})); END",
    "CREATE TRIGGER IF NOT EXISTS turns_fts_delete AFTER DELETE ON turns BEGIN "
    "INSERT INTO turns_fts(turns_fts, rowid, question, answer, owner_id) VALUES ('delete', "
    "old.id, old.question, old.answer, old.owner_id); END",
    "CREATE TRIGGER IF NOT EXISTS turns_fts_update AFTER UPDATE OF question, answer, owner_id "
    "ON turns WHEN old.owner_id IS NOT NULL BEGIN "
    "INSERT INTO turns_fts(turns_fts, rowid, question, answer, owner_id) VALUES ('delete', "
    "old.id, old.question, old.answer, old.owner_id); "
    "INSERT INTO turns_fts(rowid, question, answer, owner_id) VALUES (new.id, new.question, "
    "new.answer, new.owner_id); END",
    # Contentless: the token is no column of memories (a view naming it would break SQLite's
    # table rebuilds), so each trigger hands the index the row's words and token itself.
    "CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(content, scope, content='', "
    "tokenize='porter unicode61')",
    "CREATE TRIGGER IF NOT EXISTS memories_fts_insert AFTER INSERT ON memories BEGIN "
    "INSERT INTO memories_fts(rowid, content, scope) VALUES (new.id, new.content, "
    f"{SQLITE_SCOPE_TOKEN.format(t='new.')}); END",
    "CREATE TRIGGER IF NOT EXISTS memories_fts_delete AFTER DELETE ON memories BEGIN "
    "INSERT INTO memories_fts(memories_fts, rowid, content, scope) VALUES ('delete', old.id, "
    f"old.content, {SQLITE_SCOPE_TOKEN.format(t='old.')}); END",
    f"CREATE TRIGGER IF NOT EXISTS memories_fts_update AFTER UPDATE OF {SCOPE_COLUMNS} "
    "ON memories BEGIN "
    "INSERT INTO memories_fts(memories_fts, rowid, content, scope) VALUES ('delete', old.id, "
    f"old.content, {SQLITE_SCOPE_TOKEN.format(t='old.')}); "
    "INSERT INTO memories_fts(rowid, content, scope) VALUES (new.id, new.content, "
    f"{SQLITE_SCOPE_TOKEN.format(t='new.')}); END",
]
POSTGRES_DDL = [
    "CREATE OR REPLACE FUNCTION turns_owner() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "IF NEW.owner_id IS NULL THEN SELECT user_id INTO NEW.owner_id FROM conversations "
    "WHERE id = NEW.conversation_id; END IF; RETURN NEW; END $$",
    "DROP TRIGGER IF EXISTS turns_owner ON turns",
    "CREATE TRIGGER turns_owner BEFORE INSERT ON turns FOR EACH ROW EXECUTE FUNCTION turns_owner()",
    "CREATE INDEX IF NOT EXISTS ix_memories_fulltext ON memories "
    f"USING gin ({POSTGRES_MEMORY_VECTOR.format(t='')})",
    f"CREATE INDEX IF NOT EXISTS ix_turns_fulltext ON turns USING gin ({POSTGRES_TURN_VECTOR.format(t='')})",
]
# What 0001 made, for the way down.
OLD_FTS = {"memories_fts": ("memories", "content"), "turns_fts": ("turns", "question, answer")}
OLD_POSTGRES = [
    "CREATE INDEX IF NOT EXISTS ix_memories_fulltext ON memories "
    "USING gin (to_tsvector('english', content))",
    "CREATE INDEX IF NOT EXISTS ix_turns_fulltext ON turns "
    "USING gin (to_tsvector('english', question || ' ' || answer))",
]


def in_batches(connection, table: str, what: str, statement: str) -> None:
    """Run `statement` (bound :low, :high) over the table's ids a batch at a time, logging how
    far it got."""
    low, high = connection.execute(sa.text(f"SELECT min(id), max(id) FROM {table}")).one()
    if low is None:
        return
    for start in range(low, high + 1, BATCH):
        connection.execute(sa.text(statement), {"low": start, "high": start + BATCH})
        log.info("%s: ids up to %d of %d", what, min(start + BATCH - 1, high), high)


def upgrade():
    connection = op.get_bind()
    op.add_column('turns', sa.Column('owner_id', sa.Integer(), nullable=True))
    in_batches(connection, "turns", "turns' owners",  # only rows still without one
               "UPDATE turns SET owner_id = (SELECT user_id FROM conversations "
               "WHERE conversations.id = turns.conversation_id) "
               "WHERE id >= :low AND id < :high AND owner_id IS NULL")
    if connection.dialect.name == "sqlite":
        for name in OLD_FTS:  # its triggers first: they write into the table
            for event in ("insert", "delete", "update"):
                op.execute(f"DROP TRIGGER IF EXISTS {name}_{event}")
            op.execute(f"DROP TABLE IF EXISTS {name}")
        for statement in SQLITE_DDL:
            op.execute(statement)
        in_batches(connection, "turns", "turns indexed with their owner",
                   "INSERT INTO turns_fts(rowid, question, answer, owner_id) SELECT id, question, "
                   "answer, owner_id FROM turns WHERE id >= :low AND id < :high")
        in_batches(connection, "memories", "memories indexed with their scope",
                   "INSERT INTO memories_fts(rowid, content, scope) SELECT id, content, "
                   f"{SQLITE_SCOPE_TOKEN.format(t='')} FROM memories WHERE id >= :low AND id < :high")
        for name in OLD_FTS:  # one segment each: a scoped lookup skips through it fastest
            op.execute(f"INSERT INTO {name}({name}) VALUES ('optimize')")
    elif connection.dialect.name == "postgresql":
        op.execute("DROP INDEX IF EXISTS ix_memories_fulltext")
        op.execute("DROP INDEX IF EXISTS ix_turns_fulltext")
        for statement in POSTGRES_DDL:
            op.execute(statement)


def downgrade():
    connection = op.get_bind()
    if connection.dialect.name == "sqlite":
        for name in OLD_FTS:
            for event in ("insert", "delete", "update"):
                op.execute(f"DROP TRIGGER IF EXISTS {name}_{event}")
            op.execute(f"DROP TABLE IF EXISTS {name}")
        op.execute("DROP TRIGGER IF EXISTS turns_owner")
        with op.batch_alter_table('turns') as batch_op:
            batch_op.drop_column('owner_id')
        for name, (base, columns) in OLD_FTS.items():
            new = ", ".join(f"new.{c.strip()}" for c in columns.split(","))
            old = ", ".join(f"old.{c.strip()}" for c in columns.split(","))
            for statement in [
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {name} USING fts5({columns}, content='{base}', "
                f"content_rowid='id', tokenize='porter unicode61')",
                f"CREATE TRIGGER IF NOT EXISTS {name}_insert AFTER INSERT ON {base} BEGIN "
                f"INSERT INTO {name}(rowid, {columns}) VALUES (new.id, {new}); END",
                f"CREATE TRIGGER IF NOT EXISTS {name}_delete AFTER DELETE ON {base} BEGIN "
                f"INSERT INTO {name}({name}, rowid, {columns}) VALUES ('delete', old.id, {old}); END",
                f"CREATE TRIGGER IF NOT EXISTS {name}_update AFTER UPDATE OF {columns} ON {base} BEGIN "
                f"INSERT INTO {name}({name}, rowid, {columns}) VALUES ('delete', old.id, {old}); "
                f"INSERT INTO {name}(rowid, {columns}) VALUES (new.id, {new}); END",
                f"INSERT INTO {name}({name}) VALUES ('rebuild')"]:
                op.execute(statement)
    else:
        op.execute("DROP INDEX IF EXISTS ix_memories_fulltext")
        op.execute("DROP INDEX IF EXISTS ix_turns_fulltext")
        op.execute("DROP TRIGGER IF EXISTS turns_owner ON turns")
        op.execute("DROP FUNCTION IF EXISTS turns_owner()")
        op.drop_column('turns', 'owner_id')
        for statement in OLD_POSTGRES:
            op.execute(statement)
