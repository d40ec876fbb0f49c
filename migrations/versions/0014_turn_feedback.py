"""turn feedback: the owner's thumbs up or down on an answer, an optional comment, and when

Revision ID: 0014_turn_feedback
Revises: 0013_pins_archive_sign_in_links
"""
from alembic import op
import sqlalchemy as sa


revision = '0014_turn_feedback'
down_revision = "0013_pins_archive_sign_in_links"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('turns') as batch_op:
        batch_op.add_column(sa.Column('feedback', sa.String(length=4), nullable=True))
        batch_op.add_column(sa.Column('feedback_comment', sa.String(length=500), nullable=False,
                                      server_default=''))
        batch_op.add_column(sa.Column('feedback_at', sa.DateTime(), nullable=True))
        batch_op.create_index('ix_turns_feedback_at', ['feedback_at'])


def downgrade():
    with op.batch_alter_table('turns') as batch_op:
        batch_op.drop_index('ix_turns_feedback_at')
        batch_op.drop_column('feedback_at')
        batch_op.drop_column('feedback_comment')
        batch_op.drop_column('feedback')
