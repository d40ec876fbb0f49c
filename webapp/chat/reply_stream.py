"""One reply as server-sent events: `block` and `token` (the words so far as rendered Markdown:
finished blocks appended, the open one swapped in; streamed_markdown.py), `tool` (steps as they
run), then `done`.

`done` carries the finished message (markdown rendered and sanitized, tool steps collapsed) and is
the event the bubble's sse-close waits for: the browser closes the stream and never asks again.
"""
from typing import Iterator

from flask import render_template

from ..extensions import db
from ..models import Conversation, Turn
from .streamed_markdown import StreamedMarkdown
from .tool_steps import ToolStep
from ..runs import TurnRun


def sse(event: str, payload: str) -> str:
    """A named event with one `data:` line per line of payload."""
    lines = payload.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return f"event: {event}\n" + "".join(f"data: {line}\n" for line in lines) + "\n"


def reply_events(conversation: Conversation, turn: Turn, run: TurnRun | None) -> Iterator[str]:
    """Follow the run (if the reply is still being written), then send the saved reply as `done`."""
    turn_id, seq = turn.id, turn.seq
    db.session.commit()  # hold no database snapshot open while the reply is written
    yield "retry: 1000\n\n"  # starts the response at once; a dropped connection retries after 1 s
    steps: list[ToolStep] = []
    words = StreamedMarkdown()
    for event in run.follow() if run is not None else ():
        if event is None:
            yield ": still writing\n\n"  # keeps proxies from closing a quiet stream
        elif event.kind == "token":
            block, open_block = words.add(event.data["text"])
            if block:
                yield sse("block", block)
            if open_block is not None:
                yield sse("token", open_block)
        elif event.kind == "tool_call":
            steps.append(ToolStep(event.data["tool"], event.data.get("arguments") or {}))
            yield sse("tool", render_step(seq, steps))
        elif event.kind == "tool_result" and steps:
            steps[-1].result = event.data.get("result") or {}
            yield sse("tool", render_step(seq, steps, oob=True))
    if (rest := words.flush()) is not None:
        yield sse("token", rest)  # the words the throttle held back, before the answer replaces them
    db.session.rollback()  # a fresh snapshot: the run saved the turn through its own session
    yield sse("done", render_template("chat/_reply_finished.html", conversation=conversation,
                                      turn=db.session.get(Turn, turn_id), seq=seq))


def render_step(seq: int, steps: list[ToolStep], oob: bool = False) -> str:
    """The newest step; once its result is in, it replaces its running self by id."""
    return render_template("chat/_tool_step.html", step=steps[-1], oob=oob,
                           step_id=f"turn-{seq + 1}-step-{len(steps)}")
