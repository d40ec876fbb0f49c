"""The request gauge: the next request's sections as one bar, and where the history budget ends."""
from dataclasses import dataclass, field


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
    budget: int  # the policy's budget
    history_budget: int  # what of it the history may use (the summary takes its share first)
    budget_mark: float  # percent of the width where the history would reach its budget
    overlap_seqs: list[int] = field(default_factory=list)  # history turns the summary covers too
    overlap: int = 0  # their tokens: sent twice, once word for word and once summarized

    @property
    def overlap_start(self) -> float:
        """The overlapping turns are the oldest the history keeps: they open its segment."""
        return next((s.start for s in self.segments if s.name == "history"), 0.0)

    @property
    def overlap_width(self) -> float:
        history = next((s for s in self.segments if s.name == "history"), None)
        return round(history.width * self.overlap / history.tokens, 2) if history and history.tokens else 0.0

    @property
    def reserved(self) -> int:
        return self.budget - self.history_budget

    @property
    def history_percent(self) -> int:
        return round(100 * self.history / self.history_budget) if self.history_budget else 100

    @property
    def over_budget(self) -> bool:
        return self.history > self.history_budget


def request_gauge(sections: list[tuple[str, int]], budget: int,
                  history_budget: int | None = None, overlap_seqs: list[int] | None = None,
                  overlap: int = 0) -> Gauge:
    """Scale the sections (history last) so the bar also shows room left under the budget."""
    history_budget = budget if history_budget is None else history_budget
    total = sum(tokens for _, tokens in sections)
    history = sum(tokens for name, tokens in sections if name == "history")
    before_history = total - history
    scale = max(total, before_history + history_budget, 1)
    segments, start = [], 0.0
    for name, tokens in sections:
        width = round(100 * tokens / scale, 2)
        segments.append(Segment(name, tokens, round(start, 2), width))
        start += width
    return Gauge(segments, total, history, budget, history_budget,
                 round(100 * (before_history + history_budget) / scale, 2),
                 list(overlap_seqs or []), overlap)
