"""OpenTelemetry traces of each reply, in the GenAI semantic conventions, sent over OTLP/HTTP.

Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: then no OpenTelemetry module is even imported, and
the agent loop's hooks are methods of OFF that return at once. On, each reply is a trace: an
`invoke_agent` span, a `chat {model}` span per model call and an `execute_tool {name}` span per
tool call, with Nimbus's own `nimbus.*` attributes for what the request carried. Message text is
put on the spans only with NIMBUS_OTEL_CAPTURE_CONTENT=1. Beside the traces, the GenAI client
metrics go to the same endpoint: gen_ai.client.operation.duration, gen_ai.client.token.usage and
gen_ai.client.operation.time_to_first_chunk (docs/tracing.md).
"""
import json
import logging
import os
import time
from urllib.parse import urlsplit

from flask import current_app

log = logging.getLogger(__name__)
EXTENSION = "nimbus_tracer"


class Off:
    """The reply trace while tracing is off: every hook does nothing."""

    def context(self, plan) -> None: ...
    def model_call(self, step, plan, messages): ...
    def first_chunk(self, span) -> None: ...
    def model_done(self, span, reply) -> None: ...
    def failed(self, span, error) -> None: ...
    def tool(self, call): ...
    def tool_done(self, span, result) -> None: ...
    def end(self, outcome, usage) -> None: ...


OFF = Off()


def init_app(app) -> None:
    """Build the tracer only when an endpoint is configured; otherwise leave nothing behind."""
    endpoint = app.config.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    app.extensions[EXTENSION] = build_tracer(otlp_exporter(endpoint),
                                             metric_reader=otlp_metric_reader(endpoint)) \
        if endpoint else None


def flush(app, timeout_ms: int = 5000) -> bool:
    """Export what is still buffered (the batch exporter sends every few seconds otherwise)."""
    tracer = app.extensions.get(EXTENSION)
    if tracer is None:
        return True
    sent = tracer.provider.force_flush(timeout_ms)
    if tracer.meters is not None:
        sent = tracer.meters.provider.force_flush(timeout_ms) and sent
    return sent


def shutdown(app) -> None:
    """Stop the exporters (their background threads) for good: tests and a process's end."""
    tracer = app.extensions.get(EXTENSION)
    if tracer is not None:
        tracer.provider.shutdown()
        if tracer.meters is not None:
            tracer.meters.provider.shutdown()


def otlp_metric_reader(endpoint: str):
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    metrics = os.environ.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") or \
        endpoint.rstrip("/") + "/v1/metrics"
    return PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=metrics))


class Meters:
    """The GenAI client metrics, with the bucket boundaries the conventions ask for."""
    SECONDS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96,
               81.92]
    TOKENS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216,
              67108864]

    def __init__(self, reader, resource):
        from opentelemetry.sdk.metrics import MeterProvider
        self.provider = MeterProvider(resource=resource, metric_readers=[reader])
        meter = self.provider.get_meter("nimbus")
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=self.SECONDS)
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=self.TOKENS)
        self.first_chunk = meter.create_histogram(
            "gen_ai.client.operation.time_to_first_chunk", unit="s",
            description="Time to receive the first chunk of the response stream.",
            explicit_bucket_boundaries_advisory=self.SECONDS)


def otlp_exporter(endpoint: str):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    # The SDK's own rule for the generic variable: the signal's path is appended to it.
    traces = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or \
        endpoint.rstrip("/") + "/v1/traces"
    return OTLPSpanExporter(endpoint=traces)


def build_tracer(exporter, batch: bool = True, metric_reader=None):
    """A tracer of its own provider (the process-wide one is left to the host), exporting to
    `exporter` in the background (batch) or as each span ends (tests); with `metric_reader`,
    the GenAI metrics too."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or "nimbus"})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(exporter) if batch
                                else SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("nimbus")
    tracer.provider = provider  # for flush()
    tracer.meters = Meters(metric_reader, resource) if metric_reader is not None else None
    return tracer


def reply(turn, provider, config):
    """The trace of one reply: OFF unless tracing is on."""
    tracer = current_app.extensions.get(EXTENSION)
    if tracer is None:
        return OFF
    try:
        return ReplyTrace(tracer, turn, provider, bool(config.get("NIMBUS_OTEL_CAPTURE_CONTENT")))
    except Exception:  # tracing never breaks a chat
        log.exception("could not start a reply trace")
        return OFF


def guarded(method):
    def call(self, *args):
        try:
            return method(self, *args)
        except Exception:
            log.exception("tracing hook %s failed", method.__name__)
    call.__name__ = method.__name__
    return call


def provider_attributes(provider) -> dict:
    """gen_ai.provider.name and the server, for the offline model or an OpenAI-compatible one."""
    if provider.offline:
        return {"gen_ai.provider.name": "nimbus.offline"}
    attributes = {"gen_ai.provider.name": "openai"}  # every server here speaks OpenAI's API
    base_url = getattr(getattr(provider, "client", None), "base_url", None)
    if base_url:
        parts = urlsplit(str(base_url))
        if parts.hostname:
            attributes["server.address"] = parts.hostname
            attributes["server.port"] = parts.port or (443 if parts.scheme == "https" else 80)
    return attributes


FINISH_REASONS = {"tool_calls": "tool_call", "function_call": "tool_call"}  # OpenAI's → the conventions'


def output_messages(reply, reason: str) -> str:
    """The reply in the conventions' gen_ai.output.messages shape: role, parts, finish_reason."""
    message = json.loads(input_messages([reply.as_message()]))[0]
    return json.dumps([{**message, "finish_reason": FINISH_REASONS.get(reason, reason)}],
                      ensure_ascii=False)


