"""The context strategies: each reads turns newest-first, keeps whole turns, and says why per turn.

Every strategy keeps the newest turn, keeps turns whole (all of a turn, or its question and answer),
preserves order, stays within the history budget (except for a lone newest turn that is bigger),
and stops reading as soon as it can, so assembly cost does not grow with the conversation.
"""
import re
from datetime import timedelta
from itertools import islice
from typing import Callable, Iterable

from ..models import utcnow
from .plans import COMPACTED, DROPPED, FULL, Allotment, HistoryPlan, Policy, TurnFate


def over_budget(policy: Policy) -> str:
    """Why a turn was left out for size; it names the model's window when that was the limit."""
    policy = Allotment.of(policy)  # a bare Policy has no shares taken out: none were
    window = (f"{policy.budget_set:,} set, cut to fit the model's {policy.window:,}-token window"
              if policy.window and policy.budget_set else "")
    if policy.history_budget == policy.budget:
        return f"over the {policy.budget:,}-token budget" + (f" ({window})" if window else "")
    less = [f"{share:,} for {what}" for share, what in (
        (policy.budget - policy.history_budget - policy.pinned, "the summary"),
        (policy.pinned, "pinned turns")) if share > 0]
    return (f"over the {policy.history_budget:,}-token budget "
            f"({policy.budget:,} less {' and '.join(less)}{'; ' + window if window else ''})")


def kept_fate(turn, fate: str, reason: str, ratio: float) -> TurnFate:
    messages, tokens = ((turn.messages, turn.full_tokens) if fate == FULL
                        else (turn.compact, turn.compact_tokens))
    return TurnFate(turn.seq, fate, reason, messages, round(tokens * ratio))


def keep_newest(turns: Iterable, policy: Policy, ratio: float,
                form: Callable[[int], tuple[str, str]],
                stop: Callable[[int, object], str | None] = lambda index, turn: None) -> HistoryPlan:
    """Keep a run of the newest turns, each in the form `form(index)` gives, until the budget is
    full or `stop` names a reason; that turn and every older one share the reason."""
    fates, used = [], 0
    for index, turn in enumerate(turns):
        reason = stop(index, turn) if index > 0 else None
        if reason is None:
            fate = kept_fate(turn, *form(index), ratio)
            if index == 0 or used + fate.tokens <= policy.history_budget:
                used += fate.tokens
                fates.append(fate)
                continue
            reason = over_budget(policy)
        fates.append(TurnFate(turn.seq, DROPPED, reason))
        return HistoryPlan(fates[::-1], (DROPPED, reason))
    return HistoryPlan(fates[::-1])


def recent_in_full(policy: Policy) -> Callable[[int], tuple[str, str]]:
    """The newest N turns whole; older ones as question and answer only."""
    def form(index: int) -> tuple[str, str]:
        if index < policy.recent_turns:
            return FULL, f"one of the {policy.recent_turns} most recent turns"
        return COMPACTED, (f"older than the {policy.recent_turns} most recent turns: "
                           "question and answer only")
    return form


def all_in_full(reason: str) -> Callable[[int], tuple[str, str]]:
    return lambda index: (FULL, reason)


def plan_compact(turns: Iterable, policy: Policy, ratio: float = 1.0) -> HistoryPlan:
    """Newest N in full, older ones as question + answer, oldest dropped once over budget."""
    return keep_newest(turns, policy, ratio, recent_in_full(policy))


def last_n(policy: Policy, turns: Iterable, ratio: float) -> HistoryPlan:
    n = max(policy.recent_turns, 1)
    return keep_newest(turns, policy, ratio, all_in_full(f"one of the last {n} turns"),
                       lambda index, turn: f"outside the last {n} turns" if index >= n else None)


def plan_window(turns: Iterable, policy: Policy, ratio: float = 1.0) -> HistoryPlan:
    """The last N turns in full; nothing older."""
    return last_n(policy, turns, ratio)


def plan_hybrid(turns: Iterable, policy: Policy, ratio: float = 1.0) -> HistoryPlan:
    """The last N turns in full; the rolling summary stands in for everything older."""
    return last_n(policy, turns, ratio)


def plan_budget(turns: Iterable, policy: Policy, ratio: float = 1.0) -> HistoryPlan:
    """As many of the newest turns, in full, as the budget holds."""
    return keep_newest(turns, policy, ratio, all_in_full("fits the budget in full"))


