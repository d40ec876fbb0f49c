"""conversations.deleted_at: a deleted conversation can be restored during its undo window

Revision ID: issue12
Revises: issue9
"""
from alembic import op
import sqlalchemy as sa


revision = "issue12"
down_revision = "issue11"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("deleted_at", sa.DateTime(), nullable=True))


def downgrade():
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.drop_column("deleted_at")
