"""What one server or another does that Nimbus must take in its stride (tests/fakes/compat_servers.py):
deadlines keep-alives cannot reset, Stop ending the upstream request, streams cut or empty,
tool-call fragments, errors logged with the key redacted, and saying which model answers."""
import logging
import threading
import time

import pytest

from webapp.agent.loop import FALLBACK_ERROR, run_turn
from webapp.llm import get_provider, openai_provider, profile
from webapp.llm.base import ProviderCancelled, Reply
from webapp.llm.calls import _SLOTS
from webapp.llm.openai_provider import merge_tool_call
from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.rows import remember
from webapp.storage import all_turns, create_conversation, start_turn

from .support import ask, guest_user
from .fakes.compat_servers import CompatServer
from .fakes.openai_server import FakeOpenAIServer


@pytest.fixture(autouse=True)
def fresh_endpoints():
    openai_provider.QUIRKS.clear()
    profile.forget()
    _SLOTS.clear()
    yield
    openai_provider.QUIRKS.clear()
    profile.forget()
    _SLOTS.clear()


def point_at(app, server, **config):
    app.config.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test",
                      NIMBUS_MODEL="fake-model", NIMBUS_MEMORY_TOOLS=False, **config)
    return get_provider(app.config)


def test_keep_alive_comments_do_not_reset_the_first_token_deadline(app, alex):
    # ": ping" every 0.2 s while it thinks, as llama-cpp-python's server does every 15 s
    with CompatServer("llama-server", keepalive=True) as server:
        server.state.think_delay = 12.0
        provider = point_at(app, server, NIMBUS_FIRST_TOKEN_TIMEOUT=1.0,
                            NIMBUS_PROVIDER_TIMEOUT=10.0)
        began = time.monotonic()
        answer, conversation, _ = ask(alex, "Hello there", provider=provider)
        took = time.monotonic() - began
    turn = all_turns(conversation.id)[0]
    assert answer == FALLBACK_ERROR and turn.outcome == "api_error"
    assert any("no first token within 1 s" in step.get("error", "") for step in turn.trace)
    assert took < 8.0  # well before the 12 s the server takes: the pings did not count as words


def test_stop_ends_the_upstream_request_at_once(app):
    with CompatServer("llama-cpp-python") as server:
        server.state.think_delay = 10.0
        provider = point_at(app, server)
        outcome = {}

        def read():
            try:
                list(provider.stream([{"role": "user", "content": "Hi"}], []))
            except ProviderCancelled as error:
                outcome["error"], outcome["at"] = error, time.monotonic()
        reader = threading.Thread(target=read)
        reader.start()
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline and getattr(
                provider._calls.get(reader.ident), "_response", None) is None:
            time.sleep(0.02)  # until the server's headers came: it is thinking, pinging
        pressed = time.monotonic()
        provider.cancel(reader.ident)
        reader.join(4)
        assert outcome["error"].reason == "stopped" and outcome["at"] - pressed < 3.0
        deadline = time.monotonic() + 2
        while not server.state.disconnected and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.state.disconnected == 1  # the server saw the client go: its slot is free


def test_a_stream_ended_for_a_newer_request_keeps_its_words_and_is_no_answer(app, alex):
    # llama-cpp-python ends the running stream when another request comes, without a finish
    # reason; with no NIMBUS_PROVIDER_SLOTS set nothing stops the second request. (Its tool
    # replies come whole, so a server that streams them stands in.)
    with CompatServer("llama-server", interrupt=True, probes=()) as server:
        provider = point_at(app, server)
        conversation = create_conversation(alex)
        turn = start_turn(conversation, "Tell me a long story about a lighthouse.")
        shown = []
        for event in run_turn(turn, provider):
            if event.kind == "token":
                shown.append(event.data["text"])
                if len(shown) == 5:  # another caller's request arrives
                    list(provider.stream([{"role": "user", "content": "Hi"}], []))
    turn = all_turns(conversation.id)[0]
    assert turn.outcome == "api_error"
    assert any("without a finish reason" in step.get("error", "") for step in turn.trace)
    assert turn.answer.startswith("".join(shown).strip())


def test_an_empty_answer_is_a_provider_error_not_an_answer(app, alex):
    with FakeOpenAIServer() as server:
        server.script({"text": ""})
        provider = point_at(app, server)
        answer, conversation, _ = ask(alex, "Hello?", provider=provider)
    turn = all_turns(conversation.id)[0]
    assert answer == FALLBACK_ERROR and turn.outcome == "api_error"
    assert any("no words and no tool call" in step.get("error", "") for step in turn.trace)


def test_a_cut_off_answer_is_tagged_in_the_chat(app, guest):
    with CompatServer("llama-server") as server:
        provider = point_at(app, server, NIMBUS_MAX_OUTPUT_TOKENS=5)
        _, conversation, _ = ask(guest_user(guest), "Tell me a long story please", provider=provider)
        assert server.state.requests[0]["max_tokens"] == 5
    turn = all_turns(conversation.id)[0]
    assert turn.outcome == "cut_off" and turn.answer.startswith("word0 word1")
    page = guest.get(f"/c/{conversation.id}").text
    assert "Cut off" in page


