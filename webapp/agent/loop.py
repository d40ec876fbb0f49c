"""The agent loop: model → tools → results → … until an answer, yielding events as it goes.

Modelled on the seed's runAgent(): a step limit, a guard against repeating the exact same call,
a polite fallback answer on provider errors, and the turn saved whatever the outcome, including
when the consumer stops iterating early.
"""
import json
import logging
import time
from dataclasses import dataclass, field

from flask import current_app

from ..plurals import plural
from ..llm.base import ContextTooLong, ProviderCancelled, ProviderError, Reply
from ..llm.profile import learn_window, profile_for
from ..llm.messages import (assistant_message, close_open_tool_calls, notice_message,
                            tool_message)
from ..llm.tokens import calibrated_ratio, estimate_messages, estimate_tools
from ..llm.valid_text import valid_stream
from ..context.request import plan_request
from ..context.manifest import ManifestRecorder
from .. import tracing
from ..extensions import db
from ..hooks import AFTER_TURN  # (turn, plan) once a turn is saved; filled by memories, context
from ..storage import checkpoint_turn, finish_turn
from . import approval
from .tools import REGISTRY, ToolContext, run_tool, tools_for

FALLBACK_ERROR = "Sorry, I'm having trouble right now. Please try again in a moment."
FALLBACK_TOO_LONG = ("Sorry, this conversation has grown longer than the model can read at once. "
                     "Please start a new conversation.")
FALLBACK_STEPS = ("Sorry, this is taking more steps than I expected. "
                  "Please contact our support team and they'll sort it out.")
FALLBACK_INTERRUPTED = "(This answer was interrupted before it finished.)"
REPEATED_CALL = "You already made this exact call. Use the earlier result."
CUT_MARK = "(Answer cut here: it ran past {limit:,} characters.)"

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


def cut_answer(text: str, limit: int) -> str:
    """An answer past the limit (a provider gone runaway) is kept up to it, and says so."""
    return f"{text[:limit].rstrip()}\n\n{CUT_MARK.format(limit=limit)}"


