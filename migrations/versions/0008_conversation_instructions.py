"""conversation instructions: the system message an imported conversation came with

Revision ID: 0008_conversation_instructions
Revises: 0007_fresh_session_tokens
"""
from alembic import op
import sqlalchemy as sa


revision = '0008_conversation_instructions'
down_revision = '0007_fresh_session_tokens'
branch_labels = None
depends_on = None


def upgrade():
    # ADD COLUMN, not batch mode: SQLite adds a nullable column in place, no table rebuild.
    op.add_column('conversations', sa.Column('instructions', sa.Text(), nullable=True))


def downgrade():
    with op.batch_alter_table('conversations') as batch_op:
        batch_op.drop_column('instructions')
