"""The chat's context gauge: the next request's sections against the budget, estimated or as the
provider reported, which turn goes next, refreshed with every finished reply."""
import re

from webapp.extensions import db
from webapp.context.assemble import assemble

from .support import ask, guest_user, sse_events
from .viewer_support import refund_conversation, summarized_conversation


def sections(html: str) -> dict[str, int]:
    return {name: int(tokens.replace(",", "")) for name, tokens in
            re.findall(r'<dd data-section="(\w+)">([\d,]+)</dd>', html)}


def test_the_gauge_shows_the_next_requests_sections(app, guest):
    conversation = summarized_conversation(guest_user(guest))
    page = guest.get(f"/c/{conversation.id}").text
    plan = assemble(conversation, app.config)
    assert sections(page) == {s.name: s.tokens for s in plan.sections}
    assert "(estimated)" in page and f"≈ {plan.total_tokens:,} tokens" in page
    assert "Next to be summarized as the conversation grows" in page


def test_the_gauge_names_what_the_provider_reported(guest):
    conversation = refund_conversation(guest_user(guest))
    reported = conversation.turns[-1].manifest["calls"][0]["prompt_tokens"]
    assert reported  # the offline model reports usage like a real provider
    assert f"The last one was {reported:,} tokens" in guest.get(f"/c/{conversation.id}").text


def test_a_window_conversation_says_the_next_turn_to_be_dropped(guest):
    user = guest_user(guest)
    _, conversation, _ = ask(user, "Can I get a refund for order #1043?")
    conversation.strategy = "window"
    db.session.commit()
    ask(user, "What about 1042?", conversation)
    ask(user, "Thanks", conversation)
    page = guest.get(f"/c/{conversation.id}").text
    assert 'Next to be dropped as the conversation grows: <a href="#turn-2-question">turn 2</a>' in page


def test_the_done_event_refreshes_the_gauge(guest):
    conversation = refund_conversation(guest_user(guest))
    done = dict(sse_events(guest.get(f"/c/{conversation.id}/turns/2/stream").text))["done"]
    assert '<details class="context-gauge" id="context-gauge" hx-swap-oob="true">' in done
    assert sections(done)["history"] > 0


def test_a_new_chat_has_no_gauge(guest):
    assert "gauge-popover" not in guest.get("/").text
