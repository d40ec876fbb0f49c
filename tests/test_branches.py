"""Alternatives and forks: a regenerated answer and an edited question keep what they replace,
switching swaps branches whole, and the request planner sends exactly the active path."""
import pytest

from webapp import branches
from webapp.context.request import plan_request
from webapp.context.summary.models import ConversationSummary
from webapp.extensions import db
from webapp.llm.offline import OfflineModel
from webapp.agent.loop import run_turn
from webapp.models import Turn, TurnAlternative
from webapp.storage import all_turns, start_turn

from .support import ask
from .viewer_support import REFUND_QUESTIONS, refund_conversation, summarized_conversation


def answer(turn):
    list(run_turn(turn, OfflineModel()))
    return turn


def path(conversation):
    return [(t.seq, t.question) for t in all_turns(conversation.id)]


def user_texts(plan):
    return [m["content"] for m in plan.messages if m["role"] == "user"]


def assert_whole_turns(messages):
    """Every tool call has its result, and every result its call."""
    calls = {c["id"] for m in messages for c in (m.get("tool_calls") or [])}
    results = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    assert calls == results


def test_regenerate_keeps_the_old_answer_as_version_one(app, alex):
    conversation = refund_conversation(alex)
    old = conversation.turns[-1].answer
    answer(branches.fork(conversation, 2, REFUND_QUESTIONS[2]))
    assert path(conversation) == list(enumerate(REFUND_QUESTIONS))
    shown = branches.versions(conversation.id)[2]
    assert (shown.active, shown.total, shown.kind) == (2, 2, "answer")
    kept = db.session.scalar(db.select(TurnAlternative))
    assert kept.branch["turns"][0]["answer"] == old and kept.position == 1


def test_after_regenerate_the_plan_sends_the_active_path_only(app, alex):
    conversation = refund_conversation(alex)
    answer(branches.fork(conversation, 2, REFUND_QUESTIONS[2]))
    plan = plan_request(conversation, app.config)
    assert user_texts(plan) == list(REFUND_QUESTIONS)  # one answer per turn, not two
    assert_whole_turns(plan.messages)


def test_edit_forks_and_the_old_branch_comes_back_whole(app, alex):
    conversation = refund_conversation(alex)
    before = [(t.id, t.question, t.answer, t.messages) for t in all_turns(conversation.id)]
    answer(branches.fork(conversation, 1, "Where is order #1041?"))
    assert path(conversation) == [(0, REFUND_QUESTIONS[0]), (1, "Where is order #1041?")]
    assert user_texts(plan_request(conversation, app.config)) == [REFUND_QUESTIONS[0],
                                                                   "Where is order #1041?"]
    assert conversation.turn_count == 2
    shown = branches.versions(conversation.id)[1]
    assert (shown.active, shown.total, shown.kind) == (2, 2, "question")

    branches.switch(conversation, 1, 1)
    assert [(t.id, t.question, t.answer, t.messages) for t in all_turns(conversation.id)] == before
    assert conversation.turn_count == 3
    plan = plan_request(conversation, app.config)
    assert user_texts(plan) == list(REFUND_QUESTIONS)
    assert_whole_turns(plan.messages)
    assert branches.versions(conversation.id)[1].active == 1


def test_alternatives_of_later_turns_travel_with_their_branch(app, alex):
    conversation = refund_conversation(alex)
    answer(branches.fork(conversation, 2, REFUND_QUESTIONS[2]))  # turn 2 has 2 answers
    answer(branches.fork(conversation, 1, "Where is order #1041?"))
    assert set(branches.versions(conversation.id)) == {1}  # turn 2's answers left with turn 2
    branches.switch(conversation, 1, 1)
    assert set(branches.versions(conversation.id)) == {1, 2}
    assert branches.versions(conversation.id)[2].total == 2


def test_pins_belong_to_their_turn_on_its_branch(app, alex):
    conversation = refund_conversation(alex)
    turn = all_turns(conversation.id)[2]
    turn.mark, conversation.has_marks = "excluded", True
    db.session.commit()
    answer(branches.fork(conversation, 2, REFUND_QUESTIONS[2]))
    assert all_turns(conversation.id)[2].mark is None
    assert REFUND_QUESTIONS[2] in user_texts(plan_request(conversation, app.config))
    branches.switch(conversation, 2, 1)
    assert all_turns(conversation.id)[2].mark == "excluded"
    assert REFUND_QUESTIONS[2] not in user_texts(plan_request(conversation, app.config))


