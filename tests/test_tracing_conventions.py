"""Spans and metrics by the letter of OpenTelemetry's GenAI conventions: the conditionally
required and recommended attributes Nimbus knows, messages valid against the conventions' JSON
schemas (tests/data/otel, from the conventions' repository), the client's own error type on a
failed reply, and the GenAI client metrics; on the web chat's streaming path and in-process."""
import json
from pathlib import Path

import jsonschema
import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from webapp import tracing
from webapp.llm import profile

from .fakes.openai_server import FakeOpenAIServer
from .support import ask, sse_events

SCHEMAS = Path(__file__).parent / "data" / "otel"
REFUND = "Can I get a refund for order #1043?"


def schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"gen-ai-{name}-messages.json").read_text())


@pytest.fixture
def otel(app):
    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    app.extensions[tracing.EXTENSION] = tracing.build_tracer(spans, batch=False,
                                                             metric_reader=reader)
    app.config["NIMBUS_OTEL_CAPTURE_CONTENT"] = True
    yield spans, reader
    tracing.shutdown(app)
    app.extensions[tracing.EXTENSION] = None


def points(reader) -> dict:
    found = {}
    data = reader.get_metrics_data()
    for rm in data.resource_metrics if data else []:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                found.setdefault(metric.name, []).extend(metric.data.data_points)
    return found


def chat_spans(spans) -> list:
    return [s for s in spans.get_finished_spans() if s.name.startswith("chat ")]


def test_every_model_span_carries_what_the_conventions_ask_and_valid_messages(otel, alex):
    spans, _ = otel
    ask(alex, REFUND)
    chats = chat_spans(spans)
    assert len(chats) == 2
    for span in chats:
        assert span.attributes["gen_ai.request.stream"] is True
        jsonschema.validate(json.loads(span.attributes["gen_ai.input.messages"]), schema("input"))
        output = json.loads(span.attributes["gen_ai.output.messages"])
        jsonschema.validate(output, schema("output"))
    assert [json.loads(s.attributes["gen_ai.output.messages"])[0]["finish_reason"]
            for s in chats] == ["tool_call", "stop"]
    tool = next(s for s in spans.get_finished_spans() if s.name.startswith("execute_tool"))
    assert tool.attributes["gen_ai.tool.description"].startswith("Check whether an order")


@pytest.fixture
def server(app):
    with FakeOpenAIServer() as server:
        app.config.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test",
                          NIMBUS_MODEL="fake-model", NIMBUS_CONTEXT_WINDOW=8192)
        profile.forget()
        yield server
    profile.forget()


def stream_reply(guest, question: str) -> str:
    started = guest.post("/messages", data={"message": question}, headers={"HX-Request": "true"})
    assert started.status_code == 200
    conversation = started.headers["HX-Push-Url"].rsplit("/", 1)[-1]
    return guest.get(f"/c/{conversation}/turns/0/stream").text


def test_the_web_chats_streaming_reply_names_the_response_and_its_cap(otel, guest, server):
    spans, reader = otel
    server.script({"text": "It shipped on Monday.", "usage": {"prompt_tokens": 900,
                                                             "completion_tokens": 6}})
    events = dict(sse_events(stream_reply(guest, "Where is order #1041?")))
    assert "shipped on Monday" in events["done"]
    chat = chat_spans(spans)[0].attributes
    assert chat["gen_ai.response.model"] == "fake-model"
    assert chat["gen_ai.response.id"]
    assert chat["gen_ai.request.max_tokens"] == server.requests[0]["max_tokens"]
    found = points(reader)
    duration = found["gen_ai.client.operation.duration"]
    assert [p.count for p in duration] == [1]
    assert duration[0].attributes["gen_ai.provider.name"] == "openai"
    assert duration[0].attributes["gen_ai.response.model"] == "fake-model"
    tokens = {p.attributes["gen_ai.token.type"]: p.sum for p in found["gen_ai.client.token.usage"]}
    assert tokens == {"input": 900, "output": 6}
    assert sum(p.count for p in found["gen_ai.client.operation.time_to_first_chunk"]) == 1


def test_a_failed_reply_names_the_clients_error_on_its_span_and_its_root(otel, guest, server):
    spans, reader = otel
    server.script({"status": 500, "error": "the model crashed"})
    stream_reply(guest, "Where is order #1041?")
    finished = {s.name: s for s in spans.get_finished_spans()}
    chat = finished["chat fake-model"]
    assert chat.attributes["error.type"] == "openai.InternalServerError"
    root = finished["invoke_agent Nimbus"]
    assert root.attributes["error.type"] == "openai.InternalServerError"
    assert root.status.status_code.name == "ERROR"
    duration = points(reader)["gen_ai.client.operation.duration"]
    assert duration[0].attributes["error.type"] == "openai.InternalServerError"
