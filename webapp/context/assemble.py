"""Context assembly: the one place that decides each turn's fate for the next model call.

The request is built in order: system prompt, extra sections (long-term memory, rolling summary,
registered by their modules), then the history the conversation's strategy keeps (strategies.py).
Turns are read newest-first and reading stops early, so cost does not grow with length. The
summary shares the budget: the history gets what the summary leaves, and never under half of it.
"""
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import takewhile
from typing import Callable, Iterator

from ..extensions import db
from ..llm.tokens import estimate_messages

FULL, COMPACTED, SUMMARIZED, DROPPED = "FULL", "COMPACTED", "SUMMARIZED", "DROPPED"
PINNED, EXCLUDED = "PINNED", "EXCLUDED"  # set from the chat on one turn (webapp/context/pins.py)
KEPT = (FULL, COMPACTED, PINNED)  # the fates whose turn the request sends
SECTION_ORDER = ("system", "memory", "summary", "history")
FOLDED = "fell out of the window; folded into the summary"

# Conversation.settings keys that tune the strategy, with the config key of each default.
POLICY_SETTINGS = {"budget": "NIMBUS_HISTORY_BUDGET", "recent_turns": "NIMBUS_RECENT_TURNS",
                   "max_age_days": "NIMBUS_MAX_AGE_DAYS",
                   "candidate_pool": "NIMBUS_IMPORTANCE_POOL"}


def tenant_settings(conversation) -> dict:
    """The shop-wide defaults an admin set (webapp/staff/settings.py); {} for stand-ins."""
    tenant = getattr(conversation, "tenant", None)
    return dict(getattr(tenant, "settings", None) or {})


