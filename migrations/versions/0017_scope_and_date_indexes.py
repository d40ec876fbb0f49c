"""scope and date indexes: a person's conversations found by tenant and person together (not by
walking every conversation of the shop), and a person's turns on a date found without reading
each one

Revision ID: 0017_scope_and_date_indexes
Revises: 0016_turns_newest_index
"""
from alembic import op


revision = '0017_scope_and_date_indexes'
down_revision = '0016_turns_newest_index'
branch_labels = None
depends_on = None


def upgrade():
    # Not in batch mode: SQLite would rebuild the tables, and the turns' FTS5 triggers with them.
    op.create_index('ix_conversations_tenant_user', 'conversations', ['tenant_id', 'user_id'])
    op.create_index('ix_turns_created', 'turns', ['conversation_id', 'created_at'])


def downgrade():
    op.drop_index('ix_turns_created', table_name='turns')
    op.drop_index('ix_conversations_tenant_user', table_name='conversations')
