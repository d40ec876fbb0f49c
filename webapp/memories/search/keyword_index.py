"""The keyword indexes: SQLite FTS5 in the embedded default, PostgreSQL full text at scale.

Each row is indexed with whose it is, so a word is looked up for one scope without walking the
shop's other customers' rows: a turn with its owner (turns.owner_id, the conversation's person,
filled in by the database on insert), a memory with its scope token (tenant, what it is about,
whom it applies to; see scope_token). SQLite matches the token in its own FTS5 column beside the
words; PostgreSQL holds it as a lexeme no text can make (it has a space) in the same GIN index,
whose fast scan skips a common word's postings to the scope's; new rows go straight into it (no
pending list, which every search read whole first: 1.5 to 6 ms a word at a million turns). A
turn also keeps its words as a column (search_words) beside ix_turns_owner_newest, so a word held
by many of a busy person's turns is found among their newest (word_walks.py). The
indexes are created next to the tables (idempotent, so an existing database gains them on the
next `init-db`) and kept current by the database itself: triggers, or the GIN expression index.
"""
from sqlalchemy import event, text

from ...extensions import db
from .word_counts import KEPT_COUNTS_DDL

# A memory's scope as one word: t<tenant>, w0 (the shop) / a<id> (an account) / o<id> (an order),
# s<subject> (0: everyone). It ends in a digit, so the Porter stemmer leaves it whole.
SQLITE_SCOPE_TOKEN = ("'t' || {t}tenant_id || CASE WHEN {t}memorable_type IS NULL THEN 'w0' "
                      "ELSE substr({t}memorable_type, 1, 1) || coalesce({t}memorable_id, 0) END "
                      "|| 's' || coalesce({t}subject_id, 0)")
POSTGRES_SCOPE_TOKEN = ("'t' || {t}tenant_id::text || CASE WHEN {t}memorable_type IS NULL THEN "
                        "'w0' ELSE left({t}memorable_type, 1) || coalesce({t}memorable_id, 0)::text "
                        "END || 's' || coalesce({t}subject_id, 0)::text")
# What the GIN indexes hold; the searches ask for the same expression, table-qualified.
POSTGRES_TURN_VECTOR = ("(to_tsvector('english', {t}question || ' ' || {t}answer) || "
                        "array_to_tsvector(ARRAY['owner ' || coalesce({t}owner_id, 0)::text]))")
POSTGRES_MEMORY_VECTOR = ("(to_tsvector('english', {t}content) || "
                          f"array_to_tsvector(ARRAY['scope ' || {POSTGRES_SCOPE_TOKEN}]))")
# A turn's words kept in the row (PostgreSQL), for walking a person's turns newest first on
# ix_turns_owner_newest and testing each for a word without computing its tsvector: the same
# lexemes as the GIN index's, less positions (a one-word query never needs them).
POSTGRES_TURN_WORDS = "strip(to_tsvector('english', question || ' ' || answer))"
POSTGRES_OWNER = "coalesce({t}owner_id, 0)"  # as the walk's index holds it (see keyword_tables)
SCOPE_COLUMNS = "content, tenant_id, memorable_type, memorable_id, subject_id"
OWNER_OF = "(SELECT user_id FROM conversations WHERE id = new.conversation_id)"

