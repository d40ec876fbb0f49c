"""Context assembly: whole turns only, budget respected, newest-first reading, no stored system prompt."""
from datetime import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from webapp.llm.messages import assistant_message, user_message, validate_turn
from webapp.llm.tokens import estimate_messages
from webapp.context.assemble import COMPACTED, DROPPED, FULL, Policy, assemble
from webapp.context.strategies import plan_compact
from webapp.storage import create_conversation, finish_turn, start_turn

from .fakes.turns import fake_turn


def make_turn(seq, question_len, tool_calls, answer_len):
    return fake_turn(seq, "q" * question_len, tool_calls, answer_len, datetime(2026, 11, 30))


turn_shapes = st.lists(st.tuples(st.integers(1, 400), st.integers(0, 3), st.integers(1, 600)),
                       min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(turn_shapes, st.integers(50, 3000), st.integers(0, 5))
def test_compact_keeps_whole_turns_within_budget(shapes, budget, recent):
    turns = [make_turn(i, *shape) for i, shape in enumerate(shapes)]
    plan = plan_compact(reversed(turns), Policy(budget=budget, recent_turns=recent))
    kept = plan.kept()
    sent = [m for f in kept for m in f.messages]
    assert kept and kept[-1].seq == turns[-1].seq  # the newest turn is always kept
    assert sent[0]["role"] == "user"
    assert all(m["role"] != "system" for m in sent)
    for fate in kept:
        validate_turn(fate.messages)  # no call without its result, nor the reverse
    seqs = [f.seq for f in kept]
    assert seqs == sorted(seqs) and seqs == list(range(seqs[0], seqs[-1] + 1))
    total = sum(f.tokens for f in kept)
    assert total <= budget or len(kept) == 1
    for f in kept:
        assert f.fate == (FULL if turns[-1].seq - f.seq < recent else COMPACTED)


def test_compact_reads_only_until_the_budget_is_full():
    turns = [make_turn(i, 400, 1, 400) for i in range(1000)]
    read = []

    def newest_first():
        for turn in reversed(turns):
            read.append(turn.seq)
            yield turn

    plan = plan_compact(newest_first(), Policy(budget=2000, recent_turns=2))
    assert len(read) < 20
    assert plan.older == (DROPPED, "over the 2,000-token budget")


def save(conversation, question, answer_text):
    turn = start_turn(conversation, question)
    messages = [user_message(question), assistant_message(answer_text)]
    finish_turn(turn, messages, "answered", [], {}, 0, 0)


def test_assembled_request_starts_with_the_system_prompt_then_history(app, alex):
    conversation = create_conversation(alex)
    for i in range(5):
        save(conversation, f"question {i}", f"answer {i}")
    plan = assemble(conversation, app.config)
    assert plan.messages[0]["role"] == "system" and "Nimbus" in plan.messages[0]["content"]
    assert plan.messages[1] == user_message("question 0")
    assert [s.name for s in plan.sections] == ["system", "history"]
    assert plan.total_tokens == estimate_messages(plan.messages)


def test_a_small_budget_drops_the_oldest_turns_first(app, alex):
    conversation = create_conversation(alex)
    for i in range(10):
        save(conversation, f"question {i} " + "x" * 200, f"answer {i}")
    plan = assemble(conversation, app.config, Policy(budget=300, recent_turns=2))
    kept = [f.seq for f in plan.history.kept()]
    assert kept == sorted(kept) and kept[-1] == 9 and 0 not in kept
    assert plan.fate_of(0) == (DROPPED, "over the 300-token budget; not yet in the summary")
