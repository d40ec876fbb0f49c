"""The chat's context gauge: the next request's sections against the budget, estimated or as the
provider reported, which turn goes next, refreshed with every finished reply."""
import re

from webapp.extensions import db
from webapp.context.request import plan_request

from .support import ask, guest_user, sse_events
from .viewer_support import refund_conversation, summarized_conversation


def sections(html: str) -> dict[str, int]:
    return {name: int(tokens.replace(",", "")) for name, tokens in
            re.findall(r'<dd data-section="(\w+)">([\d,]+)</dd>', html)}


def test_the_gauge_shows_the_next_requests_sections(app, guest):
    conversation = summarized_conversation(guest_user(guest))
    page = guest.get(f"/c/{conversation.id}").text
    plan = plan_request(conversation, app.config)
    assert sections(page) == {s.name: s.tokens for s in plan.sections}
    assert f"about {plan.total_tokens:,} tokens before your question" in page
    assert f"about {plan.shape.tool_tokens:,} more for the tool descriptions" in page
    assert "Next to be summarized as the conversation grows" in page


def test_the_gauge_names_what_the_provider_reported(guest):
    conversation = refund_conversation(guest_user(guest))
    call = conversation.turns[-1].manifest["calls"][0]
    reported = call["prompt_tokens"]
    assert reported  # the offline model reports usage like a real provider
    estimated = call["estimated_tokens"] + call["tool_tokens"]  # the tools are in its count
    page = guest.get(f"/c/{conversation.id}").text
    assert f"the provider counted {reported:,} tokens; we had estimated {estimated:,}" in page
    off = round(100 * (estimated - reported) / reported)
    assert (f"{abs(off)}% too" if off else "spot on") in page


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


def test_the_viewer_says_what_the_estimates_were_calibrated_by(guest):
    conversation = refund_conversation(guest_user(guest))
    db.session.refresh(conversation)
    page = guest.get(f"/c/{conversation.id}/viewer").text
    assert (f"scaled by ×{conversation.token_ratio:.2f}: the ratio learnt from what the provider "
            "counted for 3 replies") in page
    _, fresh, _ = ask(guest_user(guest), "Hello")
    for turn in fresh.turns:
        turn.prompt_tokens = None  # as after an import: nothing was counted
    db.session.commit()
    assert "not yet checked against the provider" in guest.get(f"/c/{fresh.id}/viewer").text
