"""leases: a pending turn's heartbeat, background jobs' leases

Revision ID: issue9
Revises: 0001
"""
from alembic import op
import sqlalchemy as sa


revision = "issue9"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "job_runs",
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("arguments", sa.JSON(), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("lease_until", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    with op.batch_alter_table("job_runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_job_runs_lease_until"), ["lease_until"], unique=False)
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.add_column(sa.Column("heartbeat_at", sa.DateTime(), nullable=True))
        batch_op.create_index("ix_turns_outcome_heartbeat", ["outcome", "heartbeat_at"], unique=False)


def downgrade():
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.drop_index("ix_turns_outcome_heartbeat")
        batch_op.drop_column("heartbeat_at")
    with op.batch_alter_table("job_runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_job_runs_lease_until"))
    op.drop_table("job_runs")
