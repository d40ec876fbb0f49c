"""audit actors by keyed digest: audit_log.actor_email becomes actor_digest (an HMAC of the email
with the app's secret key), so deleting an account leaves its email nowhere; the log shows the
email through actor_id while the account exists

Revision ID: 0019_audit_actor_digest
Revises: 0018_distiller_backoff
"""
import hashlib
import hmac
import re

from alembic import op
import sqlalchemy as sa
from flask import current_app


revision = '0019_audit_actor_digest'
down_revision = '0018_distiller_backoff'
branch_labels = None
depends_on = None

BATCH = 1000
EMAIL_FIRST = re.compile(r"^\S+@\S+: ")  # a role change's detail, before 0019


def digest(key: bytes, email: str) -> str:
    return hmac.new(key, email.encode(), hashlib.sha256).hexdigest()[:16] if email else ""


def upgrade():
    with op.batch_alter_table('audit_log') as batch_op:
        batch_op.add_column(sa.Column('actor_digest', sa.String(length=16), nullable=False,
                                      server_default=''))
    bind, key = op.get_bind(), str(current_app.secret_key).encode()
    emails = bind.execute(sa.text(
        "SELECT DISTINCT actor_email FROM audit_log WHERE actor_email <> ''")).scalars().all()
    for start in range(0, len(emails), BATCH):
        bind.execute(sa.text("UPDATE audit_log SET actor_digest = :digest WHERE actor_email = :email"),
                     [{"email": e, "digest": digest(key, e)} for e in emails[start:start + BATCH]])
    with op.batch_alter_table('audit_log') as batch_op:
        batch_op.drop_column('actor_email')
    roles = bind.execute(sa.text(  # "pat@x: staff → admin": the customer column names who
        "SELECT id, detail FROM audit_log WHERE action = 'changed role'")).all()
    named = [{"id": id_, "detail": EMAIL_FIRST.sub("", detail)} for id_, detail in roles
             if EMAIL_FIRST.match(detail)]
    if named:
        bind.execute(sa.text("UPDATE audit_log SET detail = :detail WHERE id = :id"), named)


def downgrade():
    with op.batch_alter_table('audit_log') as batch_op:  # the emails are gone: only who still exists
        batch_op.add_column(sa.Column('actor_email', sa.String(length=320), nullable=False,
                                      server_default=''))
    op.execute("UPDATE audit_log SET actor_email = COALESCE((SELECT email FROM users "
               "WHERE users.id = audit_log.actor_id), '')")
    with op.batch_alter_table('audit_log') as batch_op:
        batch_op.drop_column('actor_digest')
