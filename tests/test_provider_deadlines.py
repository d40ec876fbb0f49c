"""Deadlines that fit the server (webapp/llm/calls.py): a reply still streaming is never cut for
being long; silence before the first token or between chunks ends a call; a reply that a
deadline ends after its first words is stored cut off with them. Settings scaled to seconds."""
import logging
import threading
import time

import pytest

from webapp.agent.loop import FALLBACK_ERROR
from webapp.llm import get_provider, openai_provider, profile
from webapp.llm.base import ProviderCancelled
from webapp.llm.calls import _SLOTS
from webapp.storage import all_turns

from .support import ask
from .fakes.openai_server import FakeOpenAIServer

WORDS = " ".join(f"word{i}" for i in range(30))


@pytest.fixture(autouse=True)
def fresh_endpoints():
    openai_provider.QUIRKS.clear()
    openai_provider.PACES.clear()
    profile.forget()
    _SLOTS.clear()
    yield
    openai_provider.PACES.clear()
    profile.forget()


@pytest.fixture
def server():
    with FakeOpenAIServer() as fake:
        yield fake


def provider_at(app, server, **config):
    settings = {"NIMBUS_PROVIDER_TIMEOUT": 1.0, "NIMBUS_FIRST_TOKEN_TIMEOUT": 1.0,
                "NIMBUS_IDLE_TIMEOUT": 1.0, **config}
    app.config.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test",
                      NIMBUS_MODEL="fake-model", NIMBUS_MEMORY_TOOLS=False, **settings)
    return get_provider(app.config)


def errors(turn) -> list[str]:
    return [step.get("error") or step.get("reason") or "" for step in turn.trace]


def test_a_reply_streaming_past_the_provider_timeout_is_answered_whole(app, alex, server):
    server.script({"text": WORDS, "chunk_delay": 0.1})  # 3 s of words, 1 s "total" timeout
    answer, conversation, _ = ask(alex, "Tell me a story", provider=provider_at(app, server))
    turn = all_turns(conversation.id)[0]
    assert turn.outcome == "answered" and answer == WORDS


def test_a_reply_silent_mid_stream_is_cut_off_with_its_words(app, alex, server):
    server.script({"text": WORDS, "pause_after": 4, "pause": 8.0})  # 3 words, then silence
    began = time.monotonic()
    answer, conversation, _ = ask(alex, "Tell me a story", provider=provider_at(app, server))
    took = time.monotonic() - began
    turn = all_turns(conversation.id)[0]
    assert turn.outcome == "cut_off" and answer == "word0 word1 word2"
    assert turn.messages[-1] == {"role": "assistant", "content": "word0 word1 word2",
                                 "provider_raw": {"role": "assistant",
                                                  "content": "word0 word1 word2"}}
    assert any("sent nothing for 1 s mid-reply" in e for e in errors(turn))
    assert took < 5.0  # the idle deadline, not the server's 8 s pause


def test_a_pause_longer_than_the_first_token_deadline_but_within_the_idle_one_is_waited(
        app, alex, server):
    server.script({"text": WORDS, "pause_after": 4, "pause": 2.5})
    provider = provider_at(app, server, NIMBUS_IDLE_TIMEOUT=5.0)
    answer, conversation, _ = ask(alex, "Tell me a story", provider=provider)
    assert all_turns(conversation.id)[0].outcome == "answered" and answer == WORDS


def test_a_server_that_never_sends_a_first_token_fails_at_its_deadline(app, alex, server):
    server.script(*[{"text": "late", "delay": 8.0}] * 3)
    provider = provider_at(app, server, NIMBUS_PROVIDER_TIMEOUT=10.0, NIMBUS_IDLE_TIMEOUT=6.0)
    began = time.monotonic()
    answer, conversation, _ = ask(alex, "Hello?", provider=provider)
    took = time.monotonic() - began
    turn = all_turns(conversation.id)[0]
    assert answer == FALLBACK_ERROR and turn.outcome == "api_error"
    assert any("no first token within 1 s" in e for e in errors(turn))
    assert took < 4.0 and len(server.requests) == 1  # not the idle deadline; never sent again


