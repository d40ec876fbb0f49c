"""One model call of a turn: stream the reply under the answer cap, and ask once more, shorter,
when the server says the request is longer than its window.

A provider failure mid-stream ends here: `call_model` records the error in the turn's state
(`outcome` and the fallback notice) and returns None; the words already streamed stay in
`state.streamed`, so the turn keeps them as its partial answer.
"""
import time

from ..llm import (ContextTooLong, ProviderBusy, ProviderCancelled, ProviderError, Reply,
                   estimate_messages, learn_window, valid_stream)
from ..plurals import plural

FALLBACK_ERROR = "Sorry, I'm having trouble right now. Please try again in a moment."
FALLBACK_TOO_LONG = ("Sorry, this conversation has grown longer than the model can read at once. "
                     "Please start a new conversation.")
CUT_MARK = "(Answer cut here: it ran past {limit:,} characters.)"


def busy_notice(seconds: int | None) -> str:
    """What the person reads when the model's server is busy: when to try again, if it said."""
    if not seconds:
        return "Sorry, the model is busy right now. Please try again in a moment."
    wait = plural(seconds, "second") if seconds < 120 else plural(round(seconds / 60), "minute")
    return f"Sorry, the model is busy right now. Please try again in {wait}."


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


def call_model(state, step: int):
    """Yield the reply's events; return the Reply, or None when the call failed or was stopped
    (then `state.outcome` says which: "api_error", or None for a Stop)."""
    while True:
        state.started = time.monotonic()
        span = state.begin_call(step)
        try:
            return (yield from stream_reply(state, step, span))
        except ContextTooLong as error:
            state.spans.failed(span, error)
            learn_from_refusal(state, error)
            if not state.shrunk and not state.streamed:
                state.shrunk = True
                yield state.event("retry", step, {"error": str(error)[:300], "ms": state.ms()},
                                  "too long for the model's window: asking again, shorter")
                state.plan = state.planned(budget_cap=state.plan.policy.budget // 2)
                continue
            yield state.failed(step, str(error)[:300], FALLBACK_TOO_LONG)
        except ProviderCancelled as error:
            state.spans.failed(span, error)
            if error.reason == "stopped":
                yield state.event_only("stopped", step)  # the run ends the loop here
            else:
                yield state.failed(step, error.reason, FALLBACK_ERROR)
        except ProviderBusy as error:  # answered at once: nobody is held for a Retry-After
            state.spans.failed(span, error)
            yield state.failed(step, str(error), busy_notice(error.retry_after))
        except ProviderError as error:
            state.spans.failed(span, error)
            yield state.failed(step, str(error), FALLBACK_ERROR)
        return None


def stream_reply(state, step: int, span):
    """Stream one reply, its words yielded as they come, cut at NIMBUS_MAX_ANSWER_CHARS."""
    limit, size, reply = state.config["NIMBUS_MAX_ANSWER_CHARS"], 0, None
    stream = state.provider.stream(state.plan.messages + state.messages, state.specs,
                                   **state.options)
    for index, chunk in enumerate(valid_stream(stream)):
        if index == 0:
            state.spans.first_chunk(span)  # time to the first words or call
        if not isinstance(chunk, str):
            reply = capped(chunk, limit)
            continue
        if size + len(chunk) > limit:  # runaway: keep what fits, stop listening
            state.streamed.append(chunk[:limit - size])
            yield state.event_only("token", step, {"text": chunk[:limit - size]})
            getattr(stream, "close", lambda: None)()
            reply = Reply(cut_answer("".join(state.streamed), limit))
            break
        size += len(chunk)
        state.streamed.append(chunk)
        yield state.event_only("token", step, {"text": chunk})
    if reply is None:
        raise ProviderError("the provider ended without a reply")
    if not reply.tool_calls and not reply.text.strip():
        raise ProviderError("the provider sent an empty answer")
    state.spans.model_done(span, reply)
    return reply


def learn_from_refusal(state, error: ContextTooLong) -> None:
    """A refusal for size teaches the window the server has, and how it counts tokens."""
    if error.n_ctx:
        learn_window(state.config, error.n_ctx)
        state.profile.context_window = min(state.profile.context_window or error.n_ctx,
                                           error.n_ctx)
    if error.n_prompt:  # the server counted more than estimated: learn it now
        sent = estimate_messages(state.plan.messages + state.messages) + state.tool_tokens
        conversation = state.turn.conversation
        state.ratio = max(conversation.token_ratio or 1.0,
                          min(round(error.n_prompt / max(sent, 1), 4), 4.0))
        conversation.token_ratio = state.ratio
