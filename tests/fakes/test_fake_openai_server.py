"""Checks that the fake OpenAI server speaks the wire format the real `openai` SDK expects."""

import json

import openai
import pytest

from .openai_server import EMBEDDING_DIMENSIONS, MODEL_ID, FakeOpenAIServer, fake_embedding

MESSAGES = [{"role": "user", "content": "Say hello"}]


@pytest.fixture
def fake():
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def client(fake):
    with openai.OpenAI(base_url=fake.base_url, api_key="test", max_retries=0, timeout=5) as c:
        yield c


def test_streams_text_in_several_chunks(fake, client):
    fake.script({"text": "Hello there, how are you?"})

    chunks = list(client.chat.completions.create(model=MODEL_ID, messages=MESSAGES, stream=True))

    assert chunks[0].choices[0].delta.role == "assistant"
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(pieces) > 1
    assert "".join(pieces) == "Hello there, how are you?"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert fake.requests[0]["messages"] == MESSAGES
    assert fake.requests[0]["stream"] is True


def test_empty_queue_answers_ok(client):
    reply = client.chat.completions.create(model=MODEL_ID, messages=MESSAGES)

    assert reply.choices[0].message.content == "ok"
    assert reply.choices[0].finish_reason == "stop"


def test_streamed_tool_call_arguments_reassemble(fake, client):
    arguments = {"query": "weather in Paris", "limit": 3}
    fake.script({"tool_calls": [{"id": "call_abc", "name": "search", "arguments": arguments}]})

    calls: dict[int, dict] = {}
    finish = None
    argument_deltas = 0
    for chunk in client.chat.completions.create(model=MODEL_ID, messages=MESSAGES, stream=True):
        choice = chunk.choices[0]
        finish = choice.finish_reason or finish
        for delta in choice.delta.tool_calls or []:
            call = calls.setdefault(delta.index, {"id": None, "name": None, "arguments": ""})
            if delta.id:
                call["id"] = delta.id
                assert delta.type == "function"
                assert delta.function.arguments == ""
            else:
                argument_deltas += 1
            if delta.function.name:
                call["name"] = delta.function.name
            call["arguments"] += delta.function.arguments or ""

    assert finish == "tool_calls"
    assert argument_deltas >= 2
    assert calls == {0: {"id": "call_abc", "name": "search", "arguments": json.dumps(arguments)}}
    assert json.loads(calls[0]["arguments"]) == arguments


def test_non_streamed_tool_call(fake, client):
    fake.script({"text": None, "tool_calls": [{"id": "call_1", "name": "lookup", "arguments": {"id": 7}}]})

    message = client.chat.completions.create(model=MODEL_ID, messages=MESSAGES).choices[0].message

    assert message.content is None
    assert message.tool_calls[0].function.name == "lookup"
    assert json.loads(message.tool_calls[0].function.arguments) == {"id": 7}


def test_usage_chunk_when_requested(fake, client):
    fake.script({"text": "Hi", "usage": {"prompt_tokens": 11, "completion_tokens": 2}})

    chunks = list(
        client.chat.completions.create(
            model=MODEL_ID, messages=MESSAGES, stream=True, stream_options={"include_usage": True}
        )
    )

    last = chunks[-1]
    assert last.choices == []
    assert (last.usage.prompt_tokens, last.usage.completion_tokens, last.usage.total_tokens) == (11, 2, 13)
    assert all(c.usage is None for c in chunks[:-1])


def test_no_usage_chunk_unless_requested(fake, client):
    chunks = list(client.chat.completions.create(model=MODEL_ID, messages=MESSAGES, stream=True))

    assert all(c.choices for c in chunks)


def test_scripted_500_raises_api_status_error(fake, client):
    fake.script({"status": 500, "error": "boom"})

    with pytest.raises(openai.APIStatusError) as excinfo:
        client.chat.completions.create(model=MODEL_ID, messages=MESSAGES, stream=True)

    assert excinfo.value.status_code == 500
    assert "boom" in str(excinfo.value)


def test_delay_triggers_client_timeout(fake, client):
    fake.script({"delay": 2})

    with pytest.raises(openai.APITimeoutError):
        client.with_options(timeout=0.3).chat.completions.create(model=MODEL_ID, messages=MESSAGES)


def test_a_pause_mid_stream_falls_after_the_chunks_it_names(fake, client):
    import time
    fake.script({"text": "one two three four", "pause_after": 3, "pause": 0.6})
    arrived, began = [], time.monotonic()
    for chunk in client.chat.completions.create(model=MODEL_ID, messages=MESSAGES, stream=True):
        if chunk.choices and chunk.choices[0].delta.content:
            arrived.append((chunk.choices[0].delta.content.strip(), time.monotonic() - began))
    assert [word for word, _ in arrived] == ["one", "two", "three", "four"]
    assert arrived[1][1] < 0.4 and arrived[2][1] >= 0.6  # silence after the role, one, two


def test_mid_stream_error_raises(fake, client):
    fake.script({"text": "partial answer", "stream_error": "upstream died"})

    with pytest.raises(openai.APIError, match="upstream died"):
        list(client.chat.completions.create(model=MODEL_ID, messages=MESSAGES, stream=True))


def test_down_raises_connection_error(fake, client):
    fake.down()

    with pytest.raises(openai.APIConnectionError):
        client.chat.completions.create(model=MODEL_ID, messages=MESSAGES)

    fake.up()
    reply = client.chat.completions.create(model=MODEL_ID, messages=MESSAGES)
    assert reply.choices[0].message.content == "ok"


def test_embeddings_are_deterministic(fake, client):
    result = client.embeddings.create(model="fake-embed", input=["alpha", "beta"])

    vectors = [item.embedding for item in result.data]
    assert len(vectors[0]) == EMBEDDING_DIMENSIONS
    assert vectors[0] == pytest.approx(fake_embedding("alpha"))
    assert vectors[0] != vectors[1]
    assert result.usage.prompt_tokens == 2
    plain = client.embeddings.create(model="fake-embed", input="alpha", encoding_format="float")
    assert plain.data[0].embedding == pytest.approx(vectors[0])
    assert [r["input"] for r in fake.embedding_requests] == [["alpha", "beta"], "alpha"]


def test_models_lists_one_model(client):
    assert [m.id for m in client.models.list()] == [MODEL_ID]
