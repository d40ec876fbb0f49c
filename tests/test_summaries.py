"""The rolling summary: folded in the background when turns fall off, cached, its own section."""
import logging

import pytest

from webapp.extensions import db
from webapp.jobs import huey
from webapp.llm.base import ProviderError
from webapp.llm.messages import assistant_message, user_message
from webapp.llm.offline import OfflineModel
from webapp.locks import named_lock
from webapp.context.summary import jobs as summary_jobs
from webapp.context.assemble import DROPPED, FOLDED, SUMMARIZED, Policy, assemble
from webapp.context.summary.section import (
    ConversationSummary,
    cached_summary,
    needs_refresh,
    refresh_summary,
)
from webapp.storage import create_conversation, delete_conversation_for_good, finish_turn, start_turn

from .support import ask, use_provider
from .fakes.scripted_model import ScriptedModel

FILLER = ["Where is order 1042?", "How long does shipping take?", "Thanks, that helps.",
          "Do gift cards expire?"]


class CountingModel(OfflineModel):
    def __init__(self):
        self.calls = 0

    def stream(self, messages, tools):
        self.calls += 1
        return super().stream(messages, tools)


def save(conversation, question, answer="Noted."):
    turn = start_turn(conversation, question)
    finish_turn(turn, [user_message(question), assistant_message(answer)], "answered", [], {}, 0, 0)


def long_conversation(user, turns=12, budget=200, **settings):
    conversation = create_conversation(user)
    conversation.settings = {"budget": budget, **settings}
    db.session.commit()
    save(conversation, "My name is Dara. I prefer email.", "Nice to meet you, Dara!")
    for i in range(turns - 1):
        save(conversation, "Just some small talk " + "x" * 80, "Small talk back.")
    return conversation


@pytest.mark.parametrize("strategy, settings, expected", [
    ("compact", {"budget": 1200}, "Your name is Dara."),  # small enough that turn 1 falls off
    ("window", {"recent_turns": 2}, "I don't know that"),
])
def test_a_fact_from_turn_1_is_recalled_at_turn_40_only_through_the_summary(
        app, alex, strategy, settings, expected):
    # Only the conversation's own context may recall it here, not long-term memory.
    app.config.update(NIMBUS_MEMORY_TOOLS=False, NIMBUS_MEMORY_DISTIL_ON_COMPRESS=False)
    conversation = create_conversation(alex)
    conversation.strategy, conversation.settings = strategy, settings
    db.session.commit()
    ask(alex, "My name is Dara.", conversation)
    for i in range(38):
        ask(alex, FILLER[i % len(FILLER)], conversation)
    if strategy == "compact":
        assert assemble(conversation, app.config).fate_of(0) == (SUMMARIZED, FOLDED)
    answer, _, _ = ask(alex, "What is my name?", conversation)
    assert answer.startswith(expected)


def test_the_summary_is_folded_only_when_new_turns_fall_off(app, alex):
    conversation = long_conversation(alex)
    model = CountingModel()
    summary, caught_up = refresh_summary(conversation, model)
    assert caught_up and model.calls == 1 and summary.through_seq >= 0
    assert "User: My name is Dara." in summary.text
    refresh_summary(conversation, model)
    assert model.calls == 1  # nothing new fell off: the cached summary stands
    for i in range(4):
        save(conversation, "More small talk " + "y" * 80)
    through = summary.through_seq
    refresh_summary(conversation, model)
    assert model.calls == 2 and summary.through_seq > through


def test_compact_folds_ahead_so_the_next_turns_need_no_fold(app, alex):
    conversation = long_conversation(alex, budget=400)
    assert needs_refresh(conversation, app.config)
    refresh_summary(conversation, OfflineModel())
    for i in range(2):
        save(conversation, "One more bit of small talk " + "z" * 80)
        assert not needs_refresh(conversation, app.config)


def test_a_fold_is_due_once_fold_after_turns_turns_wait(app, alex):
    conversation = long_conversation(alex)
    waiting = summary_jobs.turns_waiting(conversation, app.config)
    assert waiting > 1 and summary_jobs.fold_due(conversation, app.config)  # default: at once
    conversation.settings = {**conversation.settings, "fold_after_turns": waiting + 1}
    assert not summary_jobs.fold_due(conversation, app.config)
    conversation.settings = {**conversation.settings, "fold_after_turns": waiting}
    assert summary_jobs.fold_due(conversation, app.config)


def test_no_fold_is_queued_while_fewer_turns_wait_than_fold_after_turns(app, alex):
    conversation = long_conversation(alex, fold_after_turns=100)
    huey.flush()
    ask(alex, "One more question?", conversation)
    assert cached_summary(conversation) is None
    conversation.settings = {**conversation.settings, "fold_after_turns": 1}
    ask(alex, "And another one?", conversation)
    assert cached_summary(conversation).through_seq >= 0


