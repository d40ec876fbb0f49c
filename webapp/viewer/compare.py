"""Two strategies side by side on the same conversation and budget: tokens per section, and the
turns whose fate differs, found by comparing the two sets of fate runs (never every turn)."""
from dataclasses import dataclass

from ..context import Policy, plan_request
from .fates import FateRun, Fates
from .strip import Strip, fate_strip
from .whatif import WhatIfError, parse_what_if


class CompareError(ValueError):
    """Settings we cannot compare; the text says why."""


@dataclass
class Side:
    policy: Policy
    sections: dict[str, int]  # name -> tokens
    total: int
    fates: Fates
    runs: list[FateRun]
    strip: Strip


@dataclass
class Difference:
    first: int
    last: int
    a: tuple[str, bool, str]  # fate, also in the summary, reason
    b: tuple[str, bool, str]

    @property
    def label(self) -> str:
        return (f"turn {self.first + 1}" if self.first == self.last
                else f"turns {self.first + 1}–{self.last + 1}")


@dataclass
class Comparison:
    a: Side
    b: Side
    differences: list[Difference]

    @property
    def section_names(self) -> list[str]:
        return list(dict.fromkeys([*self.a.sections, *self.b.sections]))

    def payload(self) -> dict:
        side = lambda s: {"strategy": s.policy.strategy, "budget": s.policy.budget,  # noqa: E731
                          "recent_turns": s.policy.recent_turns, "total_tokens": s.total,
                          "sections": s.sections, "fates": s.fates.counts()}
        return {"a": side(self.a), "b": side(self.b), "differences": [
            {"first_seq": d.first, "last_seq": d.last, "a": list(d.a), "b": list(d.b)}
            for d in self.differences]}


def side(conversation, config, policy: Policy) -> Side:
    plan = plan_request(conversation, config, policy)
    fates = Fates(plan, conversation.id)
    runs = fates.runs()
    return Side(plan.policy, {s.name: s.tokens for s in plan.sections}, plan.total_tokens,
                fates, runs, fate_strip(runs, fates.through))


def fate_at(runs: list[FateRun], seq: int) -> tuple[str, bool, str]:
    run = next(r for r in runs if r.first <= seq <= r.last)
    return run.fate, run.in_summary, run.reason


def compare_strategies(conversation, config, values) -> Comparison:
    """Strategies `a` and `b` (default compact and window) under the shared what-if settings."""
    shared = {k: v for k, v in values.items() if k not in ("a", "b", "strategy")}
    try:
        overrides = parse_what_if(shared)
        policies = [Policy.for_conversation(conversation, config, **overrides,
                                            **parse_what_if({"strategy": values.get(k) or d}))
                    for k, d in (("a", "compact"), ("b", "window"))]
    except WhatIfError as problem:
        raise CompareError(str(problem)) from None
    a, b = (side(conversation, config, p) for p in policies)
    starts = sorted({r.first for r in a.runs} | {r.first for r in b.runs})
    ends = starts[1:] + [max((a.runs or b.runs or [FateRun(0, -1, "", "")])[-1].last + 1, 0)]
    differences: list[Difference] = []
    for first, end in zip(starts, ends):
        fa, fb = fate_at(a.runs, first), fate_at(b.runs, first)
        if fa[:2] == fb[:2]:
            continue
        if differences and differences[-1].last == first - 1 and (differences[-1].a,
                                                                  differences[-1].b) == (fa, fb):
            differences[-1].last = end - 1
        else:
            differences.append(Difference(first, end - 1, fa, fb))
    return Comparison(a, b, differences)
