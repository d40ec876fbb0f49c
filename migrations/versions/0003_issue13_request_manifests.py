"""per-turn request manifests and the texts they refer to

Revision ID: issue13
Revises: issue9
Create Date: 2026-12-01 09:00:00

"""
from alembic import op
import sqlalchemy as sa


revision = 'issue13'
down_revision = 'issue9'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('request_texts',
    sa.Column('conversation_id', sa.String(length=32), nullable=False),
    sa.Column('hash', sa.String(length=64), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['conversation_id'], ['conversations.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('conversation_id', 'hash')
    )
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.add_column(sa.Column('manifest', sa.JSON(), nullable=True))
        batch_op.create_index('ix_turns_costs', ['conversation_id', 'seq', 'outcome',
                                                 'prompt_tokens', 'context_tokens',
                                                 'resend_tokens'], unique=False)
        batch_op.create_index('ix_turns_outcome', ['conversation_id', 'outcome', 'seq'],
                              unique=False)


def downgrade():
    with op.batch_alter_table('turns', schema=None) as batch_op:
        batch_op.drop_index('ix_turns_outcome')
        batch_op.drop_index('ix_turns_costs')
        batch_op.drop_column('manifest')
    op.drop_table('request_texts')
