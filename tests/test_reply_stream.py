"""Replies over SSE: a browser that leaves, Stop (here or on another process), one run per turn."""
import threading

from webapp.agent.loop import FALLBACK_INTERRUPTED, run_turn
from webapp.extensions import db
from webapp.llm.messages import validate_turn
from webapp.locks import conversation_lock
from webapp.models import Turn
from webapp.chat.reply_stream import sse
from webapp.storage import create_conversation, start_turn
from webapp.runs.heartbeat import run_for
from webapp.models import StopRequest

from .support import sse_events, use_provider, wait_for_replies
from .fakes.paced_model import PacedModel
from .fakes.scripted_model import ScriptedModel
from .test_chat import start


def saved_turn(conversation_id, seq=0) -> Turn:
    db.session.rollback()
    return db.session.scalar(db.select(Turn).filter_by(conversation_id=conversation_id, seq=seq))


def read_until_first_token(response) -> bytes:
    received = b""
    chunks = iter(response.response)
    while b"event: token" not in received:
        received += next(chunks)
    return received


def test_client_leaving_mid_stream_still_saves_a_well_formed_turn(app, guest):
    gate = threading.Event()
    use_provider(app, PacedModel("Order 1042 is paid.", gate=gate,
                                 tool={"name": "lookup_order", "arguments": {"order_id": 1042}}))
    conversation_id, _ = start(guest, "Where is order 1042?")
    response = guest.get(f"/c/{conversation_id}/turns/0/stream", buffered=False)
    assert b"Looking up order #1042" in read_until_first_token(response)
    response.close()  # the browser went away mid-reply
    gate.set()
    wait_for_replies(app)
    turn = saved_turn(conversation_id)
    assert turn.outcome == "answered" and turn.answer == "Order 1042 is paid."
    assert validate_turn(turn.messages)
    assert [m["role"] for m in turn.messages] == ["user", "assistant", "tool", "assistant"]


def test_stop_saves_the_partial_answer_as_interrupted(app, guest):
    use_provider(app, PacedModel(" ".join(f"word{i}" for i in range(300)), delay=0.01))
    conversation_id, _ = start(guest, "Talk to me")
    response = guest.get(f"/c/{conversation_id}/turns/0/stream", buffered=False)
    read_until_first_token(response)
    stopped = guest.post(f"/c/{conversation_id}/turns/0/stop")
    assert stopped.status_code == 200 and ">Stopped<" in stopped.text
    assert "button--stop" not in stopped.text  # the composer is ready again
    rest = b"".join(response.response).decode()
    assert sse_events(rest)[-1][0] == "done"
    turn = saved_turn(conversation_id)
    assert turn.outcome == "interrupted" and validate_turn(turn.messages)
    assert turn.answer.startswith("word0 word1") and turn.answer.endswith(" …")
    assert "word299" not in turn.answer
    assert db.session.get(StopRequest, turn.id) is None


def test_stop_pressed_on_another_process_is_seen_by_the_run(app, guest):
    model = use_provider(app, PacedModel("Never said."))
    conversation_id, _ = start(guest, "Hello")
    db.session.add(StopRequest(turn_id=saved_turn(conversation_id).id))  # as another worker would
    db.session.commit()
    done = sse_events(guest.get(f"/c/{conversation_id}/turns/0/stream").text)[-1][1]
    assert ">Stopped<" in done and model.requests == []
    turn = saved_turn(conversation_id)
    assert turn.outcome == "interrupted" and turn.answer == FALLBACK_INTERRUPTED
    assert validate_turn(turn.messages)


def test_two_watchers_of_one_reply_share_one_run(alex):
    gate = threading.Event()
    model = PacedModel("One shared reply.", gate=gate)
    turn = start_turn(create_conversation(alex), "Hello")
    first, second = run_for(turn, model), run_for(turn, PacedModel("Another reply."))
    assert first is second
    gate.set()
    for run in (first, second):
        tokens = [e.data["text"] for e in run.follow() if e is not None and e.kind == "token"]
        assert "".join(tokens) == "One shared reply. "
    assert len(model.requests) == 1


def test_reload_mid_reply_streams_it_again_from_the_start(app, guest):
    gate = threading.Event()
    use_provider(app, PacedModel("Still here.", gate=gate))
    conversation_id, _ = start(guest, "Hello")
    watcher = guest.get(f"/c/{conversation_id}/turns/0/stream", buffered=False)
    read_until_first_token(watcher)
    page = guest.get(f"/c/{conversation_id}").text
    assert f'sse-connect="/c/{conversation_id}/turns/0/stream"' in page
    assert "button--send\" disabled" in page
    gate.set()
    watcher.close()
    wait_for_replies(app)


def test_sse_event_has_one_data_line_per_payload_line():
    assert sse("token", "a\r\nb\n\nc") == "event: token\ndata: a\ndata: b\ndata: \ndata: c\n\n"


def test_a_reply_another_process_is_writing_is_not_written_twice(app, guest):
    model = use_provider(app, PacedModel("Second writer."))
    conversation_id, _ = start(guest, "Hello")
    turn = saved_turn(conversation_id)
    with conversation_lock(conversation_id):  # another worker holds the conversation and answers
        watcher = guest.get(f"/c/{conversation_id}/turns/0/stream", buffered=False)
        list(run_turn(turn, ScriptedModel("First writer.")))
    events = sse_events(b"".join(watcher.response).decode())
    assert [name for name, _ in events] == ["done"] and "First writer." in events[0][1]
    assert model.requests == [] and saved_turn(conversation_id).answer == "First writer."
