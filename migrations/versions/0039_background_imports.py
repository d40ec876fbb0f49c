"""background imports: an upload at /import is stored and parsed by a job, not in the request;
the `imports` table keeps each one's progress and, once done, what it stored and skipped

Revision ID: 0039_background_imports
Revises: 0036_owner_scoped_keyword_index
"""
from alembic import op
import sqlalchemy as sa


revision = '0039_background_imports'
down_revision = '0038_turn_alternatives'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'imports',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('owner_id', sa.Integer(), nullable=False),
        sa.Column('tenant_id', sa.Integer(), nullable=False),
        sa.Column('status', sa.String(length=10), nullable=False),
        sa.Column('options', sa.JSON(), nullable=False),
        sa.Column('total', sa.Integer(), nullable=False),
        sa.Column('checked', sa.Integer(), nullable=False),
        sa.Column('stored', sa.Integer(), nullable=False),
        sa.Column('result', sa.JSON(), nullable=True),
        sa.Column('error', sa.Text(), server_default='', nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=False),
        sa.Column('finished_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['owner_id'], ['users.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['tenant_id'], ['tenants.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_imports_user_id', 'imports', ['user_id'])


def downgrade():
    op.drop_index('ix_imports_user_id', table_name='imports')
    op.drop_table('imports')
