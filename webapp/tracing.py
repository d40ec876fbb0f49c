"""OpenTelemetry traces of each reply, in the GenAI semantic conventions, sent over OTLP/HTTP.

Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: then no OpenTelemetry module is even imported, and
the agent loop's hooks are methods of OFF that return at once. On, each reply is a trace: an
`invoke_agent` span, a `chat {model}` span per model call and an `execute_tool {name}` span per
tool call, with Nimbus's own `nimbus.*` attributes for what the request carried. Message text is
put on the spans only with NIMBUS_OTEL_CAPTURE_CONTENT=1.
"""
import json
import logging
import os
from urllib.parse import urlsplit

from flask import current_app

log = logging.getLogger(__name__)
EXTENSION = "nimbus_tracer"


class Off:
    """The reply trace while tracing is off: every hook does nothing."""

    def context(self, plan) -> None: ...
    def model_call(self, step, plan, messages): ...
    def model_done(self, span, reply) -> None: ...
    def failed(self, span, error) -> None: ...
    def tool(self, call): ...
    def tool_done(self, span, result) -> None: ...
    def end(self, outcome, usage) -> None: ...


OFF = Off()


def init_app(app) -> None:
    """Build the tracer only when an endpoint is configured; otherwise leave nothing behind."""
    endpoint = app.config.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    app.extensions[EXTENSION] = build_tracer(otlp_exporter(endpoint)) if endpoint else None


def flush(app, timeout_ms: int = 5000) -> bool:
    """Export what is still buffered (the batch exporter sends every few seconds otherwise)."""
    tracer = app.extensions.get(EXTENSION)
    return tracer is None or tracer.provider.force_flush(timeout_ms)


def otlp_exporter(endpoint: str):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    # The SDK's own rule for the generic variable: the signal's path is appended to it.
    traces = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or \
        endpoint.rstrip("/") + "/v1/traces"
    return OTLPSpanExporter(endpoint=traces)


def build_tracer(exporter, batch: bool = True):
    """A tracer of its own provider (the process-wide one is left to the host), exporting to
    `exporter` in the background (batch) or as each span ends (tests)."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    provider = TracerProvider(resource=Resource.create(
        {"service.name": os.environ.get("OTEL_SERVICE_NAME") or "nimbus"}))
    provider.add_span_processor(BatchSpanProcessor(exporter) if batch
                                else SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("nimbus")
    tracer.provider = provider  # for flush()
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
    if getattr(provider, "offline", False):
        return {"gen_ai.provider.name": "nimbus.offline"}
    attributes = {"gen_ai.provider.name": "openai"}  # every server here speaks OpenAI's API
    base_url = getattr(getattr(provider, "client", None), "base_url", None)
    if base_url:
        parts = urlsplit(str(base_url))
        if parts.hostname:
            attributes["server.address"] = parts.hostname
            attributes["server.port"] = parts.port or (443 if parts.scheme == "https" else 80)
    return attributes


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
                        "nimbus.step": step, **self.common, **self.context_attributes})
        if self.capture:
            span.set_attribute("gen_ai.input.messages", input_messages(plan.messages + messages))
        self.open.append(span)
        return span

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
        if self.capture:
            span.set_attribute("gen_ai.output.messages", input_messages([reply.as_message()]))
        self.close(span)

    @guarded
    def failed(self, span, error) -> None:
        if span is None:
            return
        span.set_attribute("error.type", type(error).__name__)
        # A provider's error may quote the request: its text only where content capture is on.
        said = str(error)[:200] if self.capture else type(error).__name__
        span.set_status(self.Status(self.StatusCode.ERROR, said))
        self.close(span)

    @guarded
    def tool(self, call):
        span = self.tracer.start_span(
            f"execute_tool {call.name}", context=self.parent, kind=self.SpanKind.INTERNAL,
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name,
                        "gen_ai.tool.call.id": call.id, "gen_ai.tool.type": "function",
                        "gen_ai.conversation.id": self.common["gen_ai.conversation.id"]})
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
        if outcome not in ("answered", None):
            self.root.set_status(self.Status(self.StatusCode.ERROR, outcome))
        self.root.end()
