"""Bug 10: "my other order" with no number names the likely order and offers; "yes please" acts."""
import re
from datetime import timedelta

from sqlalchemy import select

from webapp.extensions import db
from webapp.models import utcnow
from webapp.shop.models import Order, Ticket

from .support import ask, sse_events, wait_for_replies


def tools_called(events) -> list[str]:
    return [e.data["tool"] for e in events if e.kind == "tool_call"]


def test_other_order_names_the_most_recent_one_and_the_refundable_one(alex):
    _, conversation, _ = ask(alex, "Can I get a refund for order #1043?")
    answer, _, events = ask(alex, "OK. What about my other order?", conversation)
    assert tools_called(events) == ["list_orders"]
    assert "Which order do you mean?" not in answer
    assert "most recent other order is **#1044**" in answer and "yesterday" in answer
    assert "still pending" in answer
    assert "order #1042 is eligible for a refund" in answer and "3 days ago" in answer
    assert answer.endswith("Would you like me to open a refund request for it?")


def test_yes_please_opens_the_offered_refund_ticket(alex):
    _, conversation, _ = ask(alex, "Can I get a refund for order #1043?")
    ask(alex, "OK. What about my other order?", conversation)
    answer, _, events = ask(alex, "yes please", conversation)
    assert tools_called(events) == ["create_support_ticket"]
    ticket = db.session.scalar(select(Ticket).where(Ticket.customer_id == alex.id))
    order = db.session.get(Order, ticket.order_id)
    assert ticket.category == "refund" and order.number == 1042
    assert f"ticket #{ticket.number} for your refund on order #1042" in answer


def test_an_eligible_most_recent_order_is_offered_directly(alex):
    db.session.add(Order(tenant_id=alex.tenant_id, customer_id=alex.id, number=1046,
                         item="Teapot", amount_cents=3000, status="paid",
                         purchased_at=utcnow() - timedelta(hours=2)))
    db.session.commit()
    _, conversation, _ = ask(alex, "Can I get a refund for order #1043?")
    answer, _, _ = ask(alex, "What about my other order?", conversation)
    assert "most recent other order is **#1046** (Teapot, $30.00), from today" in answer
    assert "order #1046 is eligible for a refund" in answer and "#1042" not in answer


def test_without_an_earlier_order_it_still_asks_which(alex):
    answer, _, events = ask(alex, "What about the other order?")
    assert "Which order do you mean?" in answer and tools_called(events) == []


def test_the_chat_route_offers_and_then_opens_the_ticket(guest):
    sent = guest.post("/messages", data={"message": "Can I get a refund for order #1043?"})
    conversation = sent.headers["HX-Push-Url"].rsplit("/", 1)[1]
    guest.get(f"/c/{conversation}/turns/0/stream")
    done = {}
    for seq, message in ((1, "OK. What about my other order?"), (2, "yes please")):
        wait_for_replies(guest.application)
        assert guest.post(f"/c/{conversation}/messages", data={"message": message}).status_code == 200
        done[seq] = sse_events(guest.get(f"/c/{conversation}/turns/{seq}/stream").text)[-1][1]
    assert "order #1042 is eligible for a refund" in done[1]
    ticket = re.search(r"ticket #(\d+) for your refund on order #1042", done[2])
    assert ticket, done[2]


def test_outside_a_refund_it_names_the_order_and_yes_checks_it(alex):
    _, conversation, _ = ask(alex, "Where is my order #1041?")
    answer, _, events = ask(alex, "And my other order?", conversation)
    assert tools_called(events) == ["list_orders"]
    assert "most recent other order is **#1044**" in answer and "**pending**" in answer
    answer, _, events = ask(alex, "yes please", conversation)
    assert tools_called(events) == ["check_refund_eligibility"]
    assert "order #1044 can't be refunded" in answer
