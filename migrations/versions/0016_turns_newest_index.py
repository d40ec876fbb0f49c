"""turns newest index: a person's newest finished turns are read from above an id, not all sorted

Revision ID: 0016_turns_newest_index
Revises: 0015_one_summary_failure
"""
from alembic import op


revision = '0016_turns_newest_index'
down_revision = '0015_one_summary_failure'
branch_labels = None
depends_on = None


def upgrade():
    # Not in batch mode: SQLite would rebuild the table, and its FTS5 triggers with it.
    op.create_index('ix_turns_newest', 'turns', ['conversation_id', 'id', 'outcome'])


def downgrade():
    op.drop_index('ix_turns_newest', table_name='turns')
