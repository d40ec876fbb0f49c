"""turn pins: a turn can be pinned (always sent) or left out (never sent), with who and when;
people can turn off the chat's trimming notes; a summary keeps its hand edit and its last failure

Revision ID: 0011_turn_pins
Revises: 0010_share_memory_choice
"""
from alembic import op
import sqlalchemy as sa


revision = '0011_turn_pins'
down_revision = '0010_share_memory_choice'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('users') as batch_op:
        batch_op.add_column(sa.Column('trim_notes', sa.Boolean(), nullable=False,
                                      server_default=sa.true()))
    with op.batch_alter_table('conversations') as batch_op:
        batch_op.add_column(sa.Column('has_marks', sa.Boolean(), nullable=False,
                                      server_default=sa.false()))
    with op.batch_alter_table('turns') as batch_op:
        batch_op.add_column(sa.Column('mark', sa.String(length=8), nullable=True))
        batch_op.add_column(sa.Column('marked_by', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('marked_by_name', sa.String(length=200), nullable=False,
                                      server_default=''))
        batch_op.add_column(sa.Column('marked_at', sa.DateTime(), nullable=True))
        batch_op.create_foreign_key('fk_turns_marked_by_users', 'users', ['marked_by'], ['id'],
                                    ondelete='SET NULL')
        batch_op.create_index('ix_turns_marked', ['conversation_id', 'mark', 'seq'])
    with op.batch_alter_table('conversation_summaries') as batch_op:
        batch_op.add_column(sa.Column('edited_at', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('edited_by_name', sa.String(length=200), nullable=False,
                                      server_default=''))
        batch_op.add_column(sa.Column('failed_at', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('failure', sa.String(length=300), nullable=False,
                                      server_default=''))


def downgrade():
    with op.batch_alter_table('conversation_summaries') as batch_op:
        for column in ('failure', 'failed_at', 'edited_by_name', 'edited_at'):
            batch_op.drop_column(column)
    with op.batch_alter_table('turns') as batch_op:
        batch_op.drop_index('ix_turns_marked')
        batch_op.drop_constraint('fk_turns_marked_by_users', type_='foreignkey')
        batch_op.drop_column('marked_at')
        batch_op.drop_column('marked_by_name')
        batch_op.drop_column('marked_by')
        batch_op.drop_column('mark')
    with op.batch_alter_table('conversations') as batch_op:
        batch_op.drop_column('has_marks')
    with op.batch_alter_table('users') as batch_op:
        batch_op.drop_column('trim_notes')
