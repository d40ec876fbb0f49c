"""What assembly decides with: the policy (the token budget), a turn's fate, a section, a plan.

Leaf types shared by assemble.py, the strategies and the pins, so none of them imports another
to learn what a plan is.
"""
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any

from ..config import DEFAULTS
from ..llm import estimate_messages

FULL, COMPACTED, SUMMARIZED, DROPPED = "FULL", "COMPACTED", "SUMMARIZED", "DROPPED"
PINNED, EXCLUDED = "PINNED", "EXCLUDED"  # set from the chat on one turn (webapp/context/pins.py)
KEPT = (FULL, COMPACTED, PINNED)  # the fates whose turn the request sends
SECTION_ORDER = ("system", "memory", "summary", "history")
FOLDED = "fell out of the window; folded into the summary"
# Said of a left-out turn the summary covers: folded before it was left out, it may be in there.
WORDS_MAY_REMAIN = "— its words may remain in the summary"

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
    """The settings a request is planned by, and nothing the planning works out: those shares
    travel as an Allotment."""
    strategy: str = "compact"
    # tokens for the history (and the summary, where the strategy sends one)
    budget: int = DEFAULTS[POLICY_SETTINGS["budget"]]
    recent_turns: int = DEFAULTS[POLICY_SETTINGS["recent_turns"]]
    max_age_days: float = DEFAULTS[POLICY_SETTINGS["max_age_days"]]
    candidate_pool: int = DEFAULTS[POLICY_SETTINGS["candidate_pool"]]  # importance: turns scored
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
        return self.budget

    def settings(self) -> "Policy":
        """The settings alone, whatever the planning has added."""
        return Policy(**{f.name: getattr(self, f.name) for f in fields(Policy)})


@dataclass
class Allotment(Policy):
    """A policy with the shares planning took out of its budget: what the strategies plan with."""
    reserved: int = 0  # taken out of the budget by the rolling summary, set by assemble
    pinned: int = 0  # taken out of what is left by pinned turns, set by plan_history
    memory_room: int | None = None  # tokens the memory block may take; set by window.fit
    window: int | None = None  # the model's window, where it cut the budget; set by window.fit
    budget_set: int | None = None  # the budget before the window cut it; set by window.fit

    @classmethod
    def of(cls, policy: Policy, **shares) -> "Allotment":
        """`policy`'s settings (and any shares it already has), with `shares` on top."""
        if isinstance(policy, Allotment):
            return replace(policy, **shares)
        return cls(**{f.name: getattr(policy, f.name) for f in fields(Policy)}, **shares)

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
    summary_left_out: str = ""  # why the request leaves the summary out (the window: room.py)
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

    def mark_summarized(self, through_seq: int, left_out: str = "") -> None:
        """Turns the summary covers and the history does not keep become SUMMARIZED; DROPPED,
        saying why, where the request leaves the summary out (`left_out`)."""
        self.uses_summary, self.summarized_through = True, through_seq
        self.summary_left_out = left_out
        for f in self.fates:
            if f.fate == DROPPED:
                f.fate, f.reason = self.summary_fate(f.seq, f.reason)
        for f in self.marks.values():
            if f.fate == EXCLUDED and f.seq <= through_seq:  # a fold before the leave-out took it in
                f.reason += f" {WORDS_MAY_REMAIN}"

    def summary_fate(self, seq: int, reason: str) -> tuple[str, str]:
        if seq <= self.summarized_through and self.summary_left_out:
            return DROPPED, (f"{reason}; folded into the summary, which this request leaves "
                             f"out: {self.summary_left_out}")
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
    policy: "Allotment"
    sections: list[Section]
    history: HistoryPlan
    ratio: float = 1.0
    shape: Any = None  # request.RequestShape: the window and reserve it was fitted to

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