def test_a_reply_slower_than_the_slowest_pace_accepted_is_cut_off_at_its_cap(app, alex, server):
    server.script({"text": WORDS, "chunk_delay": 0.3})
    provider = provider_at(app, server, NIMBUS_MAX_OUTPUT_TOKENS=8,
                           NIMBUS_MIN_TOKENS_PER_SECOND=8.0)  # 8 tokens must take at most 1 s
    answer, conversation, _ = ask(alex, "Tell me a story", provider=provider)
    turn = all_turns(conversation.id)[0]
    assert turn.outcome == "cut_off" and answer.startswith("word0 word1")
    assert len(answer.split()) < 8
    assert any("slower than 8 tokens/s" in e for e in errors(turn))


def test_a_server_that_ignores_the_output_cap_is_cut_off_past_it(app, alex, server):
    server.script({"text": WORDS, "chunk_delay": 0.05})
    provider = provider_at(app, server, NIMBUS_MAX_OUTPUT_TOKENS=6)
    answer, conversation, _ = ask(alex, "Tell me a story", provider=provider)
    turn = all_turns(conversation.id)[0]
    assert turn.outcome == "cut_off" and 6 < len(answer.split()) < 12
    assert any("ran past its output cap of 6 tokens" in e for e in errors(turn))


def test_a_background_call_silent_mid_stream_is_an_error_not_words(app, server):
    server.script({"text": WORDS, "pause_after": 4, "pause": 8.0})
    provider = provider_at(app, server)
    with pytest.raises(ProviderCancelled, match="sent nothing for 1 s"):
        list(provider.stream([{"role": "user", "content": "Summarise"}], [],
                             purpose="background"))


def test_every_deadline_hit_is_logged_as_a_warning(app, alex, server, caplog):
    server.script({"text": WORDS, "pause_after": 4, "pause": 8.0})
    with caplog.at_level(logging.WARNING, logger="webapp.llm.openai_provider"):
        ask(alex, "Tell me a story", provider=provider_at(app, server))
    hit = [r for r in caplog.records if "sent nothing for 1 s mid-reply" in r.getMessage()]
    assert hit and hit[0].levelno == logging.WARNING and "chat call" in hit[0].getMessage()


def test_a_call_not_streamed_is_given_its_output_cap_at_the_pace_last_seen(app, server):
    provider = provider_at(app, server, NIMBUS_FIRST_TOKEN_TIMEOUT=1.0,
                           NIMBUS_MIN_TOKENS_PER_SECOND=2.0)
    assert provider.whole_deadline(100) == pytest.approx(1.0 + 100 / 2.0)
    server.script({"text": WORDS, "chunk_delay": 0.05})  # about 20 chunks a second
    list(provider.stream([{"role": "user", "content": "Hi"}], []))
    pace = openai_provider.PACES[provider.base_url]
    assert 5 < pace < 40
    assert provider.whole_deadline(100) == pytest.approx(1.0 + 1.5 * 100 / pace)


def test_a_chat_waits_for_the_only_slot_while_the_reply_holding_it_is_still_coming(app, server):
    server.script({"text": WORDS, "chunk_delay": 0.1}, {"text": "second"})  # 3 s, 1 s timeout
    provider = provider_at(app, server, NIMBUS_PROVIDER_SLOTS=1)
    first = threading.Thread(target=lambda: list(provider.stream(
        [{"role": "user", "content": "Tell me a story"}], [])))
    first.start()
    time.sleep(0.3)
    began = time.monotonic()
    second = list(provider_at(app, server, NIMBUS_PROVIDER_SLOTS=1).stream(
        [{"role": "user", "content": "Hi"}], []))[-1]
    first.join(5)
    assert second.text == "second" and time.monotonic() - began > 1.5  # it waited, past 1 s

