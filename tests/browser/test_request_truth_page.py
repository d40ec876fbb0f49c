"""The chat's gauge and trimming notes, read in a real browser after each reply, against what a
recording fake OpenAI-compatible server received and counted: the outside truth."""
import re

import pytest
from playwright.sync_api import expect

from webapp.extensions import db
from webapp.llm import openai_provider, profile
from webapp.llm.calls import _SLOTS
from webapp.llm.tokens import estimate_messages
from webapp.models import Conversation

from tests.browser.test_chat_page import send
from tests.fakes.openai_server import FakeOpenAIServer

FILLER = "The parcel came with a torn corner and a missing manual, and I would like it noted. "
QUESTIONS = [f"Note {n}: {FILLER * (1 + n % 2)}".strip() for n in range(1, 7)]


@pytest.fixture
def served(live_app, monkeypatch):
    """The live app answers through a fake server that counts each request's prompt its own
    way (not Nimbus's estimate) and keeps what it received and what it counted."""
    counted = []

    def answer(request):
        tokens = 300 + 11 * len(request["messages"])
        counted.append((request, tokens))
        return {"text": "Noted.", "usage": {"prompt_tokens": tokens, "completion_tokens": 2}}

    openai_provider.QUIRKS.clear()
    profile.forget()
    _SLOTS.clear()
    with FakeOpenAIServer(autoreply=answer) as server:
        for key, value in (("OPENAI_BASE_URL", server.base_url), ("OPENAI_API_KEY", "test"),
                           ("NIMBUS_MODEL", "fake-model"), ("NIMBUS_MEMORY_TOOLS", False),
                           ("NIMBUS_MODEL_TITLES", False),  # only replies reach the server
                           ("NIMBUS_MEMORY_DISTIL_ON_COMPRESS", False)):
            monkeypatch.setitem(live_app.config, key, value)
        yield counted
    profile.forget()
    _SLOTS.clear()


def asked(request) -> list[str]:
    return [m["content"] for m in request["messages"][:-1] if m["role"] == "user"]


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_gauge_and_the_note_after_each_reply_match_what_the_server_received(page, live_app,
                                                                               served):
    page.goto("/")
    send(page, QUESTIONS[0], 0)
    conversation = re.search(r"/c/([0-9a-f]{32})", page.url).group(1)
    with live_app.app_context():
        row = db.session.get(Conversation, conversation)
        row.strategy, row.settings = "window", {"recent_turns": 2}
        db.session.commit()
        db.session.remove()
    gauge = page.locator("#context-gauge")
    for seq, question in enumerate(QUESTIONS[1:], 1):
        shown_next = None
        if seq > 1:
            gauge.locator("summary").click()
            shown_next = number(re.search(r"about ([\d,]+) tokens before your question",
                                          gauge.inner_text()).group(1))
            gauge.locator("summary").click()
        planned_with = ratio(live_app, conversation)
        send(page, question, seq)
        request, tokens = served[-1]
        assert request["messages"][-1] == {"role": "user", "content": question}
        if shown_next is not None:  # the gauge before the send: this request, before its question
            received = round(estimate_messages(request["messages"][:-1]) * planned_with)
            assert abs(shown_next - received) <= 4, (shown_next, received)
        gauge.locator("summary").click()
        expect(gauge).to_contain_text(f"the provider counted {tokens:,} tokens")
        gauge.locator("summary").click()
        before = asked(served[-2][0]) if len(served) > 1 else []
        left = [QUESTIONS.index(q) + 1 for q in before if q not in asked(request)]
        note = page.locator(f"#trim-note-{seq}")
        if left:
            expect(note).to_contain_text(f"Turn {left[0]} dropped" if len(left) == 1 else "dropped")
            for turn in left:
                expect(note.locator(".trim-note-turn", has_text=str(turn))).to_have_attribute(
                    "href", re.compile(rf"#turn-{turn}-question$"))
        else:
            expect(note).to_have_count(0)
    assert any(page.locator(".trim-note").all()), "the window strategy dropped turns"


def ratio(live_app, conversation) -> float:
    """The calibrated ratio the request was planned with (it moves after each reply)."""
    with live_app.app_context():
        found = db.session.get(Conversation, conversation).token_ratio or 1.0
        db.session.remove()
        return found