@dataclass
class Policy:
    strategy: str = "compact"
    budget: int = 3000  # tokens for the history (and the summary, where the strategy sends one)
    recent_turns: int = 2
    max_age_days: float = 7.0
    candidate_pool: int = 50  # importance: how many of the newest turns are scored
    reserved: int = 0  # taken out of the budget by the rolling summary, set by assemble
    pinned: int = 0  # taken out of what is left by pinned turns, set by plan_history
    summarize_through: int = -1  # "Summarize up to here": the history starts after this seq
    now: datetime | None = None  # what ages are measured from; None: the current time

    @classmethod
    def for_conversation(cls, conversation, config, **overrides) -> "Policy":
        """Conversation settings over config defaults, with what-if overrides on top."""
        settings = dict(conversation.settings or {})
        shop = tenant_settings(conversation)  # the tenant's defaults sit between the two
        values = {"strategy": conversation.strategy or "compact",
                  "summarize_through": settings.get("summarize_through", -1)}
        for name, key in POLICY_SETTINGS.items():
            values[name] = settings.get(name, shop.get(name, config[key]))
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    @property
    def history_budget(self) -> int:
        """The budget less the summary's share (the history never gets under half of it), less
        what pinned turns take."""
        return max(max(self.budget - self.reserved, self.budget // 2) - self.pinned, 0)


@dataclass
class TurnFate:
    seq: int
    fate: str
    reason: str
    messages: list = field(default_factory=list)  # as sent; empty unless one of KEPT
    tokens: int = 0  # as sent, calibrated
    form: str = ""  # of a PINNED turn: "full" or "compact" (the other fates say it themselves)


@dataclass
class Section:
    name: str  # system, memory, summary, history
    messages: list
    tokens: int
    detail: dict = field(default_factory=dict)


@dataclass
class HistoryPlan:
    fates: list[TurnFate]  # oldest first: the turns that were read
    older: tuple[str, str] | None = None  # fate and reason of every turn older than those read
    uses_summary: bool = False  # set by mark_summarized: unkept turns are summarized or pending
    summarized_through: int = -1  # the last seq the summary covers
    # Pinned and left-out turns at any age, by seq: the strategy never saw them (pins.py).
    marks: dict[int, TurnFate] = field(default_factory=dict)
    pins_over_budget: bool = False  # pins alone did not fit: only the newest that fit are sent

    def window(self) -> list[TurnFate]:
        """What the strategy kept, without the pins."""
        return [f for f in self.fates if f.fate in KEPT]

    def kept(self) -> list[TurnFate]:
        """Every turn the request sends, pins included, oldest first."""
        pins = [m for m in self.marks.values() if m.fate == PINNED and m.messages]
        return sorted(self.window() + pins, key=lambda f: f.seq) if pins else self.window()

    def mark_summarized(self, through_seq: int) -> None:
        """Turns the summary covers and the history does not keep become SUMMARIZED."""
        self.uses_summary, self.summarized_through = True, through_seq
        for f in self.fates:
            if f.fate == DROPPED:
                f.fate, f.reason = self.summary_fate(f.seq, f.reason)
        for f in self.marks.values():
            if f.fate == EXCLUDED and f.seq <= through_seq:
                f.reason += (" (if it was folded into the summary before it was left out, the "
                             "summary may still mention it: edit the summary to take it out)")

    def summary_fate(self, seq: int, reason: str) -> tuple[str, str]:
        if seq <= self.summarized_through:
            return SUMMARIZED, FOLDED
        return DROPPED, f"{reason}; not yet in the summary"

    def fate_of_older(self, seq: int) -> tuple[str, str]:
        fate, reason = self.older or (DROPPED, "not read")
        if self.uses_summary and fate == DROPPED:
            return self.summary_fate(seq, reason)
        return fate, reason


@dataclass
class ContextPlan:
    policy: Policy
    sections: list[Section]
    history: HistoryPlan
    ratio: float = 1.0

    @property
    def messages(self) -> list[dict]:
        return [m for s in self.sections for m in s.messages]

    @property
    def total_tokens(self) -> int:
        return sum(s.tokens for s in self.sections)

    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)

    def fate_of(self, seq: int) -> tuple[str, str]:
        if seq in self.history.marks:
            mark = self.history.marks[seq]
            return mark.fate, mark.reason
        for f in self.history.fates:
            if f.seq == seq:
                return f.fate, f.reason
        return self.history.fate_of_older(seq)


def sized(messages: list[dict], ratio: float) -> int:
    return round(estimate_messages(messages) * ratio)


# name -> function(turns newest-first, policy, ratio) -> HistoryPlan
STRATEGIES: dict[str, Callable[..., HistoryPlan]] = {}
# Strategies that send the rolling summary of the turns they no longer keep.
SUMMARY_STRATEGIES: set[str] = set()
# name -> function(policy, rows the budget holds) -> rows the strategy reads at most, about.
READS: dict[str, Callable[[Policy, int], int]] = {}
# What one assemble() has looked up already (a summary, or that there is none): asked once.
LOOKUPS: ContextVar[dict | None] = ContextVar("context_lookups", default=None)


def register(name: str, uses_summary: bool = False,
             reads: Callable[[Policy, int], int] | None = None):
    """Make a planning function selectable as a conversation's strategy."""
    def add(plan):
        STRATEGIES[name] = plan
        if uses_summary:
            SUMMARY_STRATEGIES.add(name)
        if reads is not None:
            READS[name] = reads
        return plan
    return add


def looked_up(key, lookup: Callable):
    """`lookup()` once per assemble(): its sections and reservations share the answer."""
    found = LOOKUPS.get()
    if found is None:
        return lookup()
    if key not in found:
        found[key] = lookup()
    return found[key]


# Functions (conversation, policy, history plan) -> Section | None; sorted by SECTION_ORDER.
SECTION_SOURCES: list[Callable] = []
# Functions (conversation, policy, ratio) -> tokens a section takes out of the history budget.
RESERVATIONS: list[Callable] = []


def plan_history(turns: Iterator, policy: Policy, ratio: float = 1.0, marks=None) -> HistoryPlan:
    """The strategy's plan; with `marks` (pins.py), pinned turns take their share of the budget
    first and the strategy plans the rest without seeing any marked turn."""
    strategy = STRATEGIES.get(policy.strategy)
    if strategy is None:
        raise ValueError(f"unknown strategy {policy.strategy!r}; choose from {', '.join(STRATEGIES)}")
    floor = policy.summarize_through if policy.strategy in SUMMARY_STRATEGIES else -1
    if floor >= 0:  # somebody asked for everything up to `floor` to be summarized
        turns = takewhile(lambda t: t.seq > floor, turns)
    if not marks:
        plan = strategy(turns, policy, ratio)
    else:
        from .pins import place_pins
        placed, used, over = place_pins(marks, policy, ratio)
        plan = strategy((t for t in turns if t.seq not in marks.seqs),
                        replace(policy, pinned=used), ratio)
        plan.marks, plan.pins_over_budget = placed, over
    if floor >= 0 and plan.older is None:
        plan.older = (DROPPED, f"summarized on request (Summarize up to turn {floor + 1})")
    return plan


def assemble(conversation, config, policy: Policy | None = None,
             before_seq: int | None = None) -> ContextPlan:
    """Everything the next request sends before the new question, section by section."""
    from ..agent.prompts import system_prompt
    from .pins import marks_of
    from .tail import newest_first, rows_for

    db.session.flush()  # sections read through the connection: let them see pending changes
    policy = policy or Policy.for_conversation(conversation, config)
    ratio = conversation.token_ratio or 1.0
    token = LOOKUPS.set({})
    try:
        policy = replace(policy, reserved=sum(r(conversation, policy, ratio) for r in RESERVATIONS))
        rows = rows_for(conversation, policy.history_budget, ratio, policy.recent_turns)
        rows = READS.get(policy.strategy, lambda p, n: n)(policy, rows)
        marks = marks_of(conversation, before_seq)
        history = plan_history(newest_first(conversation.id, before_seq, rows), policy, ratio,
                               marks)
        system = [{"role": "system", "content": system_prompt(conversation)}]
        sections = [Section("system", system, sized(system, ratio))]
        for source in SECTION_SOURCES:
            section = source(conversation, policy, history)
            if section is not None and section.messages:
                sections.append(section)
    finally:
        LOOKUPS.reset(token)
    if policy.strategy in SUMMARY_STRATEGIES:
        summary = next((s for s in sections if s.name == "summary"), None)
        history.mark_summarized(summary.detail["through_seq"] if summary else -1)
    kept = history.kept()
    sections.append(Section("history", [m for f in kept for m in f.messages],
                            sum(f.tokens for f in kept)))
    sections.sort(key=lambda s: SECTION_ORDER.index(s.name) if s.name in SECTION_ORDER
                  else len(SECTION_ORDER) - 1)
    return ContextPlan(policy, sections, history, ratio)


# Registration happens on import, so every strategy and the summary section always exist.
from . import strategies
from .summary import section as summaries  # noqa: E402,F401
