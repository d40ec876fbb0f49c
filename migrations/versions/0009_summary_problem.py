"""conversation_summaries.problem: why the last fold was refused (the old summary was kept)

Revision ID: 0009_summary_problem
Revises: 0008_conversation_instructions
"""
from alembic import op
import sqlalchemy as sa


revision = "0009_summary_problem"
down_revision = "0008_conversation_instructions"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("conversation_summaries", schema=None) as batch_op:
        batch_op.add_column(sa.Column("problem", sa.String(length=300), nullable=True))


def downgrade():
    with op.batch_alter_table("conversation_summaries", schema=None) as batch_op:
        batch_op.drop_column("problem")
