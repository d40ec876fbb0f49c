"""kept turn word counts: on PostgreSQL the database keeps how many of each person's finished
turns hold each word (turn_word_rows, kept by triggers on turns and conversations), so a search
reads a word's count instead of counting up to 1,000 of its hits and estimating past them.
Existing turns are counted in batches of ids, with progress in the log; and ix_turns_owner_created
finds a person's turns on a date without probing each of their conversations. SQLite: nothing
to do

The fill runs in this one transaction with the turns table locked against writes (SHARE): an
interrupted upgrade leaves no table, and the next `init-db` starts it over; a turn written
during the fill could otherwise be counted twice or not at all.

Revision ID: 0043_kept_turn_word_counts
Revises: 0042_turn_words_walked_by_owner
"""
import logging
import time

import sqlalchemy as sa
from alembic import op


revision = '0043_kept_turn_word_counts'
down_revision = '0042_turn_words_walked_by_owner'
branch_labels = None
depends_on = None

log = logging.getLogger('alembic.runtime.migration')
BATCH = 50_000

# The DDL as it is at this revision (webapp/memories/search/word_counts.py keeps the current copy).
COUNTED = ("t.owner_id IS NOT NULL AND t.outcome <> 'pending' AND NOT EXISTS (SELECT 1 FROM "
           "conversations c WHERE c.id = t.conversation_id AND c.deleted_at IS NOT NULL)")
CHANGE = ("INSERT INTO turn_word_rows (owner_id, word, turns) SELECT t.owner_id, w.word, "
          "{sign} * count(*) FROM {source} CROSS JOIN LATERAL "
          "unnest(tsvector_to_array(t.search_words)) AS w(word) WHERE {counted} GROUP BY 1, 2 "
          "ORDER BY 1, 2 ON CONFLICT (owner_id, word) DO UPDATE SET turns = turn_word_rows.turns "
          "+ excluded.turns")
CLEARED = ("DELETE FROM turn_word_rows k USING (SELECT DISTINCT t.owner_id, w.word "
           "FROM {source} CROSS JOIN LATERAL unnest(tsvector_to_array(t.search_words)) AS w(word) "
           "WHERE {counted}) "
           "d WHERE k.owner_id = d.owner_id AND k.word = d.word AND k.turns = 0")
CHANGED = ("(SELECT {side}.* FROM gone g JOIN added a ON a.id = g.id WHERE (g.owner_id, g.outcome, "
           "g.conversation_id, g.search_words) IS DISTINCT FROM (a.owner_id, a.outcome, "
           "a.conversation_id, a.search_words)) t")
FINISHED = "t.conversation_id = {row}.id AND t.owner_id IS NOT NULL AND t.outcome <> 'pending'"
SHOWN = "(CASE WHEN NEW.deleted_at IS NULL THEN 1 ELSE -1 END)"


def change(sign, source: str, counted: str = COUNTED) -> str:
    return CHANGE.format(sign=sign, source=source, counted=counted)


def cleared(source: str) -> str:
    return CLEARED.format(source=source, counted=COUNTED)


TABLE = ("CREATE TABLE IF NOT EXISTS turn_word_rows (owner_id integer NOT NULL, "
         "word text NOT NULL, turns integer NOT NULL, PRIMARY KEY (owner_id, word))")
# A person's turns on a date, by the person as the turn records it (not each conversation's).
DATES_INDEX = ("CREATE INDEX IF NOT EXISTS ix_turns_owner_created ON turns "
               "((coalesce(owner_id, 0)), created_at)")