def test_a_tool_call_name_repeated_in_every_chunk_is_taken_once():
    calls, last = {}, None
    for delta in [{"index": 0, "id": "call_1", "function": {"name": "lookup_order",
                                                            "arguments": ""}},
                  {"index": 0, "id": "call_1", "function": {"name": "lookup_order",
                                                            "arguments": '{"order_'}},
                  {"index": 0, "function": {"name": "lookup_order", "arguments": 'id": 1042}'}}]:
        last = merge_tool_call(calls, delta, last)
    assert calls[0]["name"] == "lookup_order" and calls[0]["id"] == "call_1"
    assert calls[0]["arguments"] == '{"order_id": 1042}'


def test_tool_calls_without_an_index_are_told_apart_by_their_ids():  # Gemini
    calls, last = {}, None
    for delta in [{"id": "a", "function": {"name": "lookup_order", "arguments": '{"order_id":1}'}},
                  {"id": "b", "function": {"name": "lookup_order", "arguments": '{"order_id":2}'}}]:
        last = merge_tool_call(calls, delta, last)
    assert [(c["id"], c["arguments"]) for c in calls.values()] == [
        ("a", '{"order_id":1}'), ("b", '{"order_id":2}')]


def test_streamed_name_repeats_reach_the_tool_loop_as_one_name(app, alex):
    with CompatServer("llama-server", name_every_chunk=True) as server:
        provider = point_at(app, server)
        _, conversation, _ = ask(alex, "Can I get a refund for order #1043?", provider=provider)
    calls = [c for m in all_turns(conversation.id)[0].messages for c in m.get("tool_calls") or []]
    assert [c["name"] for c in calls] == ["check_refund_eligibility"]


def test_provider_errors_are_logged_with_status_and_body_and_the_key_redacted(app, alex, caplog):
    key = "sk-test-abcdefgh12345678"
    with FakeOpenAIServer() as server:
        server.script({"status": 401, "error": f"Incorrect API key provided: {key}"})
        app.config.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY=key,
                          NIMBUS_MEMORY_TOOLS=False)
        with caplog.at_level(logging.WARNING, "webapp.llm.openai_provider"):
            ask(alex, "Hello?", provider=get_provider(app.config))
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "HTTP 401" in logged and "Incorrect API key provided" in logged
    assert key not in logged and "***" in logged


def test_the_banner_names_the_server_and_model_that_answer(app, guest):
    with CompatServer("llama-server") as server:
        point_at(app, server)
        page = guest.get("/").text
    assert "Answering: <strong>llama.cpp · fake-model</strong>" in page


def test_an_unreachable_provider_gets_a_clear_banner_and_a_log_line(app, guest, caplog):
    app.config.update(OPENAI_BASE_URL="http://127.0.0.1:9/v1", OPENAI_API_KEY="x")
    with caplog.at_level(logging.WARNING, "webapp.llm.profile"):
        page = guest.get("/").text
    assert 'role="alert"' in page and "cannot be reached" in page
    assert any("cannot be reached" in r.getMessage() for r in caplog.records)


def test_a_context_refusal_teaches_the_window_and_the_turn_is_answered(app, alex):
    # llama-cpp-python says neither its window nor its slots until it refuses a request.
    with CompatServer("llama-cpp-python", window=1700) as server:
        provider = point_at(app, server, NIMBUS_HISTORY_BUDGET=3000)
        conversation = create_conversation(alex)
        filler = "I would like to tell you all about my parcel and its contents. " * 14
        for n in range(6):
            ask(alex, f"Note {n}: {filler}", conversation, provider=provider)
    turns = all_turns(conversation.id)
    assert [t.outcome for t in turns] == ["answered"] * 6
    assert len(server.state.refused) == 1  # learnt once: later requests fit
    assert any(step["kind"] == "retry" for t in turns for step in t.trace)


def test_a_memory_block_bigger_than_the_window_gives_up_its_least_relevant_memories(app, alex):
    # llama-server says its window in /props: the request must fit without a refusal. 1,300 tokens
    # hold the prompt, the tools (list_tickets among them) and some of the ten memories, never all of them.
    with CompatServer("llama-server", window=1300) as server:
        provider = point_at(app, server, NIMBUS_MEMORY_BLOCK_LIMIT=10)
        scope = SessionScope.for_user(alex)
        ids = [remember(scope, f"Memory {n}: " + "prefers parcels wrapped in brown paper " * 12,
                        app.config, source="hand")[0].id for n in range(10)]
        answer, conversation, _ = ask(alex, "Hello there", provider=provider)
    turn = all_turns(conversation.id)[0]
    assert turn.outcome == "answered" and not server.state.refused
    memory = next(s for s in turn.manifest["sections"] if s["name"] == "memory")
    assert 0 < len(memory["memory_ids"]) < 10
    assert memory["left_out_to_fit"] == 10 - len(memory["memory_ids"])
    # by recency the newest memories are the most relevant: they are the ones kept
    assert memory["memory_ids"] == ids[::-1][:len(memory["memory_ids"])]


def test_a_background_call_waits_behind_a_chat_for_the_only_slot(app):
    with CompatServer("llama-server") as server:  # /props: total_slots 1
        provider = point_at(app, server)
        order = []
        slow = [{"role": "user", "content": "Tell me a long story please"}]

        def background():
            for chunk in provider.stream(slow, [], purpose="background", max_tokens=40):
                if isinstance(chunk, Reply):
                    order.append("background")
        chat_thread = threading.Thread(target=lambda: (list(provider.stream(
            slow, [], max_tokens=200)), order.append("chat")))
        chat_thread.start()
        time.sleep(0.3)  # the chat holds the slot
        worker = threading.Thread(target=background)
        worker.start()
        chat_thread.join(10)
        worker.join(10)
    assert order == ["chat", "background"]
