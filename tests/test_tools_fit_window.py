"""A window too small to hold the tool specs beside the system prompt, a message and a reply
(llama-server's -c 1024: the specs alone take most of it) is answered without tools, and the
banner, the start line and the log say so, rather than every message being refused. What the
server received is read through a recording proxy in front of the llama-server fake."""
import logging

import pytest

from webapp.llm import get_provider, openai_provider, profile
from webapp.llm.calls import _SLOTS
from webapp.llm.profile import announce
from webapp.models import Turn

from .fakes.compat_servers import CompatServer
from .fakes.recording_proxy import RecordingProxy
from .support import ask, guest_user

LEFT_OUT = "window can't hold the tools' descriptions"


@pytest.fixture
def served(app):
    openai_provider.QUIRKS.clear()
    profile.forget()
    _SLOTS.clear()
    with CompatServer("llama-server") as server, RecordingProxy(server.base_url) as proxy:
        app.config.update(OPENAI_BASE_URL=proxy.base_url, OPENAI_API_KEY="test",
                          NIMBUS_MODEL="fake-model", NIMBUS_MEMORY_TOOLS=False)
        yield proxy
    profile.forget()
    _SLOTS.clear()


def banner(guest) -> str:
    page = guest.get("/").text
    return page[page.index('id="provider-banner"'):].split("</p>")[0]


@pytest.mark.parametrize("window, tools", [(1024, False), (2048, True)])
def test_tools_are_sent_only_where_the_window_holds_them(app, guest, served, window, tools):
    app.config["NIMBUS_CONTEXT_WINDOW"] = window
    answer, conversation, _ = ask(guest_user(guest), "Hello", provider=get_provider(app.config))
    sent = served.chat_requests()[-1]
    assert ("tools" in sent) is tools
    assert Turn.query.filter_by(conversation_id=conversation.id).one().outcome == "answered"
    assert (LEFT_OUT in banner(guest)) is not tools
    shown = guest.get(f"/c/{conversation.id}/viewer.json").json["request"]
    assert (shown["window"]["tool_tokens"] > 0) is tools


def test_a_message_is_taken_at_1024_tokens(app, guest, served):
    app.config["NIMBUS_CONTEXT_WINDOW"] = 1024
    response = guest.post("/messages", data={"message": "Where is my order #1041?"},
                          headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert Turn.query.count() == 1


def test_the_start_line_and_a_warning_say_the_tools_are_left_out(app, served, monkeypatch,
                                                                  caplog):
    monkeypatch.setenv("OPENAI_BASE_URL", app.config["OPENAI_BASE_URL"])
    app.config["NIMBUS_CONTEXT_WINDOW"] = 1024
    from webapp.context.request import _WARNED, tools_left_out
    _WARNED.clear()
    with caplog.at_level(logging.INFO):
        announce(app, tools_left_out)
    said = [(r.levelno, r.getMessage()) for r in caplog.records]
    start = next(text for _, text in said if text.startswith("provider:"))
    assert "no tools (the 1,024-token window cannot hold the tools' descriptions" in start
    assert any(level == logging.WARNING and "answering without tools" in text
               and "-c 2048" in text for level, text in said)



def test_the_warning_names_a_window_that_holds_the_tools(app, served, monkeypatch, caplog):
    """The real SmolLM2 counts the default tools (memory tools too) at 1,058 tokens: beside a
    512-token reply, 2,048 tokens cannot hold them either, and the advice says so."""
    monkeypatch.setenv("OPENAI_BASE_URL", app.config["OPENAI_BASE_URL"])
    app.config.update(NIMBUS_CONTEXT_WINDOW=2048, NIMBUS_MEMORY_TOOLS=True)
    from webapp.context import request
    monkeypatch.setattr(request, "tool_tokens", lambda config, profile, specs: (1058, True))
    request._WARNED.clear()
    with caplog.at_level(logging.INFO):
        announce(app, request.tools_left_out)
    warning = next(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING
                   and "answering without tools" in r.getMessage())
    assert "the 2,048-token window cannot hold" in warning and "-c 4096 or more" in warning