def plan_time(turns: Iterable, policy: Policy, ratio: float = 1.0) -> HistoryPlan:
    """Like compact, but nothing older than the maximum age (the newest turn is always kept)."""
    cutoff = (policy.now or utcnow()) - timedelta(days=policy.max_age_days)
    reason = f"older than {policy.max_age_days:g} days"
    return keep_newest(turns, policy, ratio, recent_in_full(policy),
                       lambda index, turn: reason if turn.created_at < cutoff else None)


# What makes an older turn worth keeping: (label, test on the turn's question, points).
EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")
PHONE = re.compile(r"\+?\d[\d ().-]{6,}\d")
SIGNALS = [
    ("name", lambda q, t: re.search(r"\b(my name is|call me|i'?m called|i am called)\b",
                                    q, re.I), 3),
    ("contact details", lambda q, t: EMAIL.search(q) or PHONE.search(q) or re.search(
        r"\b(my (e-?mail|phone|mobile|number|address)|reach me)\b", q, re.I), 3),
    ("remember", lambda q, t: re.search(r"\bremember\b", q, re.I), 3),
    ("preference", lambda q, t: re.search(r"\b(I|we) (prefer|always|never|like|love|hate)\b",
                                          q, re.I), 2),
    ("tool use", lambda q, t: t.tool_calls, 2),
    ("question", lambda q, t: "?" in q, 1),
]


def importance(turn) -> tuple[int, list[str]]:
    question = turn.compact[0]["content"]  # the compact form starts with the question
    found = [(label, points) for label, test, points in SIGNALS if test(question, turn)]
    return sum(p for _, p in found), [label for label, _ in found]


def plan_importance(turns: Iterable, policy: Policy, ratio: float = 1.0) -> HistoryPlan:
    """The newest N in full, then the best-scoring older turns of a bounded pool that still fit."""
    pool = list(islice(turns, max(policy.candidate_pool, 1)))
    fates: dict[int, TurnFate] = {}
    used, scored = 0, []
    form = recent_in_full(policy)
    for index, turn in enumerate(pool):
        fate = kept_fate(turn, *form(index), ratio)
        if index == 0 or (fate.fate == FULL and used + fate.tokens <= policy.history_budget):
            fates[turn.seq], used = fate, used + fate.tokens
        else:
            scored.append((*importance(turn), turn))
    dropped = []
    for score, labels, turn in sorted(scored, key=lambda s: (-s[0], -s[2].seq)):
        fate = kept_fate(turn, COMPACTED, "", ratio)
        if used + fate.tokens <= policy.history_budget:
            used += fate.tokens
            why = f" ({', '.join(labels)})" if labels else ""
            fate.reason = f"importance score {score}{why}: question and answer only"
            fates[turn.seq] = fate
        else:
            dropped.append((score, turn.seq))
    lowest_kept = min((s for s, _, t in scored if t.seq in fates), default=None)
    for score, seq in dropped:  # low importance only if every turn kept instead scored higher
        fates[seq] = TurnFate(seq, DROPPED, f"low importance (score {score})"
                              if lowest_kept is not None and score < lowest_kept
                              else f"{over_budget(policy)} (importance score {score})")
    older = (DROPPED, f"outside the {len(pool)} most recent turns scored for importance")
    return HistoryPlan([fates[seq] for seq in sorted(fates)],
                       older if len(pool) == policy.candidate_pool else None)


def last_n_reads(policy: Policy, rows: int) -> int:
    return min(rows, max(policy.recent_turns, 1) + 1)


# The strategies a conversation may choose, in the order they are offered: name → function(turns
# newest-first, policy, ratio) → HistoryPlan. A new strategy is added here, and only here.
STRATEGIES: dict[str, Callable[..., HistoryPlan]] = {
    "compact": plan_compact, "window": plan_window, "budget": plan_budget,
    "hybrid": plan_hybrid, "importance": plan_importance, "time": plan_time}
# Strategies that send the rolling summary of the turns they no longer keep.
SUMMARY_STRATEGIES: set[str] = {"compact", "hybrid"}
# name → function(policy, rows the budget holds) → rows the strategy reads at most, about.
READS: dict[str, Callable[[Policy, int], int]] = {
    "window": last_n_reads, "hybrid": last_n_reads,
    "importance": lambda policy, rows: max(policy.candidate_pool, 1)}
