"""The rolling summary follows the model's window, not only the budget: at a 2,048-token window on
the default budget, turns the window leaves out are folded (SUMMARIZED, not DROPPED), no request
goes over the window, and folds stay one per turn at most; a summary the window has too little
room for is shortened, or left out, and the viewer says which."""
import pytest

from webapp.context.request import fitted_policy, plan_request
from webapp.context.summary import jobs as summary_jobs
from webapp.context.summary.models import ConversationSummary
from webapp.context.summary.room import MIN_ROOM, summary_room
from webapp.extensions import db
from webapp.models import Turn
from webapp.storage import create_conversation

from .fakes.compat_servers import CompatServer, count_tokens
from .support import ask, guest_user
from .test_provider_quirks import fresh_endpoints, point_at  # noqa: F401 (a fixture)
from .test_summaries import save

ITEMS = ["rain jacket", "kettle", "desk lamp", "backpack", "headphones", "teapot", "scarf"]
FACTS = "\n".join(f"User: my order #{1040 + n} was the {ITEMS[n % 7]}, sent to Lisbon on day {n}."
                  for n in range(40))


def viewer(guest, conversation) -> dict:
    return guest.get(f"/c/{conversation.id}/viewer.json").json


@pytest.mark.parametrize("kind", ["vllm", "llama-server"])
def test_at_a_2048_window_on_defaults_left_out_turns_are_folded_within_the_window(
        app, guest, monkeypatch, kind):
    folds = []
    refresh = summary_jobs.refresh_summary
    monkeypatch.setattr(summary_jobs, "refresh_summary",
                        lambda *args, **kwargs: folds.append(1) or refresh(*args, **kwargs))
    with CompatServer(kind, window=2048) as server:
        provider = point_at(app, server)
        _, conversation, _ = ask(guest_user(guest), "Hi, I have questions about my orders.",
                                 provider=provider)
        for n in range(1, 34):
            ask(conversation.user, f"Turn {n}: the {ITEMS[n % 7]} from order #{1040 + n % 5} came "
                f"scratched; I am Dara from Lisbon. What should I do?", conversation,
                provider=provider)
        fates = [t["fate"] for t in viewer(guest, conversation)["turns"]]
    assert server.state.refused == []
    output = 1 if kind == "vllm" else 0  # what each server counts against its window
    assert all(count_tokens(r) + output * r["max_tokens"] <= 2048 for r in server.state.requests)
    summary = db.session.query(ConversationSummary).filter_by(
        conversation_id=conversation.id).one()
    assert summary.through_seq >= 20 and "Dara" in summary.text and not summary.failure
    assert "DROPPED" not in fates and fates.count("SUMMARIZED") >= 20, fates
    summarizer_calls = [r for r in server.state.requests
                        if r["messages"][0]["content"].startswith("You keep the rolling summary")]
    assert len(folds) <= 34 and len(summarizer_calls) <= 34


def summarized_conversation(guest, turns=30):
    """Short turns (so the newest fits any window here), more than a small window holds, and a
    long summary of all but the last three."""
    conversation = create_conversation(guest_user(guest))
    for n in range(turns):
        save(conversation, f"Note {n}: the {ITEMS[n % 7]} came scratched.", f"Noted {n}.")
    db.session.add(ConversationSummary(conversation_id=conversation.id, style="concise",
                                       text=FACTS, through_seq=turns - 4, topics=["orders"]))
    conversation.has_summary = True
    db.session.commit()
    return conversation


def test_a_summary_longer_than_its_room_is_shortened_and_says_so(app, guest):
    conversation = summarized_conversation(guest)
    app.config["NIMBUS_CONTEXT_WINDOW"] = 2048
    plan = plan_request(conversation, app.config)
    summary = plan.section("summary")
    assert "User: my order #1040" in summary.messages[0]["content"]
    assert summary.tokens <= summary_room(plan.policy) < 400
    assert plan.total_tokens + plan.shape.fixed(plan.ratio) <= 2048
    shown = next(s for s in viewer(guest, conversation)["request"]["sections"]
                 if s["name"] == "summary")
    assert "to fit the model's 2,048-token window" in shown["detail"]["shortened"]
    assert "to fit the model&#39;s 2,048-token window" in guest.get(
        f"/c/{conversation.id}/viewer").text


def test_where_the_window_leaves_no_room_for_a_summary_it_is_left_out_and_its_turns_say_why(
        app, guest):
    conversation = summarized_conversation(guest)
    for window in range(2048, 1024, -16):  # the largest window with no room for a summary
        app.config["NIMBUS_CONTEXT_WINDOW"] = window
        if summary_room(fitted_policy(conversation, app.config)) < MIN_ROOM:
            break
    plan = plan_request(conversation, app.config)
    assert plan.section("summary") is None
    assert plan.total_tokens + plan.shape.fixed(plan.ratio) <= window
    said = [t["reason"] for t in viewer(guest, conversation)["turns"] if t["fate"] == "DROPPED"]
    assert said and all(f"which this request leaves out: the model's {window:,}-token window"
                        in reason for reason in said), said


def test_a_fold_that_moves_nothing_on_does_not_queue_itself_again(app, alex, monkeypatch):
    _, conversation, _ = ask(alex, "Hello")
    runs = []
    monkeypatch.setattr(summary_jobs, "refresh_summary",
                        lambda *args, **kwargs: runs.append(1) or (None, False))
    summary_jobs.fold_summary(conversation.id)  # inline queue: a second round would run at once
    assert runs == [1]


@pytest.mark.parametrize("room", [True, False])
def test_a_fold_is_queued_only_where_the_window_has_room_for_a_summary(app, guest, monkeypatch,
                                                                       room):
    """Turns wait to be folded either way; where no request could carry a summary, a fold
    would read them and write nothing, so none is queued."""
    conversation = summarized_conversation(guest)
    summary = db.session.query(ConversationSummary).filter_by(
        conversation_id=conversation.id).one()
    summary.through_seq = 0
    db.session.commit()
    for window in range(2048, 1024, -16):  # 2,048 has room; the largest window without it
        app.config["NIMBUS_CONTEXT_WINDOW"] = window
        if room or summary_room(fitted_policy(conversation, app.config)) < MIN_ROOM:
            break
    assert (summary_room(fitted_policy(conversation, app.config)) >= MIN_ROOM) is room
    assert summary_jobs.turns_waiting(conversation, app.config) > 0
    queued = []
    monkeypatch.setattr(summary_jobs, "enqueue", lambda job, *args: queued.append(args))
    newest = Turn.query.filter_by(conversation_id=conversation.id).order_by(Turn.seq.desc())
    summary_jobs.queue_summary(newest.first(), None)
    assert queued == ([(conversation.id,)] if room else [])
