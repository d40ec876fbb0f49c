"""Nimbus's shop tools: orders, refund eligibility, support tickets (open and list), help-center search."""
import re

from sqlalchemy import select

from ..agent import tool
from ..extensions import db
from ..models import utcnow
from .models import HelpArticle, Order, Ticket

REFUND_WINDOW_DAYS = 14
CATEGORIES = ["refund", "shipping", "product", "account", "other"]


def find_order(context, number) -> Order | None:
    """Only the signed-in customer's own orders: an order number alone proves nothing."""
    return db.session.scalar(select(Order).where(
        Order.tenant_id == context.tenant.id, Order.customer_id == context.user.id,
        Order.number == int(number)))


def describe(order: Order) -> dict:
    return {"order_id": order.number, "item": order.item, "status": order.status,
            "amount": f"${order.amount_cents / 100:.2f}",
            "purchased_on": order.purchased_at.date().isoformat(),
            "days_since_purchase": (utcnow() - order.purchased_at).days}


@tool("lookup_order", "Look up one of the customer's orders by its order number.",
      {"order_id": {"type": "integer", "description": "The order number, e.g. 1042"}},
      required=["order_id"])
def lookup_order(context, args):
    order = find_order(context, args["order_id"])
    if order is None:
        return {"error": f"No order #{args['order_id']} on this customer's account."}
    return describe(order)


def refund_verdict(order: Order, days: int) -> tuple[bool, str]:
    """The one refund rule: paid orders, within the window."""
    if order.status != "paid":
        return False, f"Only paid orders can be refunded; this one is {order.status}."
    if days > REFUND_WINDOW_DAYS:
        return False, f"Purchased {days} days ago; the refund window is {REFUND_WINDOW_DAYS} days."
    return True, f"Paid and within the refund window ({REFUND_WINDOW_DAYS - days} days left)."


@tool("list_orders", "List the customer's orders, newest first, with item, amount, status and "
      "whether each can be refunded.", {})
def list_orders(context, args):
    orders = db.session.scalars(select(Order).where(
        Order.tenant_id == context.tenant.id, Order.customer_id == context.user.id)
        .order_by(Order.purchased_at.desc()).limit(50))
    listed = []
    for order in orders:
        described = describe(order)
        described["refund_eligible"] = refund_verdict(order, described["days_since_purchase"])[0]
        listed.append(described)
    return {"orders": listed, "refund_window_days": REFUND_WINDOW_DAYS}


@tool("check_refund_eligibility",
      f"Check whether an order can be refunded (paid orders, within {REFUND_WINDOW_DAYS} days).",
      {"order_id": {"type": "integer", "description": "The order number, e.g. 1042"}},
      required=["order_id"])
def check_refund_eligibility(context, args):
    order = find_order(context, args["order_id"])
    if order is None:
        return {"error": f"No order #{args['order_id']} on this customer's account."}
    result = describe(order)
    eligible, reason = refund_verdict(order, result["days_since_purchase"])
    return {**result, "refund_window_days": REFUND_WINDOW_DAYS, "eligible": eligible,
            "reason": reason}


# The customer's words that ask for a ticket (or a refund, which a ticket requests).
ASKS_FOR_TICKET = re.compile(
    r"\b(open|create|file|raise|make|submit|log|start|send|want|need|like|request)\b[^.?!]{0,40}"
    r"\b(ticket|complaint|case|claim|refund|money back)"
    r"|\b(escalate|complain)|\b(speak|talk) to (a |an |some)?(human|person|agent|someone|support)"
    r"|\brefund (me|it|this|that|order)|\bget (my )?money back", re.I)


def about_order(args: dict) -> str:
    return f" about order #{args['order_id']}" if args.get("order_id") is not None else ""


@tool("create_support_ticket", "Open a support ticket for the customer, e.g. a refund request.",
      {"category": {"type": "string", "enum": CATEGORIES},
       "summary": {"type": "string", "description": "One sentence for the support team"},
       "order_id": {"type": "integer", "description": "The order number, if about an order"}},
      required=["category", "summary"], asks=ASKS_FOR_TICKET,
      approval=lambda args: f"Open a support ticket{about_order(args)}?",
      confirm=lambda args: f"Yes, please open a support ticket{about_order(args)}.")
def create_support_ticket(context, args):
    category = args["category"] if args["category"] in CATEGORIES else "other"
    order = None
    if args.get("order_id") is not None:
        order = find_order(context, args["order_id"])
        if order is None:
            return {"error": f"No order #{args['order_id']} on this customer's account."}
    ticket = Ticket(tenant_id=context.tenant.id, customer_id=context.user.id,
                    order_id=order.id if order else None, category=category,
                    summary=str(args["summary"])[:1000])
    db.session.add(ticket)
    db.session.commit()
    return {"created": True, "ticket_id": ticket.number, "status": ticket.status,
            "order_id": order.number if order else None}


@tool("list_tickets", "List the customer's support tickets, newest first, with status, category, "
      "what each is about and its order.", {})
def list_tickets(context, args):
    tickets = db.session.scalars(select(Ticket).where(
        Ticket.tenant_id == context.tenant.id, Ticket.customer_id == context.user.id)
        .order_by(Ticket.id.desc()).limit(50)).all()
    orders = {o.id: o.number for o in db.session.scalars(select(Order).where(
        Order.id.in_({t.order_id for t in tickets if t.order_id})))}
    return {"tickets": [{"ticket_id": t.number, "status": t.status, "category": t.category,
                         "summary": t.summary, "order_id": orders.get(t.order_id),
                         "opened_on": t.created_at.date().isoformat()} for t in tickets]}


QUESTION_WORDS = {"how", "what", "when", "where", "why", "which", "who", "can", "could", "does",
                  "the", "and", "you", "your", "for", "are", "have", "with", "there", "any", "get"}


def stem(word: str) -> str:
    """A rough stem, so "returns", "cancelling" and "internationally" find "return", "cancel"…"""
    for suffix in ("ly", "ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[:-len(suffix)]
            break
    if len(word) > 4 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]  # cancell → cancel, shipp → ship
    return word


def words(text: str) -> set[str]:
    """Stems of the lower-cased words of three letters or more, question words left out."""
    found = re.findall(r"[a-z0-9]+", text.lower())
    return {stem(w) for w in found if len(w) > 2 and w not in QUESTION_WORDS}


@tool("search_help_center", "Search the shop's help-center articles (shipping, returns, payment…).",
      {"query": {"type": "string", "description": "What the customer wants to know"}},
      required=["query"])
def search_help_center(context, args):
    query = words(str(args["query"]))
    articles = db.session.scalars(
        select(HelpArticle).where(HelpArticle.tenant_id == context.tenant.id)).all()
    scored = []
    for article in articles:
        title, body = words(article.title), words(article.body)
        score = 3 * len(query & title) + len(query & body)
        if score:
            scored.append((score, article))
    scored.sort(key=lambda pair: (-pair[0], pair[1].id))
    return {"results": [{"title": a.title, "slug": a.slug, "excerpt": a.body[:400]}
                        for _, a in scored[:3]]}


TOOLS = (lookup_order, list_orders, check_refund_eligibility, create_support_ticket,
         list_tickets, search_help_center)
