"""The agent loop: model → tools → results → … until an answer, yielding events as it goes.

Modelled on the seed's runAgent(): a step limit, a guard against repeating the exact same call,
a polite fallback answer on provider errors, and the turn saved whatever the outcome, including
when the consumer stops iterating early.
"""
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Callable

from flask import current_app

from ..llm.base import ProviderError
from ..llm.messages import assistant_message, close_open_tool_calls, tool_message
from ..llm.tokens import calibrated_ratio, estimate_messages
from ..llm.valid_text import valid_stream
from ..memory.context import assemble
from ..memory.manifest import ManifestRecorder
from ..extensions import db
from ..storage import checkpoint_turn, finish_turn
from .tools import ToolContext, run_tool, tools_for

FALLBACK_ERROR = "Sorry, I'm having trouble right now. Please try again in a moment."
FALLBACK_EMPTY = "Sorry, I couldn't come up with an answer. Could you rephrase?"
FALLBACK_STEPS = ("Sorry, this is taking more steps than I expected. "
                  "Please contact our support team and they'll sort it out.")
FALLBACK_INTERRUPTED = "(This answer was interrupted before it finished.)"
REPEATED_CALL = "You already made this exact call. Use the earlier result."

# Called with (turn, plan) once a turn is saved: background work (summaries, memory) hooks in here.
AFTER_TURN: list[Callable] = []
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
        parts.append(f"{loaded['long_term_memories']} long-term memories")
    if loaded["summary_through_turn"]:
        parts.append(f"summary of turns 1–{loaded['summary_through_turn']}")
    return "; " + ", ".join(parts) if parts else ""


def partial_messages(messages: list[dict], streamed: list[str]) -> list[dict]:
    """The turn as it stands, well-formed: every tool call closed, the words so far kept."""
    closed = close_open_tool_calls(messages, "interrupted before the tool ran")
    partial = "".join(streamed).strip()
    return closed + [assistant_message(f"{partial} …" if partial else FALLBACK_INTERRUPTED)]


def release_connection() -> None:
    """End the transaction so no connection (or lock) is held while a provider or tool works."""
    db.session.commit()


