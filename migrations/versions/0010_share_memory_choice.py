"""share links remember whether staff chose to show the shop-wide memories' text

Revision ID: 0010_share_memory_choice
Revises: 0009_summary_problem
"""
from alembic import op
import sqlalchemy as sa


revision = '0010_share_memory_choice'
down_revision = '0009_summary_problem'
branch_labels = None
depends_on = None


def upgrade():
    # A plain ADD COLUMN (no table rebuild on SQLite); existing links show no memory text.
    op.add_column('share_links', sa.Column('include_shared_memories', sa.Boolean(),
                                           nullable=False, server_default=sa.false()))


def downgrade():
    with op.batch_alter_table('share_links') as batch_op:
        batch_op.drop_column('include_shared_memories')
