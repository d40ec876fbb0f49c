"""Context assembly: the one place that decides each turn's fate for the next model call.

The request is built in order: system prompt, extra sections (long-term memory, rolling summary:
webapp/hooks.py, filled by memories' and context's init_app), then the history the
conversation's strategy keeps (strategies.py).
Turns are read newest-first and reading stops early, so cost does not grow with length. The
summary shares the budget: the history gets what the summary leaves, and never under half of it.
"""
from contextvars import ContextVar
from dataclasses import replace
from itertools import takewhile
from typing import Callable, Iterator

from ..extensions import db
from ..hooks import RESERVATIONS, SECTION_SOURCES, system_prompt
from .plans import (  # noqa: F401  re-exported for every reader of a plan
    COMPACTED, DROPPED, EXCLUDED, FOLDED, FULL, KEPT, PINNED, POLICY_SETTINGS, SECTION_ORDER,
    SUMMARIZED, Allotment, ContextPlan, HistoryPlan, Policy, Section, TurnFate, sized,
    tenant_settings)
from .strategies import READS, STRATEGIES, SUMMARY_STRATEGIES
from .pins import marks_of, place_pins
from .tail import newest_first, rows_for

# What one assemble() has looked up already (a summary, or that there is none): asked once.
LOOKUPS: ContextVar[dict | None] = ContextVar("context_lookups", default=None)


def looked_up(key, lookup: Callable):
    """`lookup()` once per assemble(): its sections and reservations share the answer."""
    found = LOOKUPS.get()
    if found is None:
        return lookup()
    if key not in found:
        found[key] = lookup()
    return found[key]


def plan_history(turns: Iterator, policy: Policy, ratio: float = 1.0, marks=None) -> HistoryPlan:
    """The strategy's plan; with `marks` (pins.py), pinned turns take their share of the budget
    first and the strategy plans the rest without seeing any marked turn."""
    strategy = STRATEGIES.get(policy.strategy)
    if strategy is None:
        raise ValueError(f"unknown strategy {policy.strategy!r}; choose from {', '.join(STRATEGIES)}")
    floor = policy.summarize_through if policy.strategy in SUMMARY_STRATEGIES else -1
    if floor >= 0:  # somebody asked for everything up to `floor` to be summarized
        turns = takewhile(lambda t: t.seq > floor, turns)
    policy = Allotment.of(policy)
    if not marks:
        plan = strategy(turns, policy, ratio)
    else:
        placed, used, over = place_pins(marks, policy, ratio)
        plan = strategy((t for t in turns if t.seq not in marks.seqs),
                        replace(policy, pinned=used), ratio)
        plan.marks, plan.pins_over_budget = placed, over
    if floor >= 0 and plan.older is None:
        plan.older = (DROPPED, f"summarized on request (Summarize up to turn {floor + 1})")
    return plan


def assemble(conversation, config, policy: Policy | None = None,
             before_seq: int | None = None) -> ContextPlan:
    """Everything the next request sends before the new question, section by section; the
    extra sections (memory, summary) are the SECTION_SOURCES their packages wired in."""
    db.session.flush()  # sections read through the connection: let them see pending changes
    policy = policy or Policy.for_conversation(conversation, config)
    ratio = conversation.token_ratio or 1.0
    token = LOOKUPS.set({})
    try:
        policy = Allotment.of(policy, reserved=sum(r(conversation, policy, ratio)
                                                   for r in RESERVATIONS))
        rows = rows_for(conversation, policy.history_budget, ratio, policy.recent_turns)
        rows = READS.get(policy.strategy, lambda p, n: n)(policy, rows)
        marks = marks_of(conversation, before_seq)
        history = plan_history(newest_first(conversation.id, before_seq, rows), policy, ratio,
                               marks)
        system = [{"role": "system", "content": system_prompt(conversation)}]
        sections, left_out = [Section("system", system, sized(system, ratio))], []
        for source in SECTION_SOURCES:
            section = source(conversation, policy, history)
            if section is not None:  # one without messages was left out, its detail says why
                (sections if section.messages else left_out).append(section)
    finally:
        LOOKUPS.reset(token)
    if policy.strategy in SUMMARY_STRATEGIES:
        summary = next((s for s in sections + left_out if s.name == "summary"), None)
        history.mark_summarized(summary.detail["through_seq"] if summary else -1,
                                summary.detail.get("left_out", "") if summary else "")
    kept = history.kept()
    sections.append(Section("history", [m for f in kept for m in f.messages],
                            sum(f.tokens for f in kept)))
    sections.sort(key=lambda s: SECTION_ORDER.index(s.name) if s.name in SECTION_ORDER
                  else len(SECTION_ORDER) - 1)
    return ContextPlan(policy, sections, history, ratio)

