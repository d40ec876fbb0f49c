"""memory revisions: what a memory said before an edit, a supersession or a merge, who changed it,
when and from which turn; a deleted memory leaves a row without text for the consolidation report

Revision ID: 0012_memory_revisions
Revises: 0011_turn_pins
"""
from alembic import op
import sqlalchemy as sa


revision = '0012_memory_revisions'
down_revision = '0011_turn_pins'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'memory_revisions',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('tenant_id', sa.Integer(), nullable=False),
        sa.Column('memory_id', sa.Integer(), nullable=True),
        sa.Column('memorable_type', sa.String(length=20), nullable=True),
        sa.Column('memorable_id', sa.Integer(), nullable=True),
        sa.Column('subject_id', sa.Integer(), nullable=True),
        sa.Column('action', sa.String(length=12), nullable=False),
        sa.Column('content', sa.Text(), nullable=True),
        sa.Column('changed_by', sa.String(length=10), nullable=False),
        sa.Column('changed_by_id', sa.Integer(), nullable=True),
        sa.Column('changed_by_name', sa.String(length=200), nullable=False),
        sa.Column('conversation_id', sa.String(length=32), nullable=True),
        sa.Column('turn_seq', sa.Integer(), nullable=True),
        sa.Column('reason', sa.String(length=200), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['tenant_id'], ['tenants.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['memory_id'], ['memories.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['subject_id'], ['users.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['changed_by_id'], ['users.id'], ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['conversation_id'], ['conversations.id'], ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('memory_revisions') as batch_op:
        batch_op.create_index('ix_memory_revisions_memory_id', ['memory_id'])
        batch_op.create_index('ix_memory_revisions_subject_id', ['subject_id'])
        batch_op.create_index('ix_memory_revisions_tenant_created', ['tenant_id', 'created_at'])


def downgrade():
    op.drop_table('memory_revisions')
