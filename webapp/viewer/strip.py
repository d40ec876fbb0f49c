"""The fate strip: a cell per turn coloured by its fate, the summary's reach above it, for the
whole conversation at any length. Turns that share a fate make one cell (runs from fates.py),
and each cell gets a minimum width, so the few turns the request keeps stay visible and clickable
beside thousands that fell off.
"""
from dataclasses import dataclass

from .fates import FateRun

WIDTH = 1000  # viewBox units
MIN_CELL = 6
PER_TURN = 200  # up to this many turns every turn is its own cell; beyond, runs share one


@dataclass
class Cell:
    run: FateRun
    x: float
    width: float

    @property
    def target_seq(self) -> int:
        """The turn a click goes to: the newest of the run, nearest the request."""
        return self.run.last


@dataclass
class Strip:
    cells: list[Cell]
    reach: tuple[float, float] | None  # x from / to of the summary's reach, if any
    reach_label: str = ""


def fate_strip(runs: list[FateRun], summary_through: int) -> Strip:
    if not runs:
        return Strip([], None)
    total = runs[-1].last + 1
    if total <= PER_TURN:
        runs = [FateRun(seq, seq, r.fate, r.reason, r.in_summary)
                for r in runs for seq in range(r.first, r.last + 1)]
    least = min(MIN_CELL, WIDTH / len(runs))
    spare = WIDTH - least * len(runs)
    cells, x = [], 0.0
    for run in runs:
        width = least + spare * (run.last - run.first + 1) / total
        cells.append(Cell(run, round(x, 2), round(width, 2)))
        x += width
    reach = None
    if summary_through >= 0:
        covered = [c for c in cells if c.run.first <= summary_through]
        last = covered[-1]
        # The reach ends inside a run only when the run straddles it (then proportionally).
        share = (min(summary_through, last.run.last) - last.run.first + 1) / (
            last.run.last - last.run.first + 1)
        reach = (0.0, round(last.x + last.width * share, 2))
    label = f"the summary covers turns 1–{summary_through + 1}" if reach else ""
    return Strip(cells, reach, label)