def client_error_type(error) -> str:
    """The client's own error type (openai.APITimeoutError, httpx.ConnectError…) where Nimbus's
    ProviderError wraps one; the conventions ask for the error the client saw."""
    found = error.__cause__ if error.__cause__ is not None else error
    module, name = type(found).__module__.split(".")[0], type(found).__name__
    return name if module in ("builtins", "webapp") else f"{module}.{name}"


def input_messages(messages: list[dict]) -> str:
    """Neutral messages in the conventions' gen_ai.input.messages shape (role and parts)."""
    out = []
    for m in messages:
        parts = [{"type": "text", "content": m["content"]}] if m.get("content") else []
        if m["role"] == "tool":
            parts = [{"type": "tool_call_response", "id": m["tool_call_id"],
                      "response": m["content"]}]
        parts += [{"type": "tool_call", "id": c["id"], "name": c["name"],
                   "arguments": c["arguments"]} for c in m.get("tool_calls") or []]
        out.append({"role": m["role"], "parts": parts})
    return json.dumps(out, ensure_ascii=False)


class ReplyTrace:
    """The spans of one reply; spans are parented explicitly, never made current, because the
    agent loop is a generator that may be resumed in another context."""

    def __init__(self, tracer, turn, provider, capture: bool):
        from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context
        self.SpanKind, self.Status, self.StatusCode = SpanKind, Status, StatusCode
        self.tracer, self.provider, self.capture = tracer, provider, capture
        conversation = turn.conversation
        self.common = {"gen_ai.conversation.id": conversation.id,
                       **provider_attributes(provider)}
        name = (conversation.tenant.settings or {}).get("assistant_name") or "Nimbus"
        self.root = tracer.start_span(f"invoke_agent {name}", kind=SpanKind.INTERNAL, attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name,
            "gen_ai.request.model": provider.model, "nimbus.turn.seq": turn.seq,
            "session.id": conversation.id, **self.common})  # Langfuse's sessions group by it
        self.parent = set_span_in_context(self.root)
        self.context_attributes: dict = {}
        self.open: list = []
        self.meters = getattr(tracer, "meters", None)
        self.started: dict = {}  # span → when its model call began (monotonic seconds)
        self.max_tokens: int | None = None
        self.error_type: str | None = None
        if capture:
            self.root.set_attribute("gen_ai.input.messages", input_messages(turn.messages[:1]))

    @guarded
    def context(self, plan) -> None:
        """What the request carries besides the question: sections, fates, summary, memories."""
        attributes = {"nimbus.context.strategy": plan.policy.strategy,
                      "nimbus.context.budget": plan.policy.budget,
                      "nimbus.context.tokens": plan.total_tokens}
        for section in plan.sections:
            attributes[f"nimbus.context.section.{section.name}.tokens"] = section.tokens
        counts: dict[str, int] = {}
        for fate in plan.history.fates:
            counts[fate.fate] = counts.get(fate.fate, 0) + 1
        for fate, count in counts.items():
            attributes[f"nimbus.context.fates.{fate.lower()}"] = count
        summary, memory = plan.section("summary"), plan.section("memory")
        attributes["nimbus.summary.used"] = summary is not None
        if summary is not None:
            attributes["nimbus.summary.through_turn"] = summary.detail["through_seq"] + 1
        attributes["nimbus.memory.used"] = len(memory.detail.get("memories", [])) if memory else 0
        self.context_attributes = attributes
        self.root.set_attributes(attributes)
        shape = getattr(plan, "shape", None)
        if shape is not None and self.provider.takes_options:
            self.max_tokens = shape.reserve  # the max_tokens the loop sends
        if self.capture:
            system = plan.section("system")
            if system is not None:
                self.root.set_attribute("gen_ai.system_instructions", json.dumps(
                    [{"type": "text", "content": m["content"]} for m in system.messages],
                    ensure_ascii=False))

    @guarded
    def model_call(self, step, plan, messages):
        span = self.tracer.start_span(
            f"chat {self.provider.model}", context=self.parent, kind=self.SpanKind.CLIENT,
            attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": self.provider.model,
                        "gen_ai.request.stream": True, "nimbus.step": step, **self.common,
                        **self.context_attributes,
                        **({"gen_ai.request.max_tokens": self.max_tokens} if self.max_tokens
                           else {})})
        if self.capture:
            span.set_attribute("gen_ai.input.messages", input_messages(plan.messages + messages))
        self.open.append(span)
        self.started[id(span)] = time.monotonic()
        return span

    def metric_attributes(self, reply=None, error_type: str | None = None) -> dict:
        keys = ("gen_ai.provider.name", "server.address", "server.port")
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": self.provider.model,
                      **{k: self.common[k] for k in keys if k in self.common}}
        model = getattr(reply, "response_model", None)
        if model:
            attributes["gen_ai.response.model"] = model
        if error_type:
            attributes["error.type"] = error_type
        return attributes

    def record(self, span, reply=None, error_type: str | None = None) -> None:
        started = self.started.pop(id(span), None)
        if self.meters is None or started is None:
            return
        attributes = self.metric_attributes(reply, error_type)
        self.meters.duration.record(time.monotonic() - started, attributes)
        usage = (getattr(reply, "usage", None) or {}) if reply is not None else {}
        for kind, key in (("input", "prompt_tokens"), ("output", "completion_tokens")):
            if usage.get(key) is not None:
                self.meters.tokens.record(usage[key], {**attributes, "gen_ai.token.type": kind})

    @guarded
    def first_chunk(self, span) -> None:
        """The first words or tool call of a model call arrived."""
        started = self.started.get(id(span))
        if self.meters is not None and started is not None:
            self.meters.first_chunk.record(time.monotonic() - started, self.metric_attributes())

    @guarded
    def model_done(self, span, reply) -> None:
        if span is None:
            return
        usage = reply.usage or {}
        if usage.get("prompt_tokens") is not None:
            span.set_attribute("gen_ai.usage.input_tokens", usage["prompt_tokens"])
        if usage.get("completion_tokens") is not None:
            span.set_attribute("gen_ai.usage.output_tokens", usage["completion_tokens"])
        reason = getattr(reply, "finish_reason", None) or ("tool_calls" if reply.tool_calls
                                                           else "stop")
        span.set_attribute("gen_ai.response.finish_reasons", [reason])
        for key, attribute in (("response_id", "gen_ai.response.id"),
                               ("response_model", "gen_ai.response.model")):
            if getattr(reply, key, None):
                span.set_attribute(attribute, getattr(reply, key))
        if self.capture:
            span.set_attribute("gen_ai.output.messages", output_messages(reply, reason))
        self.record(span, reply)
        self.close(span)

    @guarded
    def failed(self, span, error) -> None:
        if span is None:
            return
        self.error_type = client_error_type(error)
        span.set_attribute("error.type", self.error_type)
        # A provider's error may quote the request: its text only where content capture is on.
        said = str(error)[:200] if self.capture else self.error_type
        span.set_status(self.Status(self.StatusCode.ERROR, said))
        self.record(span, error_type=self.error_type)
        self.close(span)

    @guarded
    def tool(self, call):
        span = self.tracer.start_span(
            f"execute_tool {call.name}", context=self.parent, kind=self.SpanKind.INTERNAL,
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name,
                        "gen_ai.tool.call.id": call.id, "gen_ai.tool.type": "function",
                        "gen_ai.conversation.id": self.common["gen_ai.conversation.id"],
                        **tool_description(call.name)})
        if self.capture:
            span.set_attribute("gen_ai.tool.call.arguments",
                               json.dumps(call.arguments, ensure_ascii=False))
        self.open.append(span)
        return span

    @guarded
    def tool_done(self, span, result) -> None:
        if span is None:
            return
        if isinstance(result, dict) and result.get("error"):
            span.set_attribute("error.type", "tool_error")
            span.set_status(self.Status(self.StatusCode.ERROR, str(result["error"])[:200]))
        if self.capture:
            span.set_attribute("gen_ai.tool.call.result", result if isinstance(result, str)
                               else json.dumps(result, ensure_ascii=False))
        self.close(span)

    def close(self, span) -> None:
        span.end()
        if span in self.open:
            self.open.remove(span)

    @guarded
    def end(self, outcome, usage) -> None:
        """End the reply's trace (and any span a stopped reply left open)."""
        for span in list(self.open):
            span.set_attribute("nimbus.interrupted", True)
            self.close(span)
        self.root.set_attribute("nimbus.outcome", outcome or "interrupted")
        if usage.get("prompt_tokens") is not None:
            self.root.set_attribute("gen_ai.usage.input_tokens", usage["prompt_tokens"])
        if usage.get("completion_tokens") is not None:
            self.root.set_attribute("gen_ai.usage.output_tokens", usage["completion_tokens"])
        if outcome not in ("answered", "cut_off", None):  # a cut-off answer is an answer
            self.root.set_attribute("error.type", self.error_type or outcome)
            self.root.set_status(self.Status(self.StatusCode.ERROR, outcome))
        self.root.end()


def tool_description(name: str) -> dict:
    from .hooks import TOOLS
    found = TOOLS.get(name)
    return {"gen_ai.tool.description": found.description} if getattr(found, "description", "") \
        else {}
