"""The next request the viewer reports is, message for message, the request the provider then
receives: under windows that bind and windows that do not, for every strategy, with pins,
left-out turns, a memory block that must shrink, and tools offered."""
import re

import pytest

from webapp.extensions import db
from webapp.llm import get_provider, profile
from webapp.llm.openai_provider import OpenAIProvider, to_openai_messages
from webapp.memories.models import Memory
from webapp.models import Turn

from . import llama_server
from .fakes.openai_server import FakeOpenAIServer
from .fakes.recording_proxy import RecordingProxy
from .support import ask, guest_user
from .test_provider_conformance import forget_endpoints, real_server  # noqa: F401  start-or-skip

LONG = ("I bought a rain jacket last month and the zip broke after two weeks of light use; "
        "I have the receipt and photos and I would like to know what my options are. ")
QUESTION = "And what about order #1042?"


@pytest.fixture
def server(app):
    with FakeOpenAIServer() as server:
        yield server


def long_conversation(user, strategy: str, turns: int = 14):
    _, conversation, _ = ask(user, "My name is Dara and I live in Lisbon. " + LONG)
    conversation.strategy = strategy
    conversation.settings = {"budget": 1500}
    db.session.commit()
    for i in range(turns - 1):
        ask(user, f"Question {i + 2}: {LONG * (1 + i % 3)}", conversation)
    return conversation


def remember(user, texts):
    for text in texts:
        db.session.add(Memory(tenant_id=user.tenant_id, content=text, source="hand",
                              memorable_type="account", memorable_id=user.id,
                              subject_id=user.id))
    db.session.commit()


def mark(conversation, seq: int, how: str):
    turn = db.session.query(Turn).filter_by(conversation_id=conversation.id, seq=seq).one()
    turn.mark = how
    db.session.commit()


def served_by(app, server, window):
    """The app answers through the fake server, whose window is `window` (None: not known)."""
    app.config.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test",
                      NIMBUS_MODEL="fake-model", NIMBUS_CONTEXT_WINDOW=window,
                      NIMBUS_MEMORY_SEARCH=False)  # memories in recency order: see docs/viewer.md
    profile.forget()
    return OpenAIProvider(api_key="test", base_url=server.base_url, model="fake-model",
                          timeout=5, profile_config=app.config)


def next_request_then_sent(app, guest, server, conversation, window):
    provider = served_by(app, server, window)
    shown = guest.get(f"/c/{conversation.id}/viewer.json").json["request"]
    page = guest.get(f"/c/{conversation.id}/viewer").text
    shown["page_sends"] = sorted(int(n) for n, fate in re.findall(
        r'data-turn="(\d+)" data-fate="(\w+)"', page) if fate in ("FULL", "COMPACTED", "PINNED"))
    words = " ".join(page[page.index('<p class="gauge-words">'):].split("</p>")[0].split())
    shown["page_sentence"] = re.sub(r"<[^>]+>", "", words)
    shown["questions"] = {t.seq + 1: t.question for t in db.session.query(Turn).filter_by(
        conversation_id=conversation.id)}
    server.reset()
    server.script({"text": "It shipped on Monday."})
    ask(conversation.user, QUESTION, conversation, provider=provider)
    return shown, server.requests[0]


def turns_received(shown, sent) -> list[int]:
    """The turns whose question the provider received, by number: the outside truth of which
    turns the request carried."""
    asked = [m["content"] for m in sent["messages"][:-1] if m["role"] == "user"]
    return sorted(n for n, question in shown["questions"].items() if question in asked)


@pytest.mark.parametrize("window", [None, 1100, 2048, 4096])
@pytest.mark.parametrize("strategy", ["compact", "window", "budget", "hybrid", "importance",
                                      "time"])
def test_the_viewer_reports_the_request_the_provider_receives(app, guest, server, window,
                                                              strategy):
    user = guest_user(guest)
    conversation = long_conversation(user, strategy)
    mark(conversation, 2, "pinned")
    mark(conversation, 11, "excluded")
    remember(user, [f"Note {i}: {LONG * 3}" for i in range(6)])
    shown, sent = next_request_then_sent(app, guest, server, conversation, window)
    assert sent["messages"][:-1] == to_openai_messages(shown["messages"])
    assert sent["messages"][-1] == {"role": "user", "content": QUESTION}
    received = turns_received(shown, sent)
    assert shown["page_sends"] == received, "the page's sent column is what was received"
    count = f"{len(received)} earlier turn{'s' if len(received) != 1 else ''}"
    assert (count if received else "none of this conversation's earlier turns") \
        in shown["page_sentence"], shown["page_sentence"]
    sent_tools = [t["function"]["name"] for t in sent.get("tools") or []]
    assert shown["window"]["tools"] == sent_tools, "the viewer names the tools that were sent"
    assert sent_tools, "tools are offered, and their room was planned for"
    if window == 1100:  # the window holds some of the tools: the memory tools go first
        assert "search_history" not in sent_tools and "lookup_order" in sent_tools
        assert shown["window"]["tools_left_out"][0] == "search_history"
    assert shown["window"]["window"] == window
    if window in (1100, 2048):
        assert shown["window"]["binds"], "the window is smaller than the plan"
    if window == 2048:
        memory = next((s for s in shown["sections"] if s["name"] == "memory"), None)
        assert memory is None or memory["detail"].get("left_out_to_fit"), \
            "the memory block had to shrink: six long notes do not fit beside the tools"


def test_a_window_that_binds_shows_fewer_earlier_turns_than_the_budget_alone(app, guest,
                                                                             server):
    conversation = long_conversation(guest_user(guest), "compact")
    provider = served_by(app, server, None)
    unbound = guest.get(f"/c/{conversation.id}/viewer.json").json["request"]
    served_by(app, server, 1400)
    bound = guest.get(f"/c/{conversation.id}/viewer.json").json["request"]
    assert len(bound["messages"]) < len(unbound["messages"])
    page = guest.get(f"/c/{conversation.id}/viewer").text
    assert "1,400-token window" in page
    assert provider is not None


@pytest.mark.timeout(600)
def test_the_viewer_reports_the_request_a_real_llama_server_receives(app, guest, real_server):  # noqa: F811
    """Once per run, the outside truth itself: llama-server says its own window (2,048 tokens),
    and a recording proxy in front of it keeps what it received."""
    if real_server.process is None or real_server.process.poll() is not None:
        real_server.start()  # an earlier test killed it on purpose
    user = guest_user(guest)
    conversation = long_conversation(user, "compact")
    mark(conversation, 2, "pinned")
    mark(conversation, 11, "excluded")
    remember(user, [f"Note {i}: {LONG * 3}" for i in range(6)])
    with RecordingProxy(real_server.base_url) as proxy:
        app.config.update(OPENAI_BASE_URL=proxy.base_url, OPENAI_API_KEY="test",
                          NIMBUS_MODEL=real_server.model_name, NIMBUS_CONTEXT_WINDOW=None,
                          NIMBUS_MAX_OUTPUT_TOKENS=64, NIMBUS_PROVIDER_TIMEOUT=120.0,
                          NIMBUS_MEMORY_SEARCH=False)
        forget_endpoints()
        shown = guest.get(f"/c/{conversation.id}/viewer.json").json["request"]
        ask(user, QUESTION, conversation, provider=get_provider(app.config))
        sent = proxy.chat_requests()[0]
    forget_endpoints()
    assert shown["window"]["window"] == llama_server.CONTEXT and shown["window"]["binds"]
    assert sent["messages"][:-1] == to_openai_messages(shown["messages"])
    assert sent["messages"][-1] == {"role": "user", "content": QUESTION}
