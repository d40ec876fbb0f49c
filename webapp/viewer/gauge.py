"""The request gauge: the next request's sections as one bar, and where the history budget ends."""
from dataclasses import dataclass


@dataclass
class Segment:
    name: str
    tokens: int
    start: float  # percent of the gauge's width
    width: float


@dataclass
class Gauge:
    """The next request as one bar: its sections in order, and where the history budget ends."""
    segments: list[Segment]
    total: int
    history: int
    budget: int
    budget_mark: float  # percent of the width where the history would reach its budget

    @property
    def history_percent(self) -> int:
        return round(100 * self.history / self.budget) if self.budget else 100

    @property
    def over_budget(self) -> bool:
        return self.history > self.budget


def request_gauge(sections: list[tuple[str, int]], budget: int) -> Gauge:
    """Scale the sections (history last) so the bar also shows room left under the budget."""
    total = sum(tokens for _, tokens in sections)
    history = sum(tokens for name, tokens in sections if name == "history")
    before_history = total - history
    scale = max(total, before_history + budget, 1)
    segments, start = [], 0.0
    for name, tokens in sections:
        width = round(100 * tokens / scale, 2)
        segments.append(Segment(name, tokens, round(start, 2), width))
        start += width
    return Gauge(segments, total, history, budget,
                 round(100 * (before_history + budget) / scale, 2))
