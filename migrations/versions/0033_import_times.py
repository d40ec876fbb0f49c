"""import times: an imported conversation keeps when it was imported, so that purge counts its age
from the import (or its last message, whichever is later), not from the file's dates alone

Revision ID: 0033_import_times
Revises: 0021_sidebar_page_indexes
"""
from alembic import op
import sqlalchemy as sa


revision = '0033_import_times'
down_revision = '0021_sidebar_page_indexes'
branch_labels = None
depends_on = None


def upgrade():
    # Not in batch mode: SQLite would rebuild the table; a nullable column needs no rebuild.
    op.add_column('conversations', sa.Column('imported_at', sa.DateTime(), nullable=True))
    # Conversations imported before: their import time is unknown, so their age counts from now
    # rather than from the file's dates (the next purge would otherwise delete them at once).
    op.execute("UPDATE conversations SET imported_at = CURRENT_TIMESTAMP "
               "WHERE import_key IS NOT NULL")


def downgrade():
    with op.batch_alter_table('conversations') as batch_op:
        batch_op.drop_column('imported_at')
