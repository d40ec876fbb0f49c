"""The agent loop: model → tools → results → … until an answer, yielding events as it goes.

Modelled on the seed's runAgent(): a step limit, a guard against repeating the exact same call,
a polite fallback answer on provider errors, and the turn saved whatever the outcome, including
when the consumer stops iterating early. `run_turn` reads as its steps: plan the request
(`TurnState.plan_turn`), call the model (`model_call.call_model`: retries, the answer cap, a
failure mid-stream), take its reply (`take_reply`), run its tools (`run_tools`), and save the
turn (`save_turn`).
"""
import json
import logging
import time
from dataclasses import dataclass, field

from flask import current_app

from ..plurals import plural
from ..llm import (Reply, assistant_message, calibrated_ratio, close_open_tool_calls,
                   estimate_messages, notice_message, profile_for, tool_message)
from ..context import fit_tools, plan_request, ManifestRecorder
from .. import tracing
from ..extensions import db
from ..hooks import AFTER_TURN  # (turn, plan) once a turn is saved; filled by memories, context
from ..storage import checkpoint_turn, finish_turn
from . import approval
from .model_call import CUT_MARK, FALLBACK_ERROR, call_model  # noqa: F401 (callers read them here)
from .tools import REGISTRY, ToolContext, run_tool

FALLBACK_STEPS = ("Sorry, this is taking more steps than I expected. "
                  "Please contact our support team and they'll sort it out.")
FALLBACK_INTERRUPTED = "(This answer was interrupted before it finished.)"
REPEATED_CALL = "You already made this exact call. Use the earlier result."

log = logging.getLogger(__name__)


@dataclass
class AgentEvent:
    kind: str  # memory, token, tool_call, tool_result, answer, error
    step: int
    data: dict = field(default_factory=dict)
    line: str = ""  # the trace line, as the CLI prints it


def short_json(value, limit=160) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[:limit - 1] + "…"


def loaded_sections(plan) -> dict:
    """What else the request carries besides the history: long-term memories, a summary."""
    memory, summary = plan.section("memory"), plan.section("summary")
    return {"long_term_memories": len(memory.detail.get("memories", [])) if memory else 0,
            "summary_through_turn": summary.detail["through_seq"] + 1 if summary else None}


def describe_sections(loaded: dict) -> str:
    parts = []
    if loaded["long_term_memories"]:
        parts.append(plural(loaded["long_term_memories"], "long-term memory"))
    if loaded["summary_through_turn"]:
        parts.append(f"summary of turns 1–{loaded['summary_through_turn']}")
    return "; " + ", ".join(parts) if parts else ""


def partial_messages(messages: list[dict], streamed: list[str]) -> list[dict]:
    """The turn as it stands, well-formed: every tool call closed, the words so far kept."""
    closed = close_open_tool_calls(messages, "interrupted before the tool ran")
    partial = "".join(streamed).strip()
    return closed + [assistant_message(f"{partial} …") if partial
                     else notice_message("", FALLBACK_INTERRUPTED)]


def release_connection() -> None:
    """End the transaction so no connection (or lock) is held while a provider or tool works."""
    db.session.commit()


