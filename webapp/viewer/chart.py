"""Geometry of the viewer's cost chart, computed here so it can be tested: prompt tokens sent per
turn (every model call of the turn) against resending the whole history, per turn and cumulative,
as SVG coordinates. Long conversations come in buckets of turns (series.py): one point each.
"""
import math
from dataclasses import dataclass, field
from itertools import accumulate

WIDTH, PANEL_HEIGHT = 640, 200
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 24, 32  # margins inside a panel, for axis labels
MAX_MARKERS = 60  # beyond this many turns the dots would merge into a smear


@dataclass
class Tick:
    value: int
    position: float  # y for value ticks, x for turn ticks
    label: str


@dataclass
class Marker:
    turn: int
    x: float
    sent_y: float
    resend_y: float
    sent: int
    resend: int


@dataclass
class Panel:
    title: str
    top: float  # y of the panel's top edge in the whole SVG
    max_value: int
    y_ticks: list[Tick]
    sent: list[tuple[float, float]]
    resend: list[tuple[float, float]]
    markers: list[Marker] = field(default_factory=list)

    @property
    def sent_path(self) -> str:
        return points_attribute(self.sent)

    @property
    def resend_path(self) -> str:
        return points_attribute(self.resend)

    @property
    def baseline(self) -> float:
        return self.top + PANEL_HEIGHT - BOTTOM

    @property
    def title_y(self) -> float:
        return self.top + TOP - 10


@dataclass
class CostChart:
    turns: list[int]  # turn numbers, 1-based, oldest first (a bucket's last turn)
    sent: list[int]  # prompt tokens over all model calls (provider-reported where known)
    resend: list[int]  # the same calls had every earlier turn been resent
    counts: list[int] = field(default_factory=list)  # turns per point (1 unless bucketed)
    panels: list[Panel] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)
    width: int = WIDTH
    height: int = 0
    markers: bool = True
    turns_per_point: int = 1
    plot_left: int = LEFT
    plot_right: int = WIDTH - RIGHT
    unrequested: int = 0  # imported turns left out of the chart: they made no request

    @property
    def total_sent(self) -> int:
        return sum(self.sent)

    @property
    def total_resend(self) -> int:
        return sum(self.resend)

    @property
    def saved(self) -> int:
        return self.total_resend - self.total_sent

    @property
    def percent_sent(self) -> int | None:
        return round(100 * self.total_sent / self.total_resend) if self.total_resend else None

    @property
    def sentence(self) -> str:
        """The saving in words, for people who will not read the axes."""
        left_out = ""
        if self.unrequested:
            left_out = (f" {self.unrequested:,} imported turn{'s' if self.unrequested != 1 else ''}"
                        f" made no request here and {'are' if self.unrequested != 1 else 'is'} "
                        "left out of the chart.")
        if self.percent_sent is None:
            return ("No turn has been sent to a model yet." + left_out if self.unrequested
                    else "No answered turns yet: nothing has been sent.")
        sentence = (f"This conversation sent {self.percent_sent}% of the tokens a "
                    f"resend-everything chat would have ({self.total_sent:,} of {self.total_resend:,} prompt tokens "
                    f"over every model call; {self.saved:,} saved).")
        if self.saved == 0:
            sentence += " The two lines overlap: nothing had to be trimmed yet."
        return sentence + left_out


def nice_step(value: float) -> int:
    """The smallest 1, 2, 2.5 or 5 × 10^k step (at least 1) that covers value."""
    if value <= 1:
        return 1
    power = 10 ** math.floor(math.log10(value))
    for factor in (1, 2, 2.5, 5, 10):
        if factor * power >= value:
            return max(1, math.ceil(factor * power))
    return 10 * power


def points_attribute(points: list[tuple[float, float]]) -> str:
    return " ".join(f"{x:g},{y:g}" for x, y in points)


def x_positions(count: int) -> list[float]:
    plot = WIDTH - LEFT - RIGHT
    if count == 1:
        return [LEFT + plot / 2]
    return [round(LEFT + i * plot / (count - 1), 1) for i in range(count)]


def panel(title: str, top: float, turns: list[int], xs: list[float], sent: list[int],
          resend: list[int], markers: bool) -> Panel:
    step = nice_step(max(sent + resend + [1]) / 4)
    max_value = step * max(1, math.ceil(max(sent + resend + [1]) / step))
    plot = PANEL_HEIGHT - TOP - BOTTOM

    def y(value: int) -> float:
        return round(top + TOP + plot - value / max_value * plot, 1)

    ticks = [Tick(v, y(v), f"{v:,}") for v in range(0, max_value + 1, step)]
    sent_points = [(x, y(s)) for x, s in zip(xs, sent)]
    resend_points = [(x, y(r)) for x, r in zip(xs, resend)]
    dots = [Marker(turn, x, sy, ry, s, r) for turn, (x, sy), (_, ry), s, r
            in zip(turns, sent_points, resend_points, sent, resend)] if markers else []
    return Panel(title, top, max_value, ticks, sent_points, resend_points, dots)


def turn_ticks(turns: list[int], xs: list[float], most: int = 12) -> list[Tick]:
    every = max(1, math.ceil(len(turns) / most))
    picked = list(range(0, len(turns), every))
    if picked and picked[-1] != len(turns) - 1:
        picked.append(len(turns) - 1)
    return [Tick(turns[i], xs[i], str(turns[i])) for i in picked]


def cost_chart(turns: list[int], sent: list[int], resend: list[int],
               counts: list[int] | None = None, unrequested: int = 0) -> CostChart:
    """Two panels over the same turns: tokens per turn (a bucket's average), and running totals.
    Marker objects are made only when the markers are shown."""
    counts = list(counts or [1] * len(turns))
    chart = CostChart(list(turns), list(sent), list(resend), counts,
                      markers=len(turns) <= MAX_MARKERS and max(counts, default=1) == 1,
                      turns_per_point=max(counts, default=1), unrequested=unrequested)
    if not turns:
        return chart
    xs = x_positions(len(turns))
    chart.panels = [
        panel("Prompt tokens per turn" if chart.turns_per_point == 1 else
              f"Prompt tokens per turn (average of {chart.turns_per_point} turns per point)",
              0, chart.turns, xs, [round(s / c) for s, c in zip(chart.sent, counts)],
              [round(r / c) for r, c in zip(chart.resend, counts)], chart.markers),
        panel("Cumulative prompt tokens", PANEL_HEIGHT, chart.turns, xs,
              list(accumulate(chart.sent)), list(accumulate(chart.resend)), chart.markers)]
    chart.x_ticks = turn_ticks(chart.turns, xs)
    chart.height = PANEL_HEIGHT * len(chart.panels)
    return chart
