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
from . import semconv
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


# What an OTLP receiver gets, decoded and held to the conventions' YAML model (tests/semconv.py).
SPAN_GROUPS = {"chat": "span.gen_ai.inference.client", "invoke_agent":
               "span.gen_ai.invoke_agent.internal", "execute_tool": "span.gen_ai.execute_tool.internal"}


@pytest.fixture
def receiver(app):
    from .fakes import otlp_collector
    from .fakes.otlp_collector import Collector
    server = otlp_collector.start()
    app.config["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{server.server_port}"
    app.config["NIMBUS_OTEL_CAPTURE_CONTENT"] = True
    tracing.init_app(app)  # as create_app does with the variable set
    yield Collector
    tracing.shutdown(app)
    app.extensions[tracing.EXTENSION] = None
    server.shutdown()
    server.server_close()


def received(app, collector) -> tuple[list, list]:
    """(span, its attributes) and (metric, its points' attributes) the receiver decoded."""
    assert tracing.flush(app)
    spans = [(span, semconv.otlp_attributes(span.attributes))
             for path, _, request in collector.received if path.endswith("/v1/traces")
             for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]
    requests = [r for path, _, r in collector.received if path.endswith("/v1/metrics")]
    metrics = [(metric, [semconv.otlp_attributes(p.attributes)
                         for p in getattr(metric, metric.WhichOneof("data")).data_points])
               for request in requests[-1:] for rm in request.resource_metrics
               for sm in rm.scope_metrics for metric in sm.metrics]
    return spans, metrics


def broken_rules(spans, metrics, failed: bool = False) -> list[str]:
    """Every place the received telemetry breaks the conventions; empty when it keeps them."""
    out = []
    for span, attributes in spans:
        kind = span.name.split(" ", 1)[0]
        group = "span.openai.inference.client" if kind == "chat" and \
            attributes.get("gen_ai.provider.name") == "openai" else SPAN_GROUPS[kind]
        span_failed = span.status.code == span.status.STATUS_CODE_ERROR
        out += [f"{span.name}: {p}" for p in semconv.problems(
            group, attributes, failed=span_failed, streaming=kind == "chat")]
    for metric, points in metrics:
        out += semconv.metric_problems(metric.name, metric.WhichOneof("data"), metric.unit)
        for attributes in points:
            out += [f"{metric.name}: {p}" for p in semconv.problems(
                f"metric.{metric.name}", attributes, failed="error.type" in attributes)]
    if failed:
        assert any(s.status.code == s.status.STATUS_CODE_ERROR for s, _ in spans)
    return out


def test_a_streamed_web_reply_reaches_an_otlp_receiver_as_the_conventions_ask(
        receiver, app, guest, server):
    server.script({"text": "It shipped on Monday.", "usage": {"prompt_tokens": 900,
                                                             "completion_tokens": 6}})
    assert "shipped on Monday" in dict(sse_events(stream_reply(guest, "Where is #1041?")))["done"]
    spans, metrics = received(app, receiver)
    assert sorted(s.name.split(" ")[0] for s, _ in spans) == ["chat", "invoke_agent"]
    assert {m.name for m, _ in metrics} == {"gen_ai.client.operation.duration",
                                            "gen_ai.client.token.usage",
                                            "gen_ai.client.operation.time_to_first_chunk"}
    assert broken_rules(spans, metrics) == []


def test_a_failed_reply_reaches_an_otlp_receiver_as_the_conventions_ask(
        receiver, app, guest, server):
    server.script({"status": 500, "error": "the model crashed"})
    stream_reply(guest, "Where is order #1041?")
    spans, metrics = received(app, receiver)
    assert broken_rules(spans, metrics, failed=True) == []
    (duration,) = [points for m, points in metrics if m.name == "gen_ai.client.operation.duration"]
    assert [p["error.type"] for p in duration] == ["openai.InternalServerError"]


def test_the_in_process_reply_with_a_tool_keeps_the_conventions_too(receiver, app, alex):
    ask(alex, REFUND)  # what flask ask runs: the offline model, a tool call, then the answer
    spans, metrics = received(app, receiver)
    assert sorted(s.name.split(" ")[0] for s, _ in spans) == [
        "chat", "chat", "execute_tool", "invoke_agent"]
    assert broken_rules(spans, metrics) == []


def test_the_rules_catch_what_they_are_for():
    assert semconv.problems("span.gen_ai.inference.client", {"gen_ai.operation.name": "chat"},
                            streaming=True) == [
        "gen_ai.provider.name is required",
        "gen_ai.request.stream is set if and only if the request streams"]
    assert semconv.problems("span.openai.inference.client", {
        "gen_ai.operation.name": "chat", "gen_ai.request.stream": True}, streaming=True,
        failed=True) == ["gen_ai.request.model is required",
                         "error.type is required: the operation ended in an error"]
    assert semconv.problems("span.gen_ai.execute_tool.internal", {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t",
        "gen_ai.tool.call.id": 7}) == [
        "gen_ai.tool.call.id should be string, got int"]
    assert semconv.problems("metric.gen_ai.client.token.usage", {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
        "gen_ai.token.type": "input", "gen_ai.usage.tokens": 3}) == [
        "gen_ai.usage.tokens is no attribute of the conventions' registry"]
    assert semconv.metric_problems("gen_ai.client.token.usage", "sum", "tokens") == [
        "gen_ai.client.token.usage: instrument 'sum', the conventions say 'histogram'",
        "gen_ai.client.token.usage: unit 'tokens', the conventions say '{token}'"]
