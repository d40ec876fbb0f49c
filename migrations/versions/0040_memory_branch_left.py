"""memory branch left: a memory learned from turns on a branch the person later left (switched
away from, or edited) says so in the panel, which offers to keep or drop it; "left" until they
decide, "kept" once kept, empty while its turns are on the path shown

Revision ID: 0040_memory_branch_left
Revises: 0039_background_imports
"""
import sqlalchemy as sa
from alembic import op


revision = '0040_memory_branch_left'
down_revision = '0039_background_imports'
branch_labels = None
depends_on = None


def upgrade():
    # A plain ADD COLUMN: a batch rebuild of memories would drop its full-text triggers.
    op.add_column('memories', sa.Column('branch_left', sa.String(length=4), server_default='',
                                        nullable=False))


def downgrade():
    with op.batch_alter_table('memories') as batch:
        batch.drop_column('branch_left')
