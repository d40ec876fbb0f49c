"""one summary failure: a fold refused by the check is recorded like a provider error
(failed_at, failure), so the chat and the viewer say both; the separate `problem` column goes

Revision ID: 0015_one_summary_failure
Revises: 0014_turn_feedback
"""
from alembic import op
import sqlalchemy as sa


revision = '0015_one_summary_failure'
down_revision = "0014_turn_feedback"
branch_labels = None
depends_on = None


def upgrade():
    op.execute("UPDATE conversation_summaries SET failure = substr(problem, 1, 300), "
               "failed_at = updated_at WHERE problem IS NOT NULL AND failed_at IS NULL")
    with op.batch_alter_table('conversation_summaries') as batch_op:
        batch_op.drop_column('problem')


def downgrade():
    with op.batch_alter_table('conversation_summaries') as batch_op:
        batch_op.add_column(sa.Column('problem', sa.String(length=300), nullable=True))