@dataclass
class TurnState:
    """One turn's run as it goes: what each step reads, and what `save_turn` stores."""
    turn: object
    provider: object
    config: dict
    progress: dict
    messages: list = field(default_factory=list)
    trace: list = field(default_factory=list)
    usage: dict = field(default_factory=dict)
    streamed: list = field(default_factory=list)  # the words of the call in progress
    outcome: str | None = None
    answer: str | None = None
    plan: object = None
    manifest: object = None
    ratio: float | None = None
    shrunk: bool = False  # asked once more, shorter, after a refusal for size
    started: float = 0.0  # when the call in progress began
    calls_seen: dict = field(default_factory=dict)

    def __post_init__(self):
        self.messages = list(self.turn.messages)
        self.question = self.turn.question or ""  # the customer's words: what write tools need
        self.context_tokens = estimate_messages(self.messages)
        self.progress.update(messages=self.messages, streamed=self.streamed)
        self.spans = tracing.reply(self.turn, self.provider, self.config)  # OFF unless tracing

    def event(self, kind, step, data, line=""):
        """An event that goes into the turn's trace, as the CLI prints it."""
        self.trace.append({"kind": kind, "step": step, "line": line,
                           **{k: v for k, v in data.items() if k != "text"}})
        return AgentEvent(kind, step, data, line)

    @staticmethod
    def event_only(kind, step, data=None):
        """An event for the stream alone (words, a Stop): the trace keeps the reply whole."""
        return AgentEvent(kind, step, data or {})

    def ms(self) -> int:
        return round((time.monotonic() - self.started) * 1000)

    def failed(self, step: int, error: str, answer: str) -> AgentEvent:
        """The call failed: the turn ends with this notice; the words so far stay."""
        self.outcome, self.answer = "api_error", answer
        return self.event("error", step, {"error": error, "ms": self.ms()}, f"API error: {error}")

    def planned(self, budget_cap=None):
        """The one planner: the viewer shows what it returns."""
        return plan_request(self.turn.conversation, self.config, before_seq=self.turn.seq,
                            question=self.messages, profile=self.profile, tools=self.fit,
                            budget_cap=budget_cap)

    def plan_turn(self) -> AgentEvent:
        """Plan the request, and say what it loaded."""
        conversation, config = self.turn.conversation, self.config
        # A model whose template cannot carry tools gets none, and none are counted; one whose
        # window cannot hold them all gets those it holds (fit_tools: the viewer shows the same).
        self.profile = profile_for(config)
        self.fit = fit_tools(config, self.profile, conversation, self.provider.supports_tools)
        self.specs = self.fit.specs
        reserve = self.profile.output_reserve(config.get("NIMBUS_MAX_OUTPUT_TOKENS") or 1024)
        # Counted by the server where it can (llama.cpp), so calibration subtracts what it sent.
        self.tool_tokens = self.fit.tokens
        self.options = {"max_tokens": reserve} if self.provider.takes_options else {}
        self.plan = self.planned()
        self.manifest = ManifestRecorder(self.plan, conversation.id)  # what each call receives
        self.tools = ToolContext(conversation.tenant, conversation.user, conversation,
                                 self.turn.seq, config)
        self.context_tokens = self.plan.total_tokens + estimate_messages(self.messages)
        history, loaded = self.plan.section("history"), loaded_sections(self.plan)
        self.spans.context(self.plan)
        release_connection()
        return self.event("memory", 0, {"messages": len(history.messages),
                                        "tokens": history.tokens,
                                        "context_tokens": self.context_tokens, **loaded},
                          f"memory: {len(history.messages)} earlier messages loaded "
                          f"({history.tokens} tokens){describe_sections(loaded)}")

    def begin_call(self, step: int):
        """A model call starts: no transaction open, its words counted afresh, its span."""
        self.streamed = []
        self.progress["streamed"] = self.streamed
        release_connection()
        self.manifest.call(self.messages, self.tool_tokens)
        return self.spans.model_call(step, self.plan, self.messages)


def run_turn(turn, provider, config=None, progress: dict | None = None):
    """Answer a pending turn, yielding AgentEvents; the turn is saved in every case.

    `progress` (if given) always points at the live messages and the words of the current
    step, so a run's supervisor can checkpoint them while the provider is still speaking.
    """
    state = TurnState(turn, provider, config or current_app.config,
                      {} if progress is None else progress)
    try:
        yield state.plan_turn()
        for step in range(1, state.config["NIMBUS_MAX_STEPS"] + 1):
            reply = yield from call_model(state, step)
            if reply is None:
                break
            take_reply(state, reply, step)
            if not reply.tool_calls:
                yield from answered(state, reply, step)
                break
            yield from run_tools(state, reply, step)
        else:
            state.outcome, state.answer = "step_limit", FALLBACK_STEPS
            limit = state.config["NIMBUS_MAX_STEPS"]
            yield state.event("error", limit, {"error": "step limit"},
                              f"stopped: reached the step limit ({limit})")
        if state.outcome not in ("answered", "cut_off", None):
            yield end_with_notice(state, "not run: the reply failed")
    except Exception as error:  # anything else, context assembly included: a polite fallback
        log.exception("turn %s failed", turn.id)
        db.session.rollback()
        state.trace.append({"kind": "error", "step": 0, "line": f"failed: {type(error).__name__}",
                            "error": type(error).__name__})
        state.outcome, state.answer = "api_error", FALLBACK_ERROR
        yield end_with_notice(state, "not run: the turn failed")
    finally:
        state.spans.end(state.outcome, state.usage)
        if state.progress.get("claim", lambda: True)():  # False: stopped while waiting
            messages = state.messages if state.outcome else \
                partial_messages(state.messages, state.streamed)
            save_turn(turn, state.plan, state.manifest, messages,
                      state.outcome or "interrupted", state.trace, state.usage,
                      state.context_tokens, state.ratio)


