"""turn alternatives: a regenerated answer keeps the one before it, and an edited question keeps
the branch it replaced, in a table of their own; the turns table goes on holding only the active
path, so everything that reads it follows the chosen branch

Revision ID: 0038_turn_alternatives
Revises: 0036_owner_scoped_keyword_index
"""
import sqlalchemy as sa
from alembic import op


revision = '0038_turn_alternatives'
down_revision = '0036_owner_scoped_keyword_index'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'turn_alternatives',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('conversation_id', sa.String(length=32), nullable=False),
        sa.Column('seq', sa.Integer(), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(length=8), nullable=False),
        sa.Column('branch', sa.JSON(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['conversation_id'], ['conversations.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('conversation_id', 'seq', 'position', name='uq_alternative'))


def downgrade():
    op.drop_table('turn_alternatives')
