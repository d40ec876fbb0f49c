"""A window too small for every tool spec beside the system prompt, a message and a reply keeps
as many as it holds, giving up the memory tools first and the shop's as late as it can
(context/tool_fit.py), and only a window that holds none of them is answered without tools.
The request the server received (read through a recording proxy in front of the llama-server
fake), the viewer's next request and as-sent view, the banner, the start line and the log all
name the same tools."""
import logging

import pytest

from webapp.context import tool_fit
from webapp.llm import get_provider, openai_provider, profile
from webapp.llm.calls import _SLOTS
from webapp.llm.profile import announce
from webapp.llm.server_counts import count_with_server
from webapp.models import Turn

from .fakes.compat_servers import CompatServer
from .fakes.recording_proxy import RecordingProxy
from .fakes.scripted_model import ScriptedModel
from .support import ask, guest_user, use_provider
from .test_provider_conformance import real_server  # noqa: F401  the same start-or-skip

SHOP = ["lookup_order", "list_orders", "check_refund_eligibility", "create_support_ticket",
        "list_tickets", "search_help_center"]
MEMORY = ["save_memory", "search_memories", "search_history"]
NONE_FIT = "window can't hold the tools' descriptions"


@pytest.fixture
def served(app):
    openai_provider.QUIRKS.clear()
    profile.forget()
    _SLOTS.clear()
    tool_fit._WARNED.clear()
    with CompatServer("llama-server") as server, RecordingProxy(server.base_url) as proxy:
        app.config.update(OPENAI_BASE_URL=proxy.base_url, OPENAI_API_KEY="test",
                          NIMBUS_MODEL="fake-model")
        yield proxy
    profile.forget()
    _SLOTS.clear()


def banner(guest, path="/") -> str:
    page = guest.get(path).text
    return page[page.index('id="provider-banner"'):].split("</p>")[0]


def tools_of(request: dict) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools") or []]


@pytest.mark.parametrize("window, sent", [(1536, SHOP), (4096, SHOP + MEMORY)])
def test_the_request_carries_the_tools_its_window_holds_and_the_viewer_says_which(
        app, guest, served, window, sent):
    """At 1,536 tokens the fake counts all nine specs too large: the memory tools go, the shop's
    stay; at 4,096 all are sent. The viewer's next request is what the next call receives, and
    its as-sent view is what the first one received."""
    app.config["NIMBUS_CONTEXT_WINDOW"] = window
    user, provider = guest_user(guest), get_provider(app.config)
    _, conversation, _ = ask(user, "Hello", provider=provider)
    first = served.chat_requests()[-1]
    assert tools_of(first) == sent
    as_sent = guest.get(f"/c/{conversation.id}/viewer/turns/1/sent.json").json["manifest"]
    assert as_sent["tools"] == sent
    assert as_sent.get("tools_left_out", []) == [t for t in reversed(MEMORY) if t not in sent]
    shown = guest.get(f"/c/{conversation.id}/viewer.json").json["request"]["window"]
    ask(user, "And then?", conversation=conversation, provider=provider)
    assert shown["tools"] == tools_of(served.chat_requests()[-1]) == sent
    said = banner(guest, f"/c/{conversation.id}")
    if window == 4096:
        assert shown["tools_words"] is None and "left out" not in said
    else:
        assert shown["tools_words"] == ("search_history, search_memories, save_memory left out: "
                                        "the 1,536-token window holds 6 of 9 tools beside "
                                        "Nimbus's instructions, a message and a reply")
        assert "Left out to fit: search_history, search_memories, save_memory" in \
            guest.get(f"/c/{conversation.id}/viewer").text
        assert "window holds 6 of 9 tools" in said
        assert "search_history, search_memories, save_memory are left out" in said


def test_calibration_subtracts_the_tokens_of_the_tools_sent(app, guest, served):
    """The manifest's tool tokens (what calibration takes off the server's prompt count) are the
    server's own count of exactly the specs the request carried."""
    app.config["NIMBUS_CONTEXT_WINDOW"] = 1536
    _, conversation, _ = ask(guest_user(guest), "Hello", provider=get_provider(app.config))
    sent = served.chat_requests()[-1]["tools"]
    call = Turn.query.filter_by(conversation_id=conversation.id).one().manifest["calls"][0]
    assert call["tool_tokens"] == count_with_server(
        app.config["OPENAI_BASE_URL"], "test", [t["function"] for t in sent])


def test_at_1024_tokens_the_order_tools_are_sent_and_used(app, guest, served):
    app.config["NIMBUS_CONTEXT_WINDOW"] = 1024
    _, conversation, _ = ask(guest_user(guest), "Where is my order #1041?",
                             provider=get_provider(app.config))
    assert tools_of(served.chat_requests()[0]) == SHOP[:3]
    turn = Turn.query.filter_by(conversation_id=conversation.id).one()
    assert turn.outcome == "answered"
    assert [s["tool"] for s in turn.trace if s["kind"] == "tool_call"] == ["lookup_order"]


