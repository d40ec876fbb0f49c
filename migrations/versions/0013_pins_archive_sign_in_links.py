"""conversations can be pinned and archived in the sidebar; one-time sign-in links that open a
conversation from the terminal (stored as a hash, single use, minutes long)

Revision ID: 0013_pins_archive_sign_in_links
Revises: 0012_memory_revisions
"""
from alembic import op
import sqlalchemy as sa


revision = '0013_pins_archive_sign_in_links'
down_revision = '0012_memory_revisions'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('conversations') as batch_op:
        batch_op.add_column(sa.Column('pinned_at', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('archived_at', sa.DateTime(), nullable=True))
    op.create_table(
        'sign_in_links',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('token_hash', sa.String(length=64), nullable=False, unique=True),
        sa.Column('user_id', sa.Integer(), sa.ForeignKey('users.id', ondelete='CASCADE'),
                  nullable=False, index=True),
        sa.Column('next_path', sa.String(length=200), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('expires_at', sa.DateTime(), nullable=False),
        sa.Column('used_at', sa.DateTime(), nullable=True),
    )


def downgrade():
    op.drop_table('sign_in_links')
    with op.batch_alter_table('conversations') as batch_op:
        batch_op.drop_column('archived_at')
        batch_op.drop_column('pinned_at')