TRIGGERS = [
    "CREATE OR REPLACE FUNCTION turn_word_rows_changed() RETURNS trigger LANGUAGE plpgsql AS $$ "
    "BEGIN IF TG_OP = 'UPDATE' THEN "
    f"{change(-1, CHANGED.format(side='g'))}; {change(1, CHANGED.format(side='a'))}; "
    f"{cleared(CHANGED.format(side='g'))}; "
    f"ELSIF TG_OP = 'DELETE' THEN {change(-1, 'gone t')}; {cleared('gone t')}; "
    f"ELSE {change(1, 'added t')}; END IF; "
    "RETURN NULL; END $$",
    "CREATE OR REPLACE FUNCTION turn_word_rows_conversation() RETURNS trigger "
    "LANGUAGE plpgsql AS $$ BEGIN "
    "IF TG_OP = 'UPDATE' THEN "
    f"{change(SHOWN, 'turns t', FINISHED.format(row='NEW'))}; "
    "RETURN NULL; END IF; "
    "IF OLD.deleted_at IS NOT NULL THEN "
    f"{change(1, 'turns t', FINISHED.format(row='OLD'))}; "
    "END IF; RETURN OLD; END $$",
    "DROP TRIGGER IF EXISTS turn_word_rows_insert ON turns",
    "CREATE TRIGGER turn_word_rows_insert AFTER INSERT ON turns REFERENCING NEW TABLE AS added "
    "FOR EACH STATEMENT EXECUTE FUNCTION turn_word_rows_changed()",
    "DROP TRIGGER IF EXISTS turn_word_rows_update ON turns",
    "CREATE TRIGGER turn_word_rows_update AFTER UPDATE ON turns REFERENCING OLD TABLE AS gone "
    "NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION turn_word_rows_changed()",
    "DROP TRIGGER IF EXISTS turn_word_rows_delete ON turns",
    "CREATE TRIGGER turn_word_rows_delete AFTER DELETE ON turns REFERENCING OLD TABLE AS gone "
    "FOR EACH STATEMENT EXECUTE FUNCTION turn_word_rows_changed()",
    "DROP TRIGGER IF EXISTS turn_word_rows_hidden ON conversations",
    "CREATE TRIGGER turn_word_rows_hidden AFTER UPDATE OF deleted_at ON conversations FOR EACH ROW "
    "WHEN ((OLD.deleted_at IS NULL) IS DISTINCT FROM (NEW.deleted_at IS NULL)) "
    "EXECUTE FUNCTION turn_word_rows_conversation()",
    "DROP TRIGGER IF EXISTS turn_word_rows_removed ON conversations",
    "CREATE TRIGGER turn_word_rows_removed BEFORE DELETE ON conversations FOR EACH ROW "
    "EXECUTE FUNCTION turn_word_rows_conversation()",
]


def upgrade():
    connection = op.get_bind()
    if connection.dialect.name != "postgresql":
        return
    started = time.monotonic()
    op.execute("LOCK TABLE turns, conversations IN SHARE MODE")
    op.execute(TABLE)
    op.execute("TRUNCATE turn_word_rows")  # counted from the turns below, whatever was there
    low, high = connection.execute(sa.text("SELECT min(id), max(id) FROM turns")).one()
    for start in range(low or 0, (high or -1) + 1, BATCH):
        batch = f"t.id >= :low AND t.id < :high AND {COUNTED}"
        connection.execute(sa.text(change(1, "turns t", batch)),
                           {"low": start, "high": start + BATCH})
        log.info("turns' words counted: ids up to %d of %d", min(start + BATCH - 1, high), high)
    for statement in TRIGGERS:
        op.execute(statement)
    log.info("turn word counts kept in %.1f s", time.monotonic() - started)
    started = time.monotonic()
    op.execute(DATES_INDEX)
    log.info("ix_turns_owner_created built in %.1f s", time.monotonic() - started)


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        for name, table in (("insert", "turns"), ("update", "turns"), ("delete", "turns"),
                            ("hidden", "conversations"), ("removed", "conversations")):
            op.execute(f"DROP TRIGGER IF EXISTS turn_word_rows_{name} ON {table}")
        op.execute("DROP FUNCTION IF EXISTS turn_word_rows_changed()")
        op.execute("DROP FUNCTION IF EXISTS turn_word_rows_conversation()")
        op.execute("DROP TABLE IF EXISTS turn_word_rows")
        op.execute("DROP INDEX IF EXISTS ix_turns_owner_created")