def test_a_window_that_holds_no_tool_is_answered_without_tools(app, guest, served):
    app.config["NIMBUS_CONTEXT_WINDOW"] = 640
    _, conversation, _ = ask(guest_user(guest), "Hello", provider=get_provider(app.config))
    assert "tools" not in served.chat_requests()[-1]
    assert Turn.query.filter_by(conversation_id=conversation.id).one().outcome == "answered"
    assert NONE_FIT in banner(guest)
    manifest = guest.get(f"/c/{conversation.id}/viewer/turns/1/sent.json").json["manifest"]
    assert manifest["tools"] == [] and len(manifest["tools_left_out"]) == 9


def test_a_tool_the_window_left_out_is_not_run(app, alex):
    """A model that calls a tool it was not offered is told it does not exist."""
    app.config["NIMBUS_CONTEXT_WINDOW"] = 1280
    model = ScriptedModel({"tool": "search_history", "arguments": {"query": "refund"}}, "Done.")
    use_provider(app, model)
    _, conversation, events = ask(alex, "What did we say about refunds?", provider=model)
    result = next(e.data["result"] for e in events if e.kind == "tool_result")
    assert result == {"error": "Unknown tool: search_history"}


def test_a_message_is_taken_at_1024_tokens(app, guest, served):
    app.config["NIMBUS_CONTEXT_WINDOW"] = 1024
    response = guest.post("/messages", data={"message": "Where is my order #1041?"},
                          headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert Turn.query.count() == 1


def test_the_start_line_and_a_warning_name_the_tools_left_out(app, served, monkeypatch, caplog):
    monkeypatch.setenv("OPENAI_BASE_URL", app.config["OPENAI_BASE_URL"])
    app.config["NIMBUS_CONTEXT_WINDOW"] = 1536
    with caplog.at_level(logging.INFO):
        announce(app, tool_fit.fit_tools)
    said = [(r.levelno, r.getMessage()) for r in caplog.records]
    start = next(text for _, text in said if text.startswith("provider:"))
    assert ("6 of 9 tools offered (search_history, search_memories, save_memory left out: the "
            "1,536-token window holds 6 of 9 tools") in start
    assert any(level == logging.WARNING and "search_history, search_memories, save_memory left "
               "out" in text and "-c 2048" in text for level, text in said)


def test_the_start_line_says_no_tools_where_none_fit(app, served, monkeypatch, caplog):
    monkeypatch.setenv("OPENAI_BASE_URL", app.config["OPENAI_BASE_URL"])
    app.config["NIMBUS_CONTEXT_WINDOW"] = 640
    with caplog.at_level(logging.INFO):
        announce(app, tool_fit.fit_tools)
    start = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("provider:"))
    assert "no tools (all 9 tools left out: the 640-token window cannot hold" in start


def test_the_warning_names_a_window_that_holds_every_tool(app, served, monkeypatch, caplog):
    """The real SmolLM2 counts the default tools at 1,058 tokens: beside a 512-token reply,
    2,048 tokens cannot hold them all, and the advice says what does."""
    monkeypatch.setenv("OPENAI_BASE_URL", app.config["OPENAI_BASE_URL"])
    app.config["NIMBUS_CONTEXT_WINDOW"] = 2048
    monkeypatch.setattr(tool_fit, "tool_tokens",
                        lambda config, profile, specs: (round(1058 * len(specs) / 9), True))
    with caplog.at_level(logging.INFO):
        announce(app, tool_fit.fit_tools)
    warning = next(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING
                   and "left out" in r.getMessage())
    assert "search_history left out: the 2,048-token window holds 8 of 9 tools" in warning
    assert "-c 4096 or more" in warning


@pytest.mark.timeout(300)
def test_a_real_llama_server_at_2048_tokens_gets_the_shop_tools(app, guest,
                                                              real_server):  # noqa: F811
    """On the defaults (memory tools on, a 512-token reply) SmolLM2's Hermes template counts the
    nine specs too large for 2,048 tokens: search_history goes first, the shop's tools stay,
    and the request carries exactly the tools the viewer names."""
    profile.forget()
    _SLOTS.clear()
    with RecordingProxy(real_server.base_url) as proxy:
        app.config.update(OPENAI_BASE_URL=proxy.base_url, OPENAI_API_KEY="test",
                          NIMBUS_MODEL=real_server.model_name, NIMBUS_CONTEXT_WINDOW=2048,
                          NIMBUS_PROVIDER_TIMEOUT=120.0)
        fit = tool_fit.fit_tools(app.config)
        assert set(SHOP) <= set(fit.names) and fit.left_out[:1] == ["search_history"], fit
        _, conversation, _ = ask(guest_user(guest), "Hello", provider=get_provider(app.config))
        assert tools_of(proxy.chat_requests()[0]) == fit.names
        manifest = Turn.query.filter_by(conversation_id=conversation.id).one().manifest
        assert manifest["tools"] == fit.names
    profile.forget()
    _SLOTS.clear()
