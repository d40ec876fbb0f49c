"""A model whose chat template cannot carry tools (llama-server's `/props` says
`chat_template_caps.supports_tools: false`, as for gemma's or SmolLM2's own template) is sent no
tools and counted without them; the banner and the log say so. A server that says it can, or says
nothing, gets the tools as before. What the server received is read through a recording proxy."""
import logging

import pytest

from webapp.llm import get_provider, openai_provider, profile
from webapp.llm.calls import _SLOTS
from webapp.llm.openai_provider import to_openai_messages

from . import llama_server
from .fakes.compat_servers import CompatServer
from .fakes.recording_proxy import RecordingProxy
from .support import ask, guest_user
from .test_provider_conformance import real_server  # noqa: F401  the same start-or-skip

REFUND = "Is order #1043 eligible for a refund?"
NO_TOOLS = "This model's chat template can't use tools"


@pytest.fixture(params=["llama-server-no-tools", "llama-server", "openai"])
def served(request, app):
    """The app answering through a recording proxy in front of a fake server of that kind."""
    openai_provider.QUIRKS.clear()
    profile.forget()
    _SLOTS.clear()
    with CompatServer(request.param) as server, RecordingProxy(server.base_url) as proxy:
        app.config.update(OPENAI_BASE_URL=proxy.base_url, OPENAI_API_KEY="test",
                          NIMBUS_MODEL="fake-model", NIMBUS_MEMORY_TOOLS=False,
                          NIMBUS_CONTEXT_WINDOW=None if request.param != "openai" else 8192)
        yield server, proxy
    profile.forget()
    _SLOTS.clear()


def banner(guest) -> str:
    page = guest.get("/").text
    return page[page.index('id="provider-banner"'):].split("</p>")[0]


def test_the_request_carries_tools_only_when_the_template_can(app, guest, served):
    server, proxy = served
    _, conversation, _ = ask(guest_user(guest), "Hello", provider=get_provider(app.config))
    shown = guest.get(f"/c/{conversation.id}/viewer.json").json["request"]
    before = len(proxy.chat_requests())
    ask(conversation.user, REFUND, conversation, provider=get_provider(app.config))
    sent = proxy.chat_requests()[before]
    assert sent["messages"][:-1] == to_openai_messages(shown["messages"])
    if server.quirks.template_tools:
        assert sent["tools"] and shown["window"]["tool_tokens"] > 0
        assert NO_TOOLS not in banner(guest)
    else:
        assert "tools" not in sent and "tool_choice" not in sent
        assert shown["window"]["tool_tokens"] == 0
        assert NO_TOOLS in banner(guest)


def test_calibration_subtracts_tool_tokens_only_where_tools_were_sent(app, guest, served):
    # The fake counts about 1.1 tokens for each one estimated; subtracting tools that were never
    # sent would read far fewer, and pull the ratio to its floor (0.775 after one reply).
    _, conversation, _ = ask(guest_user(guest), "Hello", provider=get_provider(app.config))
    assert 0.95 < conversation.token_ratio < 1.2, conversation.token_ratio


def test_the_log_says_once_that_the_model_gets_no_tools(app, guest, served, caplog):
    server, _ = served
    caplog.set_level(logging.WARNING, logger="webapp.llm.profile")
    for question in ("Hello", "Hello again"):
        ask(guest_user(guest), question, provider=get_provider(app.config))
    said = [r.getMessage() for r in caplog.records if "cannot carry tools" in r.getMessage()]
    assert len(said) == (0 if server.quirks.template_tools else 1), said


def test_the_start_line_says_whether_tools_are_offered(app):
    for can, said in ((True, "tools offered"), (False, "no tools (the template has none)")):
        found = profile.Profile("llama.cpp", "gemma-3-270m", 2048, 1, supports_tools=can)
        assert said in profile.start_details(found, app.config)


@pytest.fixture
def real_served(request, app, real_server, tmp_path):  # noqa: F811
    """The real llama-server through the proxy: with the Hermes template the session's server
    uses, or with SmolLM2's own template, which has no tools."""
    own = llama_server.LlamaServer(str(tmp_path / "own.log"), template=None) \
        if request.param == "own template" else None
    server = own.start() if own else real_server
    if server.process is None or server.process.poll() is not None:
        server.start()
    profile.forget()
    _SLOTS.clear()
    try:
        with RecordingProxy(server.base_url) as proxy:
            app.config.update(OPENAI_BASE_URL=proxy.base_url, OPENAI_API_KEY="test",
                              NIMBUS_MODEL=server.model_name, NIMBUS_MEMORY_TOOLS=False,
                              NIMBUS_MAX_OUTPUT_TOKENS=60, NIMBUS_PROVIDER_TIMEOUT=120.0)
            yield proxy, own is None
    finally:
        profile.forget()
        _SLOTS.clear()
        if own:
            own.stop()


@pytest.mark.timeout(600)
@pytest.mark.parametrize("real_served", ["hermes template", "own template"], indirect=True)
def test_a_real_llama_server_gets_tools_as_its_props_say(app, guest, real_served):
    proxy, template_has_tools = real_served
    _, conversation, _ = ask(guest_user(guest), REFUND, provider=get_provider(app.config))
    assert ("GET", "/props", None) in proxy.requests  # asked once, before the first reply
    assert profile.profile_for(app.config).supports_tools is template_has_tools
    sent = proxy.chat_requests()[0]
    assert bool(sent.get("tools")) is template_has_tools
    assert (NO_TOOLS in banner(guest)) is not template_has_tools
    if not template_has_tools:  # the server counted the messages alone, as estimated (0.99 seen)
        assert 0.85 < conversation.token_ratio < 1.15, conversation.token_ratio