def test_the_summary_is_its_own_labelled_section_within_the_budget(app, alex):
    conversation = long_conversation(alex)
    refresh_summary(conversation, OfflineModel())
    plan = assemble(conversation, app.config)
    summary = plan.section("summary")
    through = summary.detail["through_seq"]
    assert through >= plan.history.kept()[0].seq - 1  # every turn left out is in the summary
    assert [s.name for s in plan.sections] == ["system", "summary", "history"]
    assert summary.messages[0]["role"] == "system"
    assert summary.messages[0]["content"].startswith(
        f"Summary of the earlier conversation (turns 1–{through + 1}):\nUser: My name is Dara.")
    assert summary.tokens + plan.section("history").tokens <= 200
    assert plan.total_tokens == sum(s.tokens for s in plan.sections)
    assert plan.fate_of(0) == (SUMMARIZED, FOLDED)


@pytest.mark.parametrize("strategy", ["window", "budget", "importance", "time"])
def test_strategies_without_a_summary_never_send_it(app, alex, strategy):
    conversation = long_conversation(alex)
    refresh_summary(conversation, OfflineModel())
    plan = assemble(conversation, app.config, Policy.for_conversation(
        conversation, app.config, strategy=strategy, recent_turns=2))
    assert plan.section("summary") is None
    assert SUMMARIZED not in {plan.fate_of(seq)[0] for seq in range(conversation.turn_count)}


def test_turns_not_yet_folded_say_so(app, alex):
    conversation = long_conversation(alex)
    fate, reason = assemble(conversation, app.config).fate_of(0)
    assert fate == DROPPED and reason.endswith("; not yet in the summary")


def test_a_failing_summarizer_never_breaks_the_chat(app, alex, caplog):
    huey.flush()
    use_provider(app, ScriptedModel(*[ProviderError("down")] * 50))
    conversation = create_conversation(alex)
    conversation.settings = {"budget": 150}
    db.session.commit()
    for question in ["My name is Dara.", *FILLER, *FILLER]:
        answer, _, _ = ask(alex, question, conversation)
        assert answer
    assert cached_summary(conversation) is None  # rolled back, to be retried
    assert "Unhandled exception in task" in caplog.text
    retries = [t.retries for t in huey.scheduled() if t.name == "fold_summary"]
    assert retries and set(retries) == {1}  # queued again, with one retry left of two


def test_a_busy_lock_skips_the_fold(app, alex):
    conversation = long_conversation(alex)
    model = CountingModel()
    use_provider(app, model)
    with named_lock(f"summary:{conversation.id}"):
        summary_jobs.fold_summary(conversation.id)
    assert model.calls == 0
    summary_jobs.fold_summary(conversation.id)
    assert model.calls == 1


def test_no_model_call_after_a_turn_while_nothing_fell_off(app, alex):
    model = CountingModel()
    use_provider(app, model)
    _, conversation, _ = ask(alex, "Hello")
    ask(alex, "My name is Dara.", conversation)
    assert model.calls == 0 and cached_summary(conversation) is None


def test_deleting_a_conversation_deletes_its_summaries(app, alex):
    conversation = long_conversation(alex)
    refresh_summary(conversation, OfflineModel())
    refresh_summary(conversation, OfflineModel(), style="bullets")
    delete_conversation_for_good(conversation)
    db.session.expunge_all()
    assert db.session.query(ConversationSummary).count() == 0


def test_summaries_are_logged_not_raised_when_the_queue_fails(app, alex, monkeypatch, caplog):
    def broken(*args):
        raise RuntimeError("queue down")
    monkeypatch.setattr(summary_jobs, "fold_summary", broken)
    conversation = create_conversation(alex)
    conversation.settings = {"budget": 150}
    db.session.commit()
    with caplog.at_level(logging.ERROR):
        for question in FILLER * 3:
            assert ask(alex, question, conversation)[0]
    assert "could not run or enqueue" in caplog.text


def test_a_fold_that_fails_the_check_keeps_the_old_summary_and_says_so_in_the_viewer(
        app, guest):
    from .support import guest_user
    conversation = long_conversation(guest_user(guest))
    summary, _ = refresh_summary(conversation, OfflineModel())
    before, through = summary.text, summary.through_seq
    for i in range(4):
        save(conversation, "More small talk " + "y" * 80)
    summary, _ = refresh_summary(conversation, ScriptedModel("Summary:\n[Turn 7]"))
    assert (summary.text, summary.through_seq) == (before, through)
    assert summary.failure.startswith("the check refused the summary of turns")
    assert "marker" in summary.failure and summary.failed_at and not summary.retried_soon
    for page in (guest.get(f"/c/{conversation.id}/viewer").text,
                 guest.get(f"/c/{conversation.id}/summary").text):
        notice = page[page.index('class="summary-failed"'):][:600]
        assert "[Turn 7]" in notice and "retried after the next reply" in " ".join(notice.split())
    summary, _ = refresh_summary(conversation, OfflineModel())  # a good fold clears the note
    assert summary.through_seq > through and summary.failed_at is None and summary.failure == ""
