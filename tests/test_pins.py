"""Pinned and left-out turns: every strategy sends pins (within the budget) and never a left-out
turn, whole turns only, and says so per turn."""
from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webapp.llm.messages import validate_turn
from webapp.context.assemble import (
    DROPPED,
    EXCLUDED,
    FULL,
    KEPT,
    PINNED,
    STRATEGIES,
    Policy,
    plan_history,
)
from webapp.context.pins import PINS_OVER_BUDGET, Marks

from .fakes.turns import fake_turn

NOW = datetime(2026, 11, 30, 12, 0)


def turns_of(count, tool_calls=0, answer_len=200):
    return [fake_turn(i, f"question {i}", tool_calls if i % 2 else 0, answer_len,
                      NOW - timedelta(hours=count - i)) for i in range(count)]


def marks(turns, pinned=(), excluded=()):
    by_seq = {t.seq: t for t in turns}
    return Marks([by_seq[s] for s in sorted(pinned, reverse=True)],
                 {s: "left out by Dara on 2026-11-30 11:00 UTC" for s in excluded},
                 {s: "pinned by Dara on 2026-11-30 11:00 UTC" for s in pinned})


def plan(turns, policy, pinned=(), excluded=(), ratio=1.0):
    return plan_history(reversed(turns), policy, ratio, marks(turns, pinned, excluded))


def sent_seqs(history):
    return [f.seq for f in history.kept()]


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 30), st.sampled_from(sorted(STRATEGIES)), st.integers(80, 3000),
       st.integers(0, 4), st.integers(0, 3), st.data())
def test_every_strategy_sends_pins_and_never_a_left_out_turn(count, name, budget, recent, calls,
                                                           data):
    turns = turns_of(count, calls)
    seqs = list(range(count))
    pinned = data.draw(st.sets(st.sampled_from(seqs), max_size=4))
    excluded = data.draw(st.sets(st.sampled_from(seqs), max_size=4)) - pinned
    policy = Policy(strategy=name, budget=budget, recent_turns=recent, now=NOW)
    history = plan(turns, policy, pinned, excluded)
    sent = sent_seqs(history)
    assert not set(sent) & excluded  # a left-out turn is never sent
    assert sent == sorted(set(sent))  # in order, each turn once
    by_seq = {t.seq: t for t in turns}
    for fate in history.kept():  # whole turns only: no orphan tool call
        assert fate.messages in (by_seq[fate.seq].messages, by_seq[fate.seq].compact)
        validate_turn(fate.messages)
    pins = [m for m in history.marks.values() if m.seq in pinned]
    pin_tokens = sum(m.tokens for m in pins if m.fate == PINNED)
    assert pin_tokens <= budget  # pins are counted in the budget
    if not history.pins_over_budget:
        assert all(m.fate == PINNED for m in pins)  # a pin is always sent while pins fit
    for seq in excluded:
        assert history.marks[seq].fate == EXCLUDED
        assert history.marks[seq].reason.startswith("left out by Dara")
    for f in history.fates:  # the strategy never planned a marked turn
        assert f.seq not in pinned | excluded


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_an_old_pinned_turn_is_sent_by_every_strategy(name):
    turns = turns_of(40)
    history = plan(turns, Policy(strategy=name, budget=400, recent_turns=2, now=NOW), pinned={2})
    assert 2 in sent_seqs(history)
    assert history.marks[2].fate == PINNED and history.marks[2].form == "full"
    assert history.marks[2].reason == "pinned by Dara on 2026-11-30 11:00 UTC: kept in full"


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_a_left_out_recent_turn_is_not_sent_by_any_strategy(name):
    turns = turns_of(10)
    history = plan(turns, Policy(strategy=name, budget=5000, recent_turns=3, now=NOW),
                   excluded={9, 8})
    assert 9 not in sent_seqs(history) and 8 not in sent_seqs(history)
    assert 7 in sent_seqs(history)  # the newest turn left in is kept instead


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_pins_take_their_share_of_the_budget_first(name):
    turns = turns_of(20)
    alone = plan(turns, Policy(strategy=name, budget=600, recent_turns=5, now=NOW))
    pinned = plan(turns, Policy(strategy=name, budget=600, recent_turns=5, now=NOW), pinned={0})
    window = [f for f in pinned.window() if f.seq != 19]  # the newest is kept whatever it costs
    assert sum(f.tokens for f in pinned.kept()) <= 600 or len(pinned.window()) == 1
    assert len(pinned.window()) <= len(alone.window())
    assert all(f.seq != 0 for f in window)


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_pins_over_budget_send_the_newest_pins_that_fit(name):
    turns = turns_of(12, answer_len=400)  # about 110 tokens each in full, 110 compacted
    history = plan(turns, Policy(strategy=name, budget=250, recent_turns=2, now=NOW),
                   pinned={1, 3, 5, 7})
    assert history.pins_over_budget
    fates = {s: history.marks[s].fate for s in (1, 3, 5, 7)}
    assert fates[7] == PINNED and fates[5] == PINNED
    assert fates[1] == DROPPED and history.marks[1].reason == PINS_OVER_BUDGET


def test_a_pin_that_does_not_fit_in_full_is_compacted():
    turns = [fake_turn(0, "My order is 1043", 3, 100, NOW)] + turns_of(6)[1:]
    between = (turns[0].full_tokens + turns[0].compact_tokens) // 2
    history = plan(turns, Policy(strategy="compact", budget=between, recent_turns=2, now=NOW),
                   pinned={0})
    pin = history.marks[0]
    assert pin.fate == PINNED and pin.form == "compact" and pin.messages == turns[0].compact
    assert "question and answer only" in pin.reason


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_a_pinned_tool_turn_keeps_its_calls_with_their_results(name):
    turns = turns_of(15, tool_calls=2)
    history = plan(turns, Policy(strategy=name, budget=2000, recent_turns=1, now=NOW),
                   pinned={3}, excluded={5})
    pin = history.marks[3]
    assert pin.fate == PINNED and pin.messages == turns[3].messages
    validate_turn(pin.messages)
    assert any(m["role"] == "tool" for m in pin.messages)


def test_strategy_reasons_name_the_pins_share():
    turns = turns_of(30)
    history = plan(turns, Policy(strategy="budget", budget=500, now=NOW), pinned={0})
    assert history.older[0] == DROPPED
    assert "for pinned turns" in history.older[1]


def test_a_conversation_without_marks_plans_as_before():
    turns = turns_of(10)
    policy = Policy(strategy="compact", budget=500, now=NOW)
    assert plan_history(reversed(turns), policy, 1.0, Marks()) == plan_history(
        reversed(turns), policy)
    assert all(f.fate in KEPT or f.fate == DROPPED for f in plan_history(
        reversed(turns), policy).fates)
    assert FULL in {f.fate for f in plan_history(reversed(turns), policy).fates}
