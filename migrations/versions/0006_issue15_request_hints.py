"""request hints: tenants, users and conversations say whether memories or a summary exist

Revision ID: issue15
Revises: issue12
"""
from alembic import op
import sqlalchemy as sa


revision = 'issue15'
down_revision = 'issue12'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('tenants') as batch_op:
        batch_op.add_column(sa.Column('shared_memories', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
    with op.batch_alter_table('users') as batch_op:
        batch_op.add_column(sa.Column('personal_memories', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
    with op.batch_alter_table('conversations') as batch_op:
        batch_op.add_column(sa.Column('has_summary', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
    # Existing rows: the hints must never say "none" where there is one.
    op.execute("UPDATE tenants SET shared_memories = EXISTS (SELECT 1 FROM memories "
               "WHERE memories.tenant_id = tenants.id AND memories.subject_id IS NULL)")
    op.execute("UPDATE users SET personal_memories = EXISTS (SELECT 1 FROM memories "
               "WHERE memories.subject_id = users.id)")
    op.execute("UPDATE conversations SET has_summary = EXISTS (SELECT 1 FROM "
               "conversation_summaries WHERE conversation_summaries.conversation_id = "
               "conversations.id)")


def downgrade():
    with op.batch_alter_table('conversations') as batch_op:
        batch_op.drop_column('has_summary')
    with op.batch_alter_table('users') as batch_op:
        batch_op.drop_column('personal_memories')
    with op.batch_alter_table('tenants') as batch_op:
        batch_op.drop_column('shared_memories')