def run_turn(turn, provider, config=None, progress: dict | None = None):
    """Answer a pending turn, yielding AgentEvents; the turn is saved in every case.

    `progress` (if given) always points at the live messages and the words of the current
    step, so a run's supervisor can checkpoint them while the provider is still speaking.
    """
    config = config or current_app.config
    conversation, turn_id = turn.conversation, turn.id
    messages, trace, usage = list(turn.messages), [], {}
    outcome, answer, streamed, plan, ratio, manifest = None, None, [], None, None, None
    context_tokens = estimate_messages(messages)
    progress = {} if progress is None else progress
    progress.update(messages=messages, streamed=streamed)

    def event(kind, step, data, line=""):
        trace.append({"kind": kind, "step": step, "line": line,
                      **{k: v for k, v in data.items() if k != "text"}})
        return AgentEvent(kind, step, data, line)

    try:
        plan = assemble(conversation, config, before_seq=turn.seq)
        manifest = ManifestRecorder(plan, conversation.id)  # what each model call receives
        tools = tools_for(config)
        specs = [t.spec() for t in tools]
        context = ToolContext(conversation.tenant, conversation.user, conversation, turn.seq, config)
        context_tokens = plan.total_tokens + estimate_messages(messages)
        history = plan.section("history")
        loaded = loaded_sections(plan)
        release_connection()
        yield event("memory", 0, {"messages": len(history.messages), "tokens": history.tokens,
                                  "context_tokens": context_tokens, **loaded},
                    f"memory: {len(history.messages)} earlier messages loaded "
                    f"({history.tokens} tokens){describe_sections(loaded)}")
        calls_seen: dict[str, int] = {}
        for step in range(1, config["NIMBUS_MAX_STEPS"] + 1):
            started, reply, streamed = time.monotonic(), None, []
            progress["streamed"] = streamed
            release_connection()
            manifest.call(messages)
            try:
                for chunk in valid_stream(provider.stream(plan.messages + messages, specs)):
                    if isinstance(chunk, str):
                        streamed.append(chunk)
                        yield AgentEvent("token", step, {"text": chunk})
                    else:
                        reply = chunk
                if reply is None:
                    raise ProviderError("the provider ended without a reply")
            except ProviderError as error:
                ms = round((time.monotonic() - started) * 1000)
                yield event("error", step, {"error": str(error), "ms": ms}, f"API error: {error}")
                outcome, answer = "api_error", FALLBACK_ERROR
                break
            ms = round((time.monotonic() - started) * 1000)
            manifest.reported(reply.usage)
            for key, value in (reply.usage or {}).items():
                usage[key] = usage.get(key, 0) + (value or 0)
            if step == 1 and reply.usage:  # saved with the turn: no write waits on a provider
                ratio = calibrated_ratio(conversation.token_ratio, reply.usage.get("prompt_tokens"),
                                         estimate_messages(plan.messages + messages))
            if not reply.tool_calls:
                if reply.text.strip():
                    messages.append(reply.as_message())
                    outcome, answer = "answered", reply.text
                    yield event("answer", step, {"text": answer, "ms": ms},
                                f"model answered ({ms} ms)")
                else:
                    outcome, answer = "answered", FALLBACK_EMPTY
                break
            messages.append(reply.as_message())
            streamed.clear()  # the words before a tool call are in the message now
            for call in reply.tool_calls:
                yield event("tool_call", step, {"tool": call.name, "arguments": call.arguments,
                                                "ms": ms},
                            f"model → {call.name}({short_json(call.arguments)}) ({ms} ms)")
                key = call.name + json.dumps(call.arguments, sort_keys=True)
                calls_seen[key] = calls_seen.get(key, 0) + 1
                tool_started = time.monotonic()
                if calls_seen[key] > config["NIMBUS_MAX_REPEAT_CALLS"]:
                    result = {"error": REPEATED_CALL}
                else:
                    progress["in_tool"] = True  # a Stop now waits for the tool's result
                    try:
                        result = run_tool(call.name, context, call.arguments)
                    finally:
                        progress["in_tool"] = False
                tool_ms = round((time.monotonic() - tool_started) * 1000)
                messages.append(tool_message(call.id, call.name, result))
                # The result is stored in the same commit as what the tool wrote, so a run taken
                # over after a crash never runs a tool twice.
                checkpoint_turn(turn, partial_messages(messages, []))
                yield event("tool_result", step, {"tool": call.name, "result": result,
                                                  "ms": tool_ms},
                            f"tool  ← {short_json(result)} ({tool_ms} ms)")
        else:
            outcome, answer = "step_limit", FALLBACK_STEPS
            yield event("error", config["NIMBUS_MAX_STEPS"], {"error": "step limit"},
                        f"stopped: reached the step limit ({config['NIMBUS_MAX_STEPS']})")
        if outcome != "answered" or answer in (FALLBACK_EMPTY,):
            messages.append(assistant_message(answer))
            yield AgentEvent("answer", 0, {"text": answer, "fallback": True})
    except Exception as error:  # anything else, context assembly included: a polite fallback
        log.exception("turn %s failed", turn_id)
        db.session.rollback()
        trace.append({"kind": "error", "step": 0, "line": f"failed: {type(error).__name__}",
                      "error": type(error).__name__})
        outcome, answer = "api_error", FALLBACK_ERROR
        partial = "".join(streamed).strip()
        messages = close_open_tool_calls(messages, "not run: the turn failed") + [
            assistant_message(f"{partial} …\n\n{answer}" if partial else answer)]
        yield AgentEvent("answer", 0, {"text": answer, "fallback": True})
    finally:
        if progress.get("claim", lambda: True)():  # False: stopped while waiting, saved for it
            save_turn(turn, plan, manifest, messages if outcome else
                      partial_messages(messages, streamed), outcome or "interrupted", trace,
                      usage, context_tokens, ratio)


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
