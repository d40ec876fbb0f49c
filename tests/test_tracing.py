"""OpenTelemetry: one reply is one trace of GenAI spans; off by default, with nothing built."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from webapp import tracing

from .fakes import otlp_collector
from .fakes.otlp_collector import Collector
from .support import ask, make_app

REFUND = "Can I get a refund for order #1043?"


@pytest.fixture
def spans(app):
    exporter = InMemorySpanExporter()
    app.extensions[tracing.EXTENSION] = tracing.build_tracer(exporter, batch=False)
    yield exporter
    app.extensions[tracing.EXTENSION] = None


def by_name(finished) -> dict:
    return {s.name: s for s in finished}


def test_a_reply_is_one_trace_of_agent_model_and_tool_spans(spans, alex):
    _, conversation, _ = ask(alex, REFUND)
    finished = spans.get_finished_spans()
    names = [s.name for s in finished]
    assert names.count("chat nimbus-offline-1") == 2  # the tool call, then the answer
    assert "execute_tool check_refund_eligibility" in names and "invoke_agent Nimbus" in names
    root = by_name(finished)["invoke_agent Nimbus"]
    assert {s.context.trace_id for s in finished} == {root.context.trace_id}
    assert all(s.parent.span_id == root.context.span_id for s in finished if s is not root)
    chat = [s for s in finished if s.name.startswith("chat ")]
    first = chat[0].attributes
    assert first["gen_ai.operation.name"] == "chat" and first["gen_ai.request.model"] == "nimbus-offline-1"
    assert first["gen_ai.provider.name"] == "nimbus.offline"
    assert first["gen_ai.conversation.id"] == conversation.id
    assert first["gen_ai.usage.input_tokens"] > 0 and first["gen_ai.usage.output_tokens"] >= 0
    assert first["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert chat[1].attributes["gen_ai.response.finish_reasons"] == ("stop",)
    tool = by_name(finished)["execute_tool check_refund_eligibility"].attributes
    assert tool["gen_ai.operation.name"] == "execute_tool" and tool["gen_ai.tool.call.id"]


def test_spans_say_what_the_request_carried(spans, alex):
    _, conversation, _ = ask(alex, "My name is Robin.")
    ask(alex, "I like green tea.", conversation)
    ask(alex, REFUND, conversation)
    spans.clear()
    conversation.settings = {"recent_turns": 1}
    ask(alex, "What is my name?", conversation)
    root = by_name(spans.get_finished_spans())["invoke_agent Nimbus"].attributes
    assert root["nimbus.context.fates.full"] == 1 and root["nimbus.context.fates.compacted"] == 2
    assert root["nimbus.context.section.system.tokens"] > 0
    assert root["nimbus.context.section.history.tokens"] > 0
    assert root["nimbus.summary.used"] is False and root["nimbus.memory.used"] == 0
    assert root["nimbus.outcome"] == "answered" and root["nimbus.context.strategy"] == "compact"


def test_message_text_is_on_spans_only_when_capture_is_on(app, spans, alex):
    ask(alex, REFUND)
    assert REFUND not in json.dumps([dict(s.attributes) for s in spans.get_finished_spans()])
    spans.clear()
    app.config["NIMBUS_OTEL_CAPTURE_CONTENT"] = True
    ask(alex, REFUND)
    finished = by_name(spans.get_finished_spans())
    first = next(s for s in spans.get_finished_spans() if s.name.startswith("chat "))
    sent = json.loads(first.attributes["gen_ai.input.messages"])
    assert sent[-1] == {"role": "user", "parts": [{"type": "text", "content": REFUND}]}
    assert "1043" in finished["execute_tool check_refund_eligibility"].attributes[
        "gen_ai.tool.call.arguments"]
    assert "support agent" in finished["invoke_agent Nimbus"].attributes["gen_ai.system_instructions"]


def test_a_provider_error_marks_its_span_failed(spans, alex):
    from webapp.llm.base import ChatProvider, ProviderError

    class Down(ChatProvider):
        name, model, offline = "down", "gpt-test", False

        def stream(self, messages, tools):
            raise ProviderError("connection refused")
            yield

    ask(alex, REFUND, provider=Down())
    finished = by_name(spans.get_finished_spans())
    assert finished["chat gpt-test"].attributes["error.type"] == "ProviderError"
    assert finished["chat gpt-test"].status.status_code.name == "ERROR"
    assert finished["invoke_agent Nimbus"].attributes["nimbus.outcome"] == "api_error"


OFF_SCRIPT = """
import sys
from webapp import create_app, tracing
from webapp.database import create_schema
from webapp.accounts import seed_demo, find_user
from webapp.agent.loop import run_turn
from webapp.llm.offline import OfflineModel
from webapp.storage import create_conversation, start_turn
app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": "sqlite:///" + sys.argv[1],
                  "NIMBUS_OFFLINE_WORDS_PER_SECOND": 0, "NIMBUS_MEMORY_SEARCH": False})
