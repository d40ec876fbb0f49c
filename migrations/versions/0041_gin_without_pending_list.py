"""GIN without pending list: PostgreSQL's full-text GIN indexes take new rows directly
(fastupdate off) and the list queued so far is merged now, since every search read the whole
list (up to 4 MB) before its answer. SQLite's FTS5 indexes have no such list: nothing to do

Revision ID: 0041_gin_without_pending_list
Revises: 0040_memory_branch_left
"""
from alembic import op


revision = '0041_gin_without_pending_list'
down_revision = '0040_memory_branch_left'
branch_labels = None
depends_on = None

GIN_INDEXES = ("ix_turns_fulltext", "ix_memories_fulltext")


def upgrade():
    if op.get_bind().dialect.name == "postgresql":
        for name in GIN_INDEXES:
            op.execute(f"ALTER INDEX IF EXISTS {name} SET (fastupdate = off)")
            op.execute(f"SELECT gin_clean_pending_list(to_regclass('{name}'))")  # NULL: none


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        for name in GIN_INDEXES:
            op.execute(f"ALTER INDEX IF EXISTS {name} RESET (fastupdate)")