def take_reply(state: TurnState, reply: Reply, step: int) -> None:
    """Count what the provider reported; the first call calibrates the token estimate."""
    state.manifest.reported(reply.usage)
    for key, value in (reply.usage or {}).items():
        state.usage[key] = state.usage.get(key, 0) + (value or 0)
    if step == 1 and reply.usage and reply.usage.get("prompt_tokens"):
        # saved with the turn: no write waits on a provider. The tool specs are not history:
        # their share of what the provider counted is left out.
        state.ratio = calibrated_ratio(
            state.turn.conversation.token_ratio,
            max(reply.usage["prompt_tokens"] - state.tool_tokens, 1),
            estimate_messages(state.plan.messages + state.messages))


def answered(state: TurnState, reply: Reply, step: int):
    """A reply without tool calls ends the turn: answered, or cut off with its words kept."""
    ms = state.ms()
    state.messages.append(reply.as_message())
    state.answer = reply.text
    if reply.finish_reason in ("length", "deadline"):
        state.outcome = "cut_off"
        why = reply.cut_by or "it reached the output cap"
        yield state.event("cut_off", step, {"ms": ms, "reason": why},
                          f"model answered, cut off: {why} ({ms} ms)")
    else:
        state.outcome = "answered"
    yield state.event("answer", step, {"text": state.answer, "ms": ms}, f"model answered ({ms} ms)")


def run_tools(state: TurnState, reply: Reply, step: int):
    """Run each tool the reply calls (unless repeated, or a write nobody asked for)."""
    ms = state.ms()
    state.messages.append(reply.as_message())
    state.streamed.clear()  # the words before a tool call are in the message now
    for call in reply.tool_calls:
        yield state.event("tool_call", step, {"tool": call.name, "arguments": call.arguments,
                                              "ms": ms},
                          f"model → {call.name}({short_json(call.arguments)}) ({ms} ms)")
        key = call.name + json.dumps(call.arguments, sort_keys=True)
        state.calls_seen[key] = state.calls_seen.get(key, 0) + 1
        started, span = time.monotonic(), state.spans.tool(call)
        refused = approval.check(REGISTRY.get(call.name), state.tools, state.question,
                                 call.arguments)
        if call.name in state.fit.left_out:  # the model was not offered it: nothing runs
            result = {"error": f"Unknown tool: {call.name}"}
        elif state.calls_seen[key] > state.config["NIMBUS_MAX_REPEAT_CALLS"]:
            result = {"error": REPEATED_CALL}
        elif refused is not None:  # a write nobody asked for: the chat asks them
            result = refused
        else:
            state.progress["in_tool"] = True  # a Stop now waits for the tool's result
            try:
                result = run_tool(call.name, state.tools, call.arguments)
            finally:
                state.progress["in_tool"] = False
        tool_ms = round((time.monotonic() - started) * 1000)
        state.spans.tool_done(span, result)
        state.messages.append(tool_message(call.id, call.name, result))
        # The result is stored in the same commit as what the tool wrote, so a run taken
        # over after a crash never runs a tool twice.
        checkpoint_turn(state.turn, partial_messages(state.messages, []))
        yield state.event("tool_result", step, {"tool": call.name, "result": result,
                                                "ms": tool_ms},
                          f"tool  ← {short_json(result)} ({tool_ms} ms)")


def end_with_notice(state: TurnState, why_not_run: str) -> AgentEvent:
    """A failed turn keeps the words already shown (they were read) and ends with Nimbus's
    notice, never with the notice as the model's words."""
    partial = "".join(state.streamed).strip()
    state.messages = close_open_tool_calls(state.messages, why_not_run) + [
        notice_message(partial, state.answer)]
    return AgentEvent("answer", 0, {"text": state.answer, "fallback": True})


def save_turn(turn, plan, manifest, messages, outcome, trace, usage, context_tokens, ratio):
    """Store the finished turn with what every model call received, then the after-turn hooks."""
    conversation = turn.conversation
    # Resending everything: the same request with every stored turn in place of the history
    # and of the summary that stands in for older turns.
    replaced = sum(s.tokens for s in plan.sections if s.name in ("history", "summary")) \
        if plan else 0
    resend_tokens = context_tokens - replaced + round(
        conversation.history_tokens * (plan.ratio if plan else 1.0))
    if manifest is not None:  # count every model call, and keep what each one received
        manifest.store_texts()
        context_tokens = manifest.context_tokens
        resend_tokens = manifest.resend_tokens(conversation.history_tokens)
    finish_turn(turn, messages, outcome, trace, usage, context_tokens, resend_tokens, ratio,
                manifest.data if manifest else None)
    for hook in AFTER_TURN if plan is not None else ():
        try:
            hook(turn, plan)
        except Exception:  # background work must never break a chat
            log.exception("after-turn hook %s failed", hook.__name__)