def capped(reply: Reply, limit: int) -> Reply:
    """The reply with its text cut to the limit; its provider's own message (the whole text)
    is dropped, so the cut answer is what is stored, shown and sent again."""
    if len(reply.text) <= limit:
        return reply
    return Reply(cut_answer(reply.text, limit), reply.tool_calls, None, reply.usage,
                 reply.finish_reason, reply.cut_by)


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
    question = turn.question or ""  # the customer's words this turn: what write tools need
    outcome, answer, streamed, plan, ratio, manifest = None, None, [], None, None, None
    context_tokens = estimate_messages(messages)
    progress = {} if progress is None else progress
    progress.update(messages=messages, streamed=streamed)
    spans = tracing.reply(turn, provider, config)  # OFF (does nothing) unless tracing is on

    def event(kind, step, data, line=""):
        trace.append({"kind": kind, "step": step, "line": line,
                      **{k: v for k, v in data.items() if k != "text"}})
        return AgentEvent(kind, step, data, line)

    try:
        # A model whose template cannot carry tools gets none, and none are counted.
        specs = [t.spec() for t in tools_for(config)] if provider.supports_tools else []
        profile = profile_for(config)
        reserve = profile.output_reserve(config.get("NIMBUS_MAX_OUTPUT_TOKENS") or 1024)
        tool_tokens = estimate_tools(specs)
        options = {"max_tokens": reserve} if provider.takes_options else {}

        def planned(budget_cap=None):  # the one planner: the viewer shows what it returns
            return plan_request(conversation, config, before_seq=turn.seq, question=messages,
                                profile=profile, specs=specs, budget_cap=budget_cap)

        plan = planned()
        manifest = ManifestRecorder(plan, conversation.id)  # what each model call receives
        context = ToolContext(conversation.tenant, conversation.user, conversation, turn.seq, config)
        context_tokens = plan.total_tokens + estimate_messages(messages)
        history = plan.section("history")
        loaded = loaded_sections(plan)
        spans.context(plan)
        release_connection()
        yield event("memory", 0, {"messages": len(history.messages), "tokens": history.tokens,
                                  "context_tokens": context_tokens, **loaded},
                    f"memory: {len(history.messages)} earlier messages loaded "
                    f"({history.tokens} tokens){describe_sections(loaded)}")
        calls_seen: dict[str, int] = {}
        shrunk = False
        for step in range(1, config["NIMBUS_MAX_STEPS"] + 1):
            while True:  # once more, shorter, when the server says the request is too long
                started, reply, streamed = time.monotonic(), None, []
                progress["streamed"] = streamed
                release_connection()
                manifest.call(messages, tool_tokens if specs else 0)
                limit, size = config["NIMBUS_MAX_ANSWER_CHARS"], 0
                span = spans.model_call(step, plan, messages)
                try:
                    stream = provider.stream(plan.messages + messages, specs, **options)
                    for index, chunk in enumerate(valid_stream(stream)):
                        if index == 0:
                            spans.first_chunk(span)  # time to the first words or call
                        if isinstance(chunk, str):
                            if size + len(chunk) > limit:  # runaway: keep what fits, stop listening
                                streamed.append(chunk[:limit - size])
                                yield AgentEvent("token", step, {"text": chunk[:limit - size]})
                                getattr(stream, "close", lambda: None)()
                                reply = Reply(cut_answer("".join(streamed), limit))
                                break
                            size += len(chunk)
                            streamed.append(chunk)
                            yield AgentEvent("token", step, {"text": chunk})
                        else:
                            reply = capped(chunk, limit)
                    if reply is None:
                        raise ProviderError("the provider ended without a reply")
                    if not reply.tool_calls and not reply.text.strip():
                        raise ProviderError("the provider sent an empty answer")
                except ContextTooLong as error:
                    spans.failed(span, error)
                    ms = round((time.monotonic() - started) * 1000)
                    if error.n_ctx:
                        learn_window(config, error.n_ctx)
                        profile.context_window = min(profile.context_window or error.n_ctx,
                                                     error.n_ctx)
                    if error.n_prompt:  # the server counted more than estimated: learn it now
                        sent = estimate_messages(plan.messages + messages) + tool_tokens
                        ratio = max(conversation.token_ratio or 1.0,
                                    min(round(error.n_prompt / max(sent, 1), 4), 4.0))
                        conversation.token_ratio = ratio
                    if not shrunk and not streamed:
                        shrunk = True
                        yield event("retry", step, {"error": str(error)[:300], "ms": ms},
                                    "too long for the model's window: asking again, shorter")
                        plan = planned(budget_cap=plan.policy.budget // 2)
                        continue
                    yield event("error", step, {"error": str(error)[:300], "ms": ms},
                                f"API error: {str(error)[:300]}")
                    outcome, answer = "api_error", FALLBACK_TOO_LONG
                except ProviderCancelled as error:
                    spans.failed(span, error)
                    ms = round((time.monotonic() - started) * 1000)
                    if error.reason == "stopped":
                        yield AgentEvent("stopped", step, {})  # the run ends the loop here
                        outcome, answer = None, None
                    else:
                        yield event("error", step, {"error": error.reason, "ms": ms},
                                    f"API error: {error.reason}")
                        outcome, answer = "api_error", FALLBACK_ERROR
                except ProviderError as error:
                    spans.failed(span, error)
                    ms = round((time.monotonic() - started) * 1000)
                    yield event("error", step, {"error": str(error), "ms": ms},
                                f"API error: {error}")
                    outcome, answer = "api_error", FALLBACK_ERROR
                break
            if reply is None or outcome is not None or (not reply.tool_calls
                                                         and not reply.text.strip()):
                reply = None
                break
            ms = round((time.monotonic() - started) * 1000)
            spans.model_done(span, reply)
            manifest.reported(reply.usage)
            for key, value in (reply.usage or {}).items():
                usage[key] = usage.get(key, 0) + (value or 0)
            if step == 1 and reply.usage and reply.usage.get("prompt_tokens"):
                # saved with the turn: no write waits on a provider. The tool specs are not
                # history: their share of what the provider counted is left out.
                ratio = calibrated_ratio(
                    conversation.token_ratio,
                    max(reply.usage["prompt_tokens"] - (tool_tokens if specs else 0), 1),
                    estimate_messages(plan.messages + messages))
            if not reply.tool_calls:
                messages.append(reply.as_message())
                answer = reply.text
                if reply.finish_reason in ("length", "deadline"):  # its words are kept
                    outcome = "cut_off"
                    why = reply.cut_by or "it reached the output cap"
                    yield event("cut_off", step, {"ms": ms, "reason": why},
                                f"model answered, cut off: {why} ({ms} ms)")
                else:
                    outcome = "answered"
                yield event("answer", step, {"text": answer, "ms": ms},
                            f"model answered ({ms} ms)")
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
                tool_span = spans.tool(call)
                refused = approval.check(REGISTRY.get(call.name), context, question,
                                         call.arguments)
                if calls_seen[key] > config["NIMBUS_MAX_REPEAT_CALLS"]:
                    result = {"error": REPEATED_CALL}
                elif refused is not None:  # a write nobody asked for: the chat asks them
                    result = refused
                else:
                    progress["in_tool"] = True  # a Stop now waits for the tool's result
                    try:
                        result = run_tool(call.name, context, call.arguments)
                    finally:
                        progress["in_tool"] = False
                tool_ms = round((time.monotonic() - tool_started) * 1000)
                spans.tool_done(tool_span, result)
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
        if outcome not in ("answered", "cut_off", None):
            # The words already shown stay: the provider died mid-reply, they were read.
            partial = "".join(streamed).strip()
            messages = close_open_tool_calls(messages, "not run: the reply failed")
            messages.append(notice_message(partial, answer))
            yield AgentEvent("answer", 0, {"text": answer, "fallback": True})
    except Exception as error:  # anything else, context assembly included: a polite fallback
        log.exception("turn %s failed", turn_id)
        db.session.rollback()
        trace.append({"kind": "error", "step": 0, "line": f"failed: {type(error).__name__}",
                      "error": type(error).__name__})
        outcome, answer = "api_error", FALLBACK_ERROR
        partial = "".join(streamed).strip()
        messages = close_open_tool_calls(messages, "not run: the turn failed") + [
            notice_message(partial, answer)]
        yield AgentEvent("answer", 0, {"text": answer, "fallback": True})
    finally:
        spans.end(outcome, usage)
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
