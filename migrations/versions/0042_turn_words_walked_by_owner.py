"""turn words walked by owner: on PostgreSQL a turn keeps its words (a generated tsvector column,
search_words) and ix_turns_owner_newest holds (owner, id), so a word common in a busy person's
turns is found by walking their turns newest first and stopping at the limit, not by fetching
and sorting every one of their hits from the GIN index. SQLite's FTS5 index already walks a
word's entries merged with the owner's, newest first: nothing to do there

Adding a generated column rewrites the turns table (every row kept, its indexes rebuilt) under
an exclusive lock, in this one transaction: an interrupted upgrade leaves the table as it was and
the next `init-db` starts it over. CREATE INDEX CONCURRENTLY would need an autocommit block, and
the rewrite locks the table anyway; a failed concurrent build would leave an invalid index that
IF NOT EXISTS then keeps.

Revision ID: 0042_turn_words_walked_by_owner
Revises: 0041_gin_without_pending_list
"""
import logging
import time

from alembic import op


revision = '0042_turn_words_walked_by_owner'
down_revision = '0041_gin_without_pending_list'
branch_labels = None
depends_on = None

log = logging.getLogger('alembic.runtime.migration')

# The DDL as it is at this revision (webapp/memories/search/keyword_index.py keeps the current copy).
POSTGRES_TURN_WORDS = "strip(to_tsvector('english', question || ' ' || answer))"
POSTGRES_DDL = [
    ("turns' words kept with them (the table rewritten)",
     "ALTER TABLE turns ADD COLUMN IF NOT EXISTS search_words tsvector "
     f"GENERATED ALWAYS AS ({POSTGRES_TURN_WORDS}) STORED"),
    ("ix_turns_owner_newest built",
     "CREATE INDEX IF NOT EXISTS ix_turns_owner_newest ON turns ((coalesce(owner_id, 0)), id)"),
]


def upgrade():
    if op.get_bind().dialect.name != "postgresql":
        return
    for what, statement in POSTGRES_DDL:
        started = time.monotonic()
        op.execute(statement)
        log.info("%s in %.1f s", what, time.monotonic() - started)


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP INDEX IF EXISTS ix_turns_owner_newest")
        op.execute("ALTER TABLE turns DROP COLUMN IF EXISTS search_words")
