"""sidebar page indexes: a person's pinned and archived conversations read a page at a time,
newest first, from a (user, pinned_at / archived_at, id) keyset, not all of them sorted (the
recent ones already have ix_conversations_user_updated), and a person's deletions past their
undo window found without reading every conversation of theirs

Revision ID: 0021_sidebar_page_indexes
Revises: 0020_import_source_keys
"""
from alembic import op


revision = '0021_sidebar_page_indexes'
down_revision = '0020_import_source_keys'
branch_labels = None
depends_on = None

INDEXES = {'ix_conversations_user_pinned': ['user_id', 'pinned_at', 'id'],
           'ix_conversations_user_archived': ['user_id', 'archived_at', 'id'],
           'ix_conversations_user_deleted': ['user_id', 'deleted_at']}


def upgrade():
    for name, columns in INDEXES.items():  # not in batch mode: SQLite would rebuild the table
        op.create_index(name, 'conversations', columns)


def downgrade():
    for name in INDEXES:
        op.drop_index(name, table_name='conversations')
