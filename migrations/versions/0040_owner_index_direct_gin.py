"""owner turns index, GIN written directly: turns gain an index on (owner_id, id), so a count of
one person's turns above an id walks their own rows, not the shop's; PostgreSQL's full-text GIN
indexes stop queuing new rows in a pending list (fastupdate off) and the list is merged now,
since every search read the whole list (up to 4 MB) before its answer

Revision ID: 0040_owner_index_direct_gin
Revises: 0039_background_imports
"""
from alembic import op


revision = '0040_owner_index_direct_gin'
down_revision = '0039_background_imports'
branch_labels = None
depends_on = None

GIN_INDEXES = ("ix_turns_fulltext", "ix_memories_fulltext")


def upgrade():
    op.create_index('ix_turns_owner_newest', 'turns', ['owner_id', 'id'], unique=False)
    if op.get_bind().dialect.name == "postgresql":
        for name in GIN_INDEXES:
            op.execute(f"ALTER INDEX IF EXISTS {name} SET (fastupdate = off)")
            op.execute(f"SELECT gin_clean_pending_list(to_regclass('{name}'))")  # NULL: none


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        for name in GIN_INDEXES:
            op.execute(f"ALTER INDEX IF EXISTS {name} RESET (fastupdate)")
    op.drop_index('ix_turns_owner_newest', table_name='turns')
