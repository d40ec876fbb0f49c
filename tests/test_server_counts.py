"""The tool specs are counted by the server where it offers a way (llama.cpp's /apply-template
and /tokenize), so the window, the viewer and calibration use the server's number, not the
four-characters estimate (SmolLM2: 959 tokens where the estimate said 730, and the token ratio
drifted towards 1.8). A server that offers none keeps the estimate."""
import pytest

from webapp.extensions import db
from webapp.hooks import tool_specs
from webapp.llm import get_provider, openai_provider, profile, server_counts
from webapp.llm.calls import _SLOTS
from webapp.llm.openai_provider import to_openai_tools
from webapp.llm.tokens import estimate_tools

from .fakes.compat_servers import CompatServer, count_tokens
from .support import ask, guest_user
from .test_template_tools import real_served  # noqa: F401  the real server through a proxy
from .test_provider_conformance import real_server  # noqa: F401


@pytest.fixture(params=["llama-server", "vllm"])
def served(request, app):
    openai_provider.QUIRKS.clear()
    profile.forget()
    server_counts.forget()
    _SLOTS.clear()
    with CompatServer(request.param) as server:
        app.config.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test",
                          NIMBUS_MODEL="fake-model", NIMBUS_MEMORY_TOOLS=False)
        yield server
    profile.forget()
    server_counts.forget()
    _SLOTS.clear()


def test_the_viewer_shows_the_tool_tokens_the_server_counts(app, guest, served):
    _, conversation, _ = ask(guest_user(guest), "Hello", provider=get_provider(app.config))
    window = guest.get(f"/c/{conversation.id}/viewer.json").json["request"]["window"]
    tools = to_openai_tools(tool_specs(app.config))
    counted = count_tokens({"messages": [{"role": "user", "content": "."}], "tools": tools}) \
        - count_tokens({"messages": [{"role": "user", "content": "."}]})
    if served.quirks.kind == "llama.cpp":  # the server's /tokenize, give or take its rounding
        assert window["tools_counted"] and abs(window["tool_tokens"] - counted) <= 1
    else:
        assert not window["tools_counted"]
        assert window["tool_tokens"] == estimate_tools(tool_specs(app.config))


@pytest.mark.timeout(600)
@pytest.mark.parametrize("real_served", ["hermes template"], indirect=True)
def test_a_real_llama_server_counts_the_tools_and_the_ratio_holds(app, guest, real_served):
    server_counts.forget()
    _, conversation, _ = ask(guest_user(guest), "Hello", provider=get_provider(app.config))
    for question in ("What can you do?", "Thanks!"):  # the ratio moves a third of the way a reply
        ask(conversation.user, question, conversation, provider=get_provider(app.config))
    db.session.refresh(conversation)
    window = guest.get(f"/c/{conversation.id}/viewer.json").json["request"]["window"]
    assert window["tools_counted"] and window["tool_tokens"] > estimate_tools(
        tool_specs(app.config))  # 959 against 730 for SmolLM2 with the Hermes template
    assert 0.8 < conversation.token_ratio < 1.2, conversation.token_ratio