with app.app_context():
    create_schema()
    seed_demo("demo")
    user = find_user(app.config["NIMBUS_DEMO_USER"])
    turn = start_turn(create_conversation(user), "Can I get a refund for order #1043?")
    events = list(run_turn(turn, OfflineModel()))
    assert events[-1].kind == "answer" and tracing.reply(turn, OfflineModel(), app.config) is tracing.OFF
    # (redis imports OpenTelemetry's metrics SDK by itself when it is installed; not traces.)
    print(app.extensions[tracing.EXTENSION], sorted(m for m in sys.modules if m.startswith(
        ("opentelemetry.exporter", "opentelemetry.sdk.trace", "opentelemetry.proto"))))
"""


def test_with_no_endpoint_no_exporter_is_built_nor_the_trace_sdk_imported(tmp_path):
    result = subprocess.run([sys.executable, "-c", OFF_SCRIPT, str(tmp_path / "off.db")],
                            capture_output=True, text=True, cwd=Path(__file__).parent.parent,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "None []"


@pytest.fixture
def collector():
    server = otlp_collector.start()
    yield server
    server.shutdown()
    server.server_close()


def test_the_otlp_endpoint_receives_the_reply_as_protobuf_spans(tmp_path, migrated_database,
                                                                 collector):
    import shutil
    from webapp.accounts import find_user
    from webapp.extensions import db
    shutil.copy(migrated_database, tmp_path / "nimbus.db")
    app = make_app(tmp_path / "nimbus.db")
    app.config["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{collector.server_port}"
    tracing.init_app(app)  # as create_app does with the variable set
    with app.app_context():
        _, conversation, _ = ask(find_user("alex@example.com"), REFUND)
        assert tracing.flush(app)
        tracing.shutdown(app)
        db.session.remove()
        db.engine.dispose()
    paths = {(path, kind) for path, kind, _ in Collector.received}
    assert paths == {("/v1/traces", "application/x-protobuf"),
                     ("/v1/metrics", "application/x-protobuf")}
    metrics = otlp_collector.metrics(Collector.received)
    duration = metrics["gen_ai.client.operation.duration"]
    assert sum(point.count for point in duration) == 2  # the tool call, then the answer
    tokens = metrics["gen_ai.client.token.usage"]
    kinds = {a.value.string_value for p in tokens for a in p.attributes
             if a.key == "gen_ai.token.type"}
    assert kinds == {"input", "output"}
    assert "gen_ai.client.operation.time_to_first_chunk" in metrics
    received = otlp_collector.spans(Collector.received)
    service = Collector.received[0][2].resource_spans[0].resource.attributes
    assert {a.key: a.value.string_value for a in service}["service.name"] == "nimbus"
    names = sorted(s.name for s in received)
    assert names == ["chat nimbus-offline-1", "chat nimbus-offline-1",
                     "execute_tool check_refund_eligibility", "invoke_agent Nimbus"]
    chat = next(s for s in received if s.name.startswith("chat "))
    attributes = {a.key: a.value for a in chat.attributes}
    assert attributes["gen_ai.conversation.id"].string_value == conversation.id
    assert attributes["gen_ai.usage.input_tokens"].int_value > 0
    assert [v.string_value for v in attributes["gen_ai.response.finish_reasons"].array_value.values] \
        == ["tool_calls"]


def test_with_capture_off_a_provider_error_quoting_the_request_stays_off_the_span(spans, alex):
    from webapp.llm.base import ChatProvider, ProviderError

    class Quoting(ChatProvider):
        name, model, offline = "quoting", "gpt-test", False

        def stream(self, messages, tools):
            raise ProviderError(f"400 invalid request: {messages[-1]['content']}")
            yield

    ask(alex, REFUND, provider=Quoting())
    span = by_name(spans.get_finished_spans())["chat gpt-test"]
    assert span.status.status_code.name == "ERROR"
    assert "1043" not in (span.status.description or "") and "1043" not in json.dumps(
        dict(span.attributes))