SQLITE_DDL = [
    # A turn's owner, for the index: filled in from its conversation whatever inserted it.
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
    # The owner filled in just after the insert is already indexed (old.owner_id is NULL then).
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
SQLITE_FILL = {  # rows that predate their index
    "turns_fts": "INSERT INTO turns_fts(turns_fts) VALUES ('rebuild')",
    "memories_fts": "INSERT INTO memories_fts(rowid, content, scope) SELECT id, content, "
                    f"{SQLITE_SCOPE_TOKEN.format(t='')} FROM memories",
}
FTS_TABLES = tuple(SQLITE_FILL)
POSTGRES_DDL = [
    "CREATE OR REPLACE FUNCTION turns_owner() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "IF NEW.owner_id IS NULL THEN SELECT user_id INTO NEW.owner_id FROM conversations "
    "WHERE id = NEW.conversation_id; END IF; RETURN NEW; END $$",
    "DROP TRIGGER IF EXISTS turns_owner ON turns",
    "CREATE TRIGGER turns_owner BEFORE INSERT ON turns FOR EACH ROW EXECUTE FUNCTION turns_owner()",
    "CREATE INDEX IF NOT EXISTS ix_memories_fulltext ON memories "
    f"USING gin ({POSTGRES_MEMORY_VECTOR.format(t='')}) WITH (fastupdate = off)",
    f"CREATE INDEX IF NOT EXISTS ix_turns_fulltext ON turns USING gin ({POSTGRES_TURN_VECTOR.format(t='')}) "
    "WITH (fastupdate = off)",
    # Migration 0042: a word common in a person's turns is found by walking them newest first.
    "ALTER TABLE turns ADD COLUMN IF NOT EXISTS search_words tsvector "
    f"GENERATED ALWAYS AS ({POSTGRES_TURN_WORDS}) STORED",
    f"CREATE INDEX IF NOT EXISTS ix_turns_owner_newest ON turns (({POSTGRES_OWNER.format(t='')}), id)",
    # Migration 0043: each person's word counts kept by the database (word_counts.py), and
    # their turns on a date found without probing each of their conversations.
    *KEPT_COUNTS_DDL,
    f"CREATE INDEX IF NOT EXISTS ix_turns_owner_created ON turns "
    f"(({POSTGRES_OWNER.format(t='')}), created_at)",
    # Written directly (migration 0041): with a pending list, every search read all of it first.
    *(f"ALTER INDEX {name} SET (fastupdate = off)" for name in ("ix_memories_fulltext",
                                                               "ix_turns_fulltext")),
]


def scope_token(tenant_id: int, memorable_type: str | None, memorable_id: int | None,
                subject_id: int | None) -> str:
    """A memory's scope as the index holds it (SQLITE_SCOPE_TOKEN, POSTGRES_SCOPE_TOKEN)."""
    about = "w0" if memorable_type is None else f"{memorable_type[0]}{memorable_id or 0}"
    return f"t{tenant_id}{about}s{subject_id or 0}"


def session_tokens(tenant_id: int, subject_id: int | None, order_ids) -> list[str]:
    """The tokens of every (memorable, subject) pairing a session reads (scopes.scope_branches):
    the shop, their account, their orders; shared or theirs."""
    about = [(None, None)] + ([("account", subject_id)] if subject_id is not None else []) + [
        ("order", order_id) for order_id in order_ids or ()]
    whom = [None] + ([subject_id] if subject_id is not None else [])
    return [scope_token(tenant_id, kind, id_, subject) for kind, id_ in about for subject in whom]


def create_keyword_indexes(metadata, connection, **kw):
    """Runs after every create_all; creates what is missing and indexes rows that predate it."""
    if connection.dialect.name == "sqlite":
        existed = {name for (name,) in connection.execute(text(
            "SELECT name FROM sqlite_master WHERE name IN ('turns_fts', 'memories_fts')"))}
        for statement in SQLITE_DDL:
            connection.exec_driver_sql(statement)
        for name, fill in SQLITE_FILL.items():
            if name not in existed:
                connection.exec_driver_sql(fill)
    elif connection.dialect.name == "postgresql":
        for statement in POSTGRES_DDL:
            connection.exec_driver_sql(statement)


def drop_keyword_indexes(metadata, connection, **kw):
    """A dropped table takes its triggers along; its FTS5 index must go too, or it would go stale."""
    if connection.dialect.name == "sqlite":
        for name in FTS_TABLES:
            connection.exec_driver_sql(f"DROP TABLE IF EXISTS {name}")


def forget_deleted_words() -> None:
    """SQLite: an FTS5 delete only records that a row's words are gone; the words stay in the
    index's older segments until they merge. Merge them now ('optimize'; freed pages are zeroed,
    secure_delete), then write the WAL back into the file and empty it. PostgreSQL indexes the
    rows themselves: nothing to do."""
    if db.engine.dialect.name != "sqlite":
        return
    with db.engine.begin() as connection:
        for name in FTS_TABLES:
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
