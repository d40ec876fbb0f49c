"""fresh session tokens: every existing user gets a random one (accounts made before issue11 had '')

Revision ID: 0007_fresh_session_tokens
Revises: issue15
"""
import secrets

from alembic import op
import sqlalchemy as sa


revision = '0007_fresh_session_tokens'
down_revision = 'issue15'
branch_labels = None
depends_on = None

users = sa.table('users', sa.column('id', sa.Integer), sa.column('session_token', sa.String))


def upgrade():
    # An empty token was shared by every account upgraded from before issue11: with a known
    # SECRET_KEY a cookie naming any id with it signed in as that person. Every session of
    # before the upgrade ends; people sign in again.
    connection = op.get_bind()
    ids = connection.execute(sa.select(users.c.id)).scalars().all()
    for start in range(0, len(ids), 1000):
        connection.execute(
            users.update().where(users.c.id == sa.bindparam('user_id'))
            .values(session_token=sa.bindparam('token')),
            [{'user_id': i, 'token': secrets.token_hex(16)} for i in ids[start:start + 1000]])


def downgrade():
    pass  # a random token is as good as any: nothing to undo
