"""Demo data: a shop tenant, customers with orders dated relative to today, help articles."""
from datetime import timedelta

from sqlalchemy import select

from ..extensions import db
from ..models import User, utcnow
from .models import HelpArticle, Order

# (number, item, amount in cents, status, days ago): #1042 is refundable, #1043 is too old.
DEMO_ORDERS = [
    (1041, "Rain jacket", 8900, "shipped", 45),
    (1042, "Wireless headphones", 7900, "paid", 3),
    (1043, "Espresso grinder", 12900, "paid", 20),
    (1044, "Wool socks (3 pairs)", 2400, "pending", 1),
    (1045, "Desk lamp", 4500, "refunded", 10),
]

HELP_ARTICLES = [
    ("refund-policy", "Refund policy",
     "Paid orders can be refunded within 14 days of purchase. Ask Nimbus or open a ticket; "
     "refunds reach your card within 5 to 7 business days after approval."),
    ("returns", "How to return an item",
     "Print the prepaid return label from your order page, pack the item in its original box "
     "and drop it at any parcel shop within 30 days. Returns are free."),
    ("shipping-times", "Shipping times",
     "Standard shipping takes 3 to 5 business days; express shipping takes 1 to 2 business days. "
     "Orders placed before 2 pm ship the same day."),
    ("shipping-costs", "Shipping costs",
     "Standard shipping is free over $50, otherwise $4.95. Express shipping costs $12."),
    ("order-tracking", "Tracking your order",
     "Every shipped order gets a tracking link by email. Tracking updates can take 24 hours "
     "to appear after shipping."),
    ("payment-methods", "Payment methods",
     "We accept Visa, Mastercard, American Express, PayPal and gift cards. Payment is taken "
     "when the order is placed."),
    ("cancel-order", "Cancelling an order",
     "Pending orders can be cancelled from your order page until they ship. Shipped orders "
     "must be returned instead."),
    ("change-address", "Changing your delivery address",
     "You can change the delivery address of a pending order from your order page. Once an "
     "order has shipped, contact support."),
    ("damaged-item", "Damaged or faulty items",
     "If an item arrives damaged, send us a photo within 7 days and we replace it for free or "
     "refund it, even after the refund window."),
    ("account-password", "Resetting your password",
     "To reset your password: 1. Open the sign-in page and choose 'Forgot password'. 2. Enter "
     "the email address of your account. 3. Open the reset link in the email we send you; it is "
     "valid for one hour. 4. Choose a new password and sign in with it."),
    ("contact-support", "Contacting support",
     "Our support team answers by email at support@example.com and by phone at 555-0100, "
     "Monday to Friday, 9 am to 6 pm. You can also ask Nimbus to open a support ticket."),
    ("warranty", "Warranty",
     "Every item carries a 2-year warranty against manufacturing faults. For a warranty claim, "
     "open a support ticket with your order number and a photo of the fault."),
    ("international-shipping", "International shipping",
     "We ship internationally to the EU, the UK, Canada and Australia. International delivery "
     "takes 7 to 14 business days and costs $19; import duties are paid on delivery."),
    ("gift-cards", "Gift cards",
     "Gift cards never expire and can be combined with any payment method at checkout."),
]

DEMO_CUSTOMERS = [("alex@example.com", "Alex Rivera"), ("sam@example.com", "Sam Chen")]


def give_demo_orders(user: User) -> None:
    """Give a customer the demo orders they do not have yet, dated relative to now."""
    have = set(db.session.scalars(select(Order.number).where(Order.customer_id == user.id)))
    now = utcnow()
    for number, item, cents, status, days_ago in DEMO_ORDERS:
        if number not in have:
            db.session.add(Order(tenant_id=user.tenant_id, customer_id=user.id, number=number,
                                 item=item, amount_cents=cents, status=status,
                                 purchased_at=now - timedelta(days=days_ago, hours=1)))


def seed_help_center(tenant_id: int) -> None:
    have = set(db.session.scalars(
        select(HelpArticle.slug).where(HelpArticle.tenant_id == tenant_id)))
    for slug, title, body in HELP_ARTICLES:
        if slug not in have:
            db.session.add(HelpArticle(tenant_id=tenant_id, slug=slug, title=title, body=body))
