"""The shop's data: every row belongs to a tenant, orders and tickets also to a customer."""
from datetime import datetime

from sqlalchemy import ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from ..extensions import db
from ..models import utcnow

TICKET_NUMBER_OFFSET = 5000  # ticket numbers read like the seed's (#5001, #5002, …)


class Order(db.Model):
    __tablename__ = "orders"
    __table_args__ = (UniqueConstraint("customer_id", "number", name="uq_order_number"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), index=True)
    customer_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    number: Mapped[int]  # what the customer calls it: "order #1042"
    item: Mapped[str] = mapped_column(String(200))
    amount_cents: Mapped[int]
    status: Mapped[str] = mapped_column(String(20))  # pending, paid, shipped, refunded, cancelled
    purchased_at: Mapped[datetime]


class Ticket(db.Model):
    __tablename__ = "tickets"
    id: Mapped[int] = mapped_column(primary_key=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), index=True)
    customer_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    order_id: Mapped[int | None] = mapped_column(ForeignKey("orders.id", ondelete="SET NULL"))
    category: Mapped[str] = mapped_column(String(20))
    summary: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20), default="open")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    @property
    def number(self) -> int:
        return TICKET_NUMBER_OFFSET + self.id


class HelpArticle(db.Model):
    __tablename__ = "help_articles"
    __table_args__ = (UniqueConstraint("tenant_id", "slug", name="uq_article_slug"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), index=True)
    slug: Mapped[str] = mapped_column(String(100))
    title: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text)
