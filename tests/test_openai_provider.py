"""The real openai SDK path, against a local fake OpenAI-compatible server."""
import pytest

from webapp.agent.loop import FALLBACK_ERROR
from webapp.llm import get_provider
from webapp.llm.openai_provider import OpenAIProvider
from webapp.storage import all_turns

from .support import ask
from .fakes.openai_server import FakeOpenAIServer


@pytest.fixture
def server():
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def provider(app, server):
    app.config.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test",
                      NIMBUS_PROVIDER_TIMEOUT=2.0)
    return get_provider(app.config)


def test_a_configured_base_url_selects_the_openai_provider(provider):
    assert isinstance(provider, OpenAIProvider)


def test_streamed_text_arrives_token_by_token_with_usage(alex, server, provider):
    server.script({"text": "Hello there, how can I help?",
                   "usage": {"prompt_tokens": 321, "completion_tokens": 7}})
    answer, conversation, events = ask(alex, "Hi", provider=provider)
    assert answer == "Hello there, how can I help?"
    assert len([e for e in events if e.kind == "token"]) > 1
    request = server.requests[0]
    assert request["stream"] is True and request["stream_options"] == {"include_usage": True}
    turn = all_turns(conversation.id)[0]
    assert (turn.prompt_tokens, turn.completion_tokens) == (321, 7)


def test_streamed_tool_call_deltas_run_the_tool(alex, server, provider):
    server.script({"tool_calls": [{"id": "call_1", "name": "check_refund_eligibility",
                                   "arguments": {"order_id": 1043}}]},
                  {"text": "Sorry, order #1043 is too old."})
    answer, conversation, _ = ask(alex, "Refund for order #1043?", provider=provider)
    assert answer == "Sorry, order #1043 is too old."
    second = server.requests[1]["messages"]
    assert second[-2]["tool_calls"][0]["function"]["name"] == "check_refund_eligibility"
    assert second[-1]["role"] == "tool" and '"eligible": false' in second[-1]["content"]
    assert {t["function"]["name"] for t in server.requests[0]["tools"]} >= {
        "lookup_order", "check_refund_eligibility", "create_support_ticket", "search_help_center"}


def test_provider_raw_is_resent_on_the_next_turn(alex, server, provider):
    server.script({"text": "First answer."}, {"text": "Second answer."})
    _, conversation, _ = ask(alex, "One", provider=provider)
    stored = all_turns(conversation.id)[0].messages[-1]
    assert stored["provider_raw"]["content"] == "First answer."
    ask(alex, "Two", conversation, provider=provider)
    assert {"role": "assistant", "content": "First answer."} in server.requests[1]["messages"]


@pytest.mark.parametrize("failure", [{"status": 500, "error": "boom"}, {"delay": 5},
                                     {"text": "Half an", "stream_error": "overloaded"}])
def test_provider_down_or_slow_saves_the_fallback(alex, server, provider, failure):
    server.script(failure, failure, failure)
    answer, conversation, _ = ask(alex, "Hello?", provider=provider)
    assert answer == FALLBACK_ERROR
    turn = all_turns(conversation.id)[0]
    assert [m["role"] for m in turn.messages] == ["user", "assistant"]
    assert turn.outcome == "api_error"


def test_provider_unreachable_saves_the_fallback(app, alex, server, provider):
    server.down()
    answer, conversation, _ = ask(alex, "Hello?", provider=provider)
    assert answer == FALLBACK_ERROR


def test_a_failed_request_is_sent_once_not_repeated_by_the_sdk(alex, server, provider):
    server.script({"status": 500, "error": "boom"}, {"text": "Never asked for."})
    answer, _, _ = ask(alex, "Hello?", provider=provider)
    assert answer == FALLBACK_ERROR
    assert len(server.requests) == 1
