"""assemble()'s verdict on every turn of a conversation, at any length: the turns it read one by
one, every older turn as one or two runs (the summary's reach splits them), and the overlap —
turns the history still sends that the rolling summary covers too.
"""
from collections import Counter
from dataclasses import dataclass

from ..context import KEPT, ContextPlan
from .series import finished_before, newest_finished

ALSO_IN_SUMMARY = "also in the summary"


@dataclass
class FateRun:
    """Consecutive turns (seqs first..last) that share a fate and reason."""
    first: int
    last: int
    fate: str
    reason: str
    in_summary: bool = False  # sent by the history and covered by the summary as well

    @property
    def label(self) -> str:
        turns = (f"turn {self.first + 1}" if self.first == self.last
                 else f"turns {self.first + 1}–{self.last + 1}")
        also = f" · {ALSO_IN_SUMMARY}" if self.in_summary else ""
        return f"{turns}: {self.fate}{also} ({self.reason})"


class Fates:
    """Fates looked up by seq, runs for the strip and counts, none of it a scan of every turn."""

    def __init__(self, plan: ContextPlan, conversation_id: str):
        self.plan, history = plan, plan.history
        self.read = {f.seq: f for f in history.fates}
        self.marks = history.marks  # pinned and left-out turns, at any age
        self.through = history.summarized_through if history.uses_summary else -1
        self.first_read = min(self.read, default=None)
        if self.first_read is None:  # nothing read: every finished turn is older, or marked
            self.first_read = newest_finished(conversation_id) + 1 or None
        self.conversation_id = conversation_id

    def planned(self, seq: int):
        return self.read.get(seq) or self.marks.get(seq)

    def of(self, seq: int) -> tuple[str, str]:
        read = self.planned(seq)
        return (read.fate, read.reason) if read else self.plan.fate_of(seq)

    def sent(self, seq: int) -> tuple[list[dict], int]:
        read = self.planned(seq)
        return (read.messages, read.tokens) if read and read.messages else ([], 0)

    def in_summary(self, seq: int) -> bool:
        read = self.planned(seq)
        return bool(read and read.fate in KEPT and seq <= self.through)

    def overlap(self) -> list:
        """Turns sent twice: in the history and, in other words, inside the summary."""
        return [f for f in self.plan.history.kept() if f.seq <= self.through]

    def runs(self) -> list[FateRun]:
        if self.first_read is None:
            return []
        runs: list[FateRun] = []
        cut = min(self.through, self.first_read - 1)
        for first, last in ((0, cut), (cut + 1, self.first_read - 1)):
            if first > last:
                continue
            fate = self.plan.history.fate_of_older(first)
            for seq in sorted(s for s in self.marks if first <= s <= last):  # marks split runs
                if first < seq:
                    self.extend(runs, FateRun(first, seq - 1, *fate))
                self.mark_run(runs, seq)
                first = seq + 1
            if first <= last:
                self.extend(runs, FateRun(first, last, *fate))
        for seq in sorted({*self.read, *(s for s in self.marks if s >= self.first_read)}):
            self.mark_run(runs, seq)
        return runs

    def mark_run(self, runs: list[FateRun], seq: int) -> None:
        f = self.planned(seq)
        self.extend(runs, FateRun(seq, seq, f.fate, f.reason, self.in_summary(seq)))

    @staticmethod
    def extend(runs: list[FateRun], run: FateRun) -> None:
        last = runs[-1] if runs else None
        if last and (last.fate, last.reason, last.in_summary) == (run.fate, run.reason,
                                                                  run.in_summary):
            last.last = run.last
        else:
            runs.append(run)

    def counts(self) -> dict[str, int]:
        """Finished turns per fate: the turns read, plus the older ones counted in SQL."""
        counts = Counter(f.fate for f in (*self.read.values(), *self.marks.values()))
        if self.first_read:
            older, covered = finished_before(self.conversation_id, self.first_read, self.through)
            older_marks = [s for s in self.marks if s < self.first_read]  # counted above
            covered -= sum(1 for s in older_marks if s <= self.through)
            older -= len(older_marks)
            for count, seq in ((covered, 0), (older - covered, self.first_read - 1)):
                if count:
                    counts[self.plan.history.fate_of_older(seq)[0]] += count
        return dict(counts)
