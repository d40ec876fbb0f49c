"""Text from a provider is stored as valid UTF-8: a lone surrogate never leaves a turn pending."""
import time

from sqlalchemy import select

from webapp.runs.heartbeat import MAX_FAILED_TAKEOVERS, ensure_heartbeat
from webapp.runs.turn_runs import TurnRun
from webapp.extensions import db
from webapp.llm.base import ChatProvider, Reply, ToolCall
from webapp.llm.valid_text import valid_stream
from webapp.models import Turn

from .support import ask
from .test_reply_leases import FAST_LEASES, browser, killed_mid_tool_turn, orphan, stored
from .test_chat import start


class BrokenText(ChatProvider):
    """A provider whose words arrive with an emoji cut across two chunks and a lone surrogate."""
    name, model, offline = "broken text", "broken", True

    def stream(self, messages, tools):
        chunks = ["Your order \ud83d", "\ude00 is on its way \ud83d", " soon"]
        yield from chunks
        yield Reply("".join(chunks), provider_raw={"content": "".join(chunks)})


def test_a_lone_surrogate_from_the_provider_is_stored_not_left_pending(alex):
    answer, conversation, events = ask(alex, "Where is my order?", provider=BrokenText())
    turn = db.session.scalar(select(Turn).filter_by(conversation_id=conversation.id))
    assert turn.outcome == "answered"
    assert turn.answer == "Your order \U0001F600 is on its way \ufffd soon"
    tokens = "".join(e.data["text"] for e in events if e.kind == "token")
    assert tokens == turn.answer  # the streamed words are the stored ones
    turn.answer.encode("utf-8")


def test_a_pair_split_across_chunks_is_joined_and_tool_arguments_are_cleaned():
    reply = Reply("", [ToolCall("c\udc00", "lookup_order", {"note": "x\ud800"})])
    out = list(valid_stream(iter(["a\ud83d", "\ude00b", "\ud83d", reply])))
    assert out[:3] == ["a", "\U0001F600b", "\ufffd"]
    assert out[3].tool_calls[0].arguments == {"note": "x\ufffd"} and out[3].tool_calls[0].id == "c\ufffd"


def test_a_takeover_that_fails_twice_closes_the_turn_with_its_words(app, monkeypatch):
    app.config.update(FAST_LEASES)
    tries = []

    def crashing_write(run):
        tries.append(run.turn_id)
        raise RuntimeError("the takeover crashed")
    monkeypatch.setattr(TurnRun, "write", crashing_write)
    guest = browser(app)
    conversation_id, _ = start(guest, "Where is order 1042?")
    turn_id = orphan(app, conversation_id, killed_mid_tool_turn())
    ensure_heartbeat(app)  # this worker's: it takes the dead worker's turn over
    deadline = time.monotonic() + 20
    while stored(turn_id).outcome == "pending" and time.monotonic() < deadline:
        time.sleep(0.2)
    turn = stored(turn_id)
    assert turn.outcome == "interrupted" and turn.answer == "Order 1042 is …"
    tried = len(tries)
    assert tried == MAX_FAILED_TAKEOVERS
    time.sleep(2 * FAST_LEASES["NIMBUS_LEASE_SECONDS"])
    assert len(tries) == tried  # given up: not retried forever
