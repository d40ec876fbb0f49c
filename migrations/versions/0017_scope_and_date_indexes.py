"""scope and date indexes: a person's conversations found by tenant and person together (not by
walking every conversation of the shop), a person's turns on a date found without reading each
one, and a session's memories read one (memorable, subject) pair at a time, newest first (not by
walking every memory of the shop)

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
    op.create_index('ix_memories_scope', 'memories',
                    ['tenant_id', 'memorable_type', 'memorable_id', 'subject_id', 'id'])


def downgrade():
    op.drop_index('ix_memories_scope', table_name='memories')
    op.drop_index('ix_turns_created', table_name='turns')
    op.drop_index('ix_conversations_tenant_user', table_name='conversations')
