"""import source keys: an imported conversation keeps its source's id (or a digest of its words),
so a retried upload skips what its owner already has

Revision ID: 0020_import_source_keys
Revises: 0019_audit_actor_digest
"""
from alembic import op
import sqlalchemy as sa


revision = '0020_import_source_keys'
down_revision = '0019_audit_actor_digest'
branch_labels = None
depends_on = None


def upgrade():
    # Not in batch mode: SQLite would rebuild the table; a nullable column needs no rebuild.
    op.add_column('conversations', sa.Column('import_key', sa.String(length=100), nullable=True))
    op.create_index('ix_conversations_import_key', 'conversations', ['user_id', 'import_key'])


def downgrade():
    op.drop_index('ix_conversations_import_key', table_name='conversations')
    with op.batch_alter_table('conversations') as batch_op:
        batch_op.drop_column('import_key')
