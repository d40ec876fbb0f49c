"""A tool that changes something runs only when the customer asked for it: a weak model's
unprompted call creates nothing, the model reads that it was refused, and the chat asks the
customer Yes / No; their yes (or their own words) lets the next call run."""
import json

from webapp.extensions import db
from webapp.shop.models import Ticket

from .fakes.scripted_model import ScriptedModel
from .support import ask, guest_user, use_provider
from .viewer_support import REFUND_QUESTIONS

TICKET = {"tool": "create_support_ticket",
          "arguments": {"category": "refund", "summary": "Refund check", "order_id": 1043}}


def tickets(user) -> int:
    return db.session.query(Ticket).filter_by(customer_id=user.id).count()


def tool_result(events) -> dict:
    return next(e.data["result"] for e in events if e.kind == "tool_result")


def test_a_write_tool_the_customer_did_not_ask_for_creates_nothing(app, guest):
    user = guest_user(guest)
    model = ScriptedModel(TICKET, "Would you like me to open a ticket?")
    _, conversation, events = ask(user, "Please repeat the refund check for order 1043.",
                                  provider=model)
    assert tickets(user) == 0
    result = tool_result(events)
    assert result["error"].startswith("Not run: the customer has not asked for this")
    sent_back = json.loads(model.requests[1][-1]["content"])
    assert sent_back["error"] == result["error"], "the model is told the call was refused"
    page = guest.get(f"/c/{conversation.id}").text
    assert "Open a support ticket about order #1043?" in page
    assert "Yes, please open a support ticket about order #1043." in page  # what Yes sends
    assert 'class="button button--quiet approval-no"' in page


def test_the_customers_yes_lets_the_call_run(app, guest):
    user = guest_user(guest)
    use_provider(app, ScriptedModel(TICKET, "Shall I open a ticket?", TICKET, "Opened."))
    model = app.extensions["provider_factory"](app.config)
    _, conversation, _ = ask(user, "Please repeat the refund check for order 1043.",
                             provider=model)
    _, _, events = ask(user, "Yes, please open a support ticket about order #1043.",
                       conversation, provider=model)
    assert tool_result(events)["created"] is True
    assert tickets(user) == 1
    page = guest.get(f"/c/{conversation.id}").text
    assert "approval-yes" not in page, "the question goes once it is answered"


def test_a_yes_to_an_offer_is_asking(app, guest):
    user = guest_user(guest)
    model = ScriptedModel("Order #1043 is eligible. Would you like me to open a refund request?",
                          TICKET, "Done: ticket opened.")
    _, conversation, _ = ask(user, "Can I get a refund for order #1043?", provider=model)
    _, _, events = ask(user, "Yes please.", conversation, provider=model)
    assert tool_result(events)["created"] is True and tickets(user) == 1


def test_a_yes_without_an_offer_is_not(app, guest):
    user = guest_user(guest)
    model = ScriptedModel("Order #1043 shipped on Monday.", TICKET, "I need your go-ahead.")
    _, conversation, _ = ask(user, "Where is order #1043?", provider=model)
    ask(user, "OK.", conversation, provider=model)
    assert tickets(user) == 0


def test_the_offline_refund_flow_still_opens_its_ticket(app, guest):
    user = guest_user(guest)
    _, conversation, _ = ask(user, REFUND_QUESTIONS[0])  # #1043: past the refund window
    ask(user, REFUND_QUESTIONS[1], conversation)  # #1042: eligible, and offered
    assert tickets(user) == 0
    ask(user, REFUND_QUESTIONS[2], conversation)  # "Yes please."
    assert tickets(user) == 1