def test_the_summary_never_mixes_branches(app, alex):
    conversation = summarized_conversation(alex)
    summary = db.session.scalar(db.select(ConversationSummary))
    covered, text = summary.through_seq, summary.text
    assert covered >= 1
    answer(branches.fork(conversation, covered, "Something else entirely"))
    # The summary covered a turn that left the path: it left with it; the next fold rewrites one.
    kept = db.session.scalar(db.select(ConversationSummary))
    assert kept is None or kept.through_seq < covered
    plan = plan_request(conversation, app.config)
    assert text not in str(plan.messages)
    branches.switch(conversation, covered, 1)
    back = db.session.scalar(db.select(ConversationSummary).where(
        ConversationSummary.through_seq == covered))
    assert back is not None and back.text == text


def test_a_switch_is_refused_while_a_reply_is_written(app, alex):
    conversation = refund_conversation(alex)
    answer(branches.fork(conversation, 2, REFUND_QUESTIONS[2]))
    start_turn(conversation, "And another thing?")
    with pytest.raises(branches.BranchRefused, match="still answering"):
        branches.switch(conversation, 2, 1)
    with pytest.raises(branches.BranchRefused):
        branches.fork(conversation, 0, "Hello")
    assert db.session.query(Turn).filter_by(conversation_id=conversation.id).count() == 4


def test_an_unknown_version_is_a_lookup_error(app, alex):
    _, conversation, _ = ask(alex, "Hello")
    with pytest.raises(LookupError):
        branches.switch(conversation, 0, 2)


def test_the_tree_survives_export_and_import_and_switches_back(app, alex, runner, tmp_path):
    import json
    from webapp.models import Conversation
    from webapp.transfer import export_conversation
    conversation = refund_conversation(alex)
    answer(branches.fork(conversation, 2, REFUND_QUESTIONS[2]))  # a regenerated answer
    answer(branches.fork(conversation, 1, "Where is order #1041?"))  # an edit, turn 2 inside
    exported = export_conversation(conversation)
    assert exported["version"] == 5 and [a["seq"] for a in exported["alternatives"]] == [1]
    assert exported["alternatives"][0]["alternatives"][0]["seq"] == 2
    file = tmp_path / "tree.json"
    file.write_text(json.dumps(exported))
    result = runner.invoke(args=["import", str(file)])
    assert result.exit_code == 0, result.output
    copy = db.session.get(Conversation, result.output.split("conversation: ")[1].strip())
    again = export_conversation(copy)
    for one in (exported, again):
        one.pop("id")
    assert again == exported
    branches.switch(copy, 1, 1)  # the imported branch comes back whole
    assert path(copy) == list(enumerate(REFUND_QUESTIONS))
    assert branches.versions(copy.id)[2].total == 2


@pytest.mark.parametrize("alternative, reason", [
    ({"seq": 5, "position": 1, "kind": "answer"}, "has no such turn"),
    ({"seq": 0, "position": 3, "kind": "answer"}, "more than one place free"),
])
def test_a_misplaced_alternative_refuses_the_file(runner, tmp_path, alternative, reason):
    import json
    turn = {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"format": "nimbus.conversation", "version": 5, "turns": [turn],
                                "alternatives": [{**alternative, "turns": [turn]}]}))
    result = runner.invoke(args=["import", str(path)])
    assert result.exit_code != 0 and reason in result.output


def test_markdown_exports_the_path_shown_with_the_other_versions_folded(app, alex):
    from webapp.transfer import export_markdown
    conversation = refund_conversation(alex)
    old = all_turns(conversation.id)[2].answer
    answer(branches.fork(conversation, 2, REFUND_QUESTIONS[2]))
    text = export_markdown(conversation)
    assert text.count(f"### Customer\n\n{REFUND_QUESTIONS[2]}") == 1
    folded = text.split("1 other version of this turn (not sent)</summary>")[1]
    assert "**Alternative 1 of 2**" in folded and old.splitlines()[0] in folded
