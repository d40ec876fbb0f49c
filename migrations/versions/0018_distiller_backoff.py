"""distiller backoff: a window whose read was cut off or refused for size waits (retry_after),
is read again smaller, and is given up after NIMBUS_MEMORY_MAX_TRIES with a record (given_up)

Revision ID: 0018_distiller_backoff
Revises: 0017_scope_and_date_indexes
"""
from alembic import op
import sqlalchemy as sa


revision = '0018_distiller_backoff'
down_revision = '0017_scope_and_date_indexes'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('memory_checkpoints') as batch_op:
        batch_op.add_column(sa.Column('failed_tries', sa.Integer(), nullable=False,
                                      server_default='0'))
        batch_op.add_column(sa.Column('retry_after', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('given_up', sa.String(length=300), nullable=False,
                                      server_default=''))


def downgrade():
    with op.batch_alter_table('memory_checkpoints') as batch_op:
        batch_op.drop_column('given_up')
        batch_op.drop_column('retry_after')
        batch_op.drop_column('failed_tries')
