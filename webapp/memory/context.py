"""Context assembly: the one place that decides each turn's fate for the next model call.

The request is built in order: system prompt, extra sections (long-term memory, rolling summary,
registered by their modules), then the history the conversation's strategy keeps. Turns are read
newest-first and reading stops once the budget is full, so cost does not grow with length.
"""
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from ..llm.tokens import estimate_messages

FULL, COMPACTED, SUMMARIZED, DROPPED = "FULL", "COMPACTED", "SUMMARIZED", "DROPPED"


@dataclass
class Policy:
    strategy: str = "compact"
    budget: int = 3000  # history tokens
    recent_turns: int = 2
    max_age_days: float | None = None

    @classmethod
    def for_conversation(cls, conversation, config, **overrides) -> "Policy":
        """Conversation settings over config defaults, with what-if overrides on top."""
        settings = dict(conversation.settings or {})
        values = {"strategy": conversation.strategy or "compact",
                  "budget": settings.get("budget", config["NIMBUS_HISTORY_BUDGET"]),
                  "recent_turns": settings.get("recent_turns", config["NIMBUS_RECENT_TURNS"]),
                  "max_age_days": settings.get("max_age_days")}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


@dataclass
class TurnFate:
    seq: int
    fate: str
    reason: str
    messages: list = field(default_factory=list)  # as sent; empty unless FULL or COMPACTED
    tokens: int = 0  # as sent, calibrated


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

    def kept(self) -> list[TurnFate]:
        return [f for f in self.fates if f.fate in (FULL, COMPACTED)]


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
        for f in self.history.fates:
            if f.seq == seq:
                return f.fate, f.reason
        return self.history.older or (DROPPED, "not read")


def sized(messages: list[dict], ratio: float) -> int:
    return round(estimate_messages(messages) * ratio)


def plan_compact(turns: Iterable, policy: Policy, ratio: float = 1.0) -> HistoryPlan:
    """Newest N in full, older ones as question + answer, oldest dropped once over budget."""
    fates, used = [], 0
    for index, turn in enumerate(turns):
        full = index < policy.recent_turns
        messages = turn.messages if full else turn.compact
        tokens = round((turn.full_tokens if full else turn.compact_tokens) * ratio)
        if index > 0 and used + tokens > policy.budget:
            fates.append(TurnFate(turn.seq, DROPPED, over_budget(policy)))
            return HistoryPlan(list(reversed(fates)), (DROPPED, over_budget(policy)))
        used += tokens
        reason = (f"one of the {policy.recent_turns} most recent turns" if full else
                  f"older than the {policy.recent_turns} most recent turns: question and answer only")
        fates.append(TurnFate(turn.seq, FULL if full else COMPACTED, reason, messages, tokens))
    return HistoryPlan(list(reversed(fates)))


def over_budget(policy: Policy) -> str:
    return f"over the {policy.budget:,}-token budget"


# name -> function(turns newest-first, policy, ratio) -> HistoryPlan
STRATEGIES: dict[str, Callable[..., HistoryPlan]] = {"compact": plan_compact}

# Functions (conversation, policy, history plan) -> Section | None, in request order.
SECTION_SOURCES: list[Callable] = []


def plan_history(turns: Iterator, policy: Policy, ratio: float = 1.0) -> HistoryPlan:
    strategy = STRATEGIES.get(policy.strategy)
    if strategy is None:
        raise ValueError(f"unknown strategy {policy.strategy!r}; choose from {', '.join(STRATEGIES)}")
    return strategy(turns, policy, ratio)


def assemble(conversation, config, policy: Policy | None = None,
             before_seq: int | None = None) -> ContextPlan:
    """Everything the next request sends before the new question, section by section."""
    from ..agent.prompts import system_prompt
    from ..storage import iter_turns_newest_first

    policy = policy or Policy.for_conversation(conversation, config)
    ratio = conversation.token_ratio or 1.0
    history = plan_history(iter_turns_newest_first(conversation.id, before_seq), policy, ratio)
    system = [{"role": "system", "content": system_prompt(conversation)}]
    sections = [Section("system", system, sized(system, ratio))]
    for source in SECTION_SOURCES:
        section = source(conversation, policy, history)
        if section is not None and section.messages:
            sections.append(section)
    kept = [m for f in history.kept() for m in f.messages]
    sections.append(Section("history", kept, sum(f.tokens for f in history.kept())))
    return ContextPlan(policy, sections, history, ratio)
