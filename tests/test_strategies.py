"""Every context strategy keeps whole turns, in order, within budget, reading only what it needs."""
from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webapp.llm.messages import validate_turn
from webapp.context.assemble import DROPPED, FULL, STRATEGIES, Allotment, Policy, plan_history

from .fakes.turns import fake_turn

NOW = datetime(2026, 11, 30, 12, 0)
QUESTIONS = ["My name is Dara.", "Where is order 1042?", "Remember that we bill monthly.",
             "ok", "My email is dara@example.com", "I prefer email.", "thanks a lot"]


def make_turn(seq, kind, padding, tool_calls, answer_len, hours_ago):
    return fake_turn(seq, QUESTIONS[kind] + " " + "q" * padding, tool_calls, answer_len,
                     NOW - timedelta(hours=hours_ago))


def conversation(shapes):
    """Turns oldest first; ages only grow going back, as in a real conversation."""
    turns, age = [], 0
    for seq, (kind, padding, calls, answer_len, gap) in reversed(list(enumerate(shapes))):
        age += gap
        turns.append(make_turn(seq, kind, padding, calls, answer_len, age))
    return turns[::-1]


turn_shapes = st.lists(st.tuples(st.integers(0, len(QUESTIONS) - 1), st.integers(0, 300),
                                 st.integers(0, 3), st.integers(1, 500), st.integers(0, 60)),
                       min_size=1, max_size=40)
policies = st.builds(Allotment, strategy=st.sampled_from(sorted(STRATEGIES)),
                     budget=st.integers(50, 3000), recent_turns=st.integers(0, 5),
                     max_age_days=st.floats(0.1, 10), candidate_pool=st.integers(1, 60),
                     reserved=st.integers(0, 800), now=st.just(NOW))


@settings(max_examples=400, deadline=None)
@given(turn_shapes, policies, st.sampled_from([1.0, 0.6, 1.7]))
def test_every_strategy_keeps_whole_turns_in_order_within_budget(shapes, policy, ratio):
    turns = conversation(shapes)
    plan = plan_history(reversed(turns), policy, ratio)
    kept = plan.kept()
    assert kept and kept[-1].seq == turns[-1].seq  # the newest turn is always kept
    by_seq = {t.seq: t for t in turns}
    for fate in kept:  # whole turns: all of it, or its question and answer
        assert fate.messages in (by_seq[fate.seq].messages, by_seq[fate.seq].compact)
        validate_turn(fate.messages)  # no tool call without its result, nor the reverse
    seqs = [f.seq for f in plan.fates]
    assert seqs == sorted(set(seqs))  # order preserved, each turn once
    assert sum(f.tokens for f in kept) <= policy.history_budget or len(kept) == 1
    assert all(f.reason for f in plan.fates)
    assert plan_history(reversed(turns), policy, ratio) == plan  # deterministic


def newest_first_counting(turns, read):
    for turn in reversed(turns):
        read.append(turn.seq)
        yield turn


# Of 1,000 turns, a strategy reads about a budget's worth, N + 1, or its candidate pool.
READ_LIMITS = {"compact": 11, "budget": 9, "time": 11, "window": 3, "hybrid": 3, "importance": 50}


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_every_strategy_stops_reading_early(name):
    turns = [make_turn(i, 3, 100, 1, 300, (1000 - i) * 0.1) for i in range(1000)]
    read = []
    plan_history(newest_first_counting(turns, read),
                 Policy(strategy=name, budget=1200, recent_turns=2, candidate_pool=50, now=NOW))
    assert len(read) <= READ_LIMITS[name]


@pytest.mark.parametrize("name, policy, reason", [
    ("window", Policy(recent_turns=2), "outside the last 2 turns"),
    ("hybrid", Policy(recent_turns=3), "outside the last 3 turns"),
    ("budget", Policy(budget=300), "over the 300-token budget"),
    ("compact", Allotment(budget=300, reserved=100), "over the 200-token budget (300 less 100 for "
                                                  "the summary)"),
    ("time", Policy(max_age_days=7), "older than 7 days"),
])
def test_dropped_turns_say_why(name, policy, reason):
    turns = [make_turn(i, 3, 100, 0, 200, (10 - i) * 24) for i in range(10)]
    policy.strategy, policy.now = name, NOW
    plan = plan_history(reversed(turns), policy)
    assert plan.older == (DROPPED, reason)


def test_importance_keeps_names_and_tool_use_over_small_talk():
    kinds = [0, 3, 1, 6, 3, 6, 3, 6]  # name, small talk, order lookup, small talk…
    turns = [make_turn(i, kind, 0, 1 if kind == 1 else 0, 60, 0) for i, kind in enumerate(kinds)]
    fates = {f.seq: f for f in plan_history(reversed(turns), Policy(
        strategy="importance", budget=90, recent_turns=1, now=NOW)).fates}
    assert fates[7].fate == FULL
    assert fates[0].reason.startswith("importance score 3 (name)")
    assert fates[2].reason.startswith("importance score 3 (tool use, question)")
    assert fates[1].fate == DROPPED and fates[1].reason == "low importance (score 0)"


def test_an_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="unknown strategy 'nope'"):
        plan_history(iter([]), Policy(strategy="nope"))


def test_a_policy_holds_settings_only_and_planning_adds_its_shares_apart():
    from dataclasses import fields
    assert {f.name for f in fields(Policy)} == {
        "strategy", "budget", "recent_turns", "max_age_days", "candidate_pool",
        "summarize_through", "now"}
    planned = Allotment.of(Policy(budget=1000), reserved=300, pinned=100)
    assert planned.history_budget == 600 and planned.settings() == Policy(budget=1000)
