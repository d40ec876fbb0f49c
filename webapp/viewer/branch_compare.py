"""Two versions of one turn side by side: the one shown and sent, and one kept (webapp/branches.py),
each with the request its turn received, rebuilt from its manifest, where the two differ, and
what the next request would carry on each branch."""
from dataclasses import dataclass

from sqlalchemy.exc import OperationalError

from .. import branches
from ..context import plan_request
from ..extensions import db
from ..security import whole_number
from ..storage import get_turn
from .as_sent import AsSent, rebuild


class BranchChoiceError(ValueError):
    """A turn or version that cannot be compared; the text says why."""


@dataclass
class BranchSide:
    position: int
    total: int
    active: bool
    turn: object  # a Turn; a kept version's is read from its branch and never in the session
    later: int  # how many turns its branch holds after this one
    sent: AsSent | None
    next_request: list[dict] | None = None  # before the question, with this branch chosen
    next_tokens: int | None = None

    @property
    def label(self) -> str:
        state = "shown, and sent from now on" if self.active else "not sent"
        return f"Version {self.position} of {self.total} — {state}"

    @property
    def request(self) -> list[dict] | None:
        """What the turn's first model call received, or None when none was recorded."""
        return self.sent.calls[0].messages if self.sent and self.sent.calls else None

    def payload(self) -> dict:
        first = self.sent.calls[0] if self.sent and self.sent.calls else None
        return {"version": self.position, "active": self.active, "question": self.turn.question,
                "answer": self.turn.answer, "later_turns": self.later,
                "request": self.request,
                "estimated_tokens": first.estimated_tokens if first else None,
                "problems": self.sent.problems if self.sent else [],
                "next_request": self.next_request, "next_tokens": self.next_tokens}


@dataclass
class BranchComparison:
    seq: int
    choices: dict[int, branches.Versions]  # every turn of the active path with versions, by seq
    shown: BranchSide
    kept: BranchSide

    @property
    def first_difference(self) -> int | None:
        """The first message (from 0) at which the two requests differ; None if they are the
        same or one of them was not recorded."""
        a, b = self.shown.request, self.kept.request
        if a is None or b is None or a == b:
            return None
        return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))

    @property
    def same_request(self) -> bool:
        return self.shown.request is not None and self.shown.request == self.kept.request

    def payload(self) -> dict:
        return {"turn": self.seq + 1, "shown": self.shown.payload(), "kept": self.kept.payload(),
                "same_request": self.same_request, "first_difference": self.first_difference}


def number_in(values, key: str) -> int | None:
    raw = values.get(key)
    if raw in (None, ""):
        return None
    number = whole_number(raw, 1)
    if number is None:
        raise BranchChoiceError(f"“{raw}” is not a {key} number")
    return number


def next_request(conversation, config, seq: int | None = None, position: int | None = None):
    """(messages, tokens) the next request carries before its question: on the path shown, or,
    with `seq` and `position`, on the path a switch to that version would make: the switch is
    done by branches.swap and planned by the one planner, then rolled back. (None, None) while
    a reply is written (no switch is allowed then)."""
    if seq is None:
        plan = plan_request(conversation, config)
        return [m for s in plan.sections for m in s.messages], plan.total_tokens
    if branches.answering(conversation.id):
        return None, None
    db.session.commit()  # what this request wrote so far (a staff reader's audit line) stays
    try:
        branches.swap(conversation, seq, position)
        plan = plan_request(conversation, config)
        return [m for s in plan.sections for m in s.messages], plan.total_tokens
    except OperationalError:  # SQLite's one writer stayed busy past its timeout: say nothing
        return None, None
    finally:
        db.session.rollback()


def compare_branches(conversation, values, config) -> BranchComparison | None:
    """Turn `turn` (from 1; the first with versions by default) as shown beside its version
    `version` (the first kept one by default); None when no turn has another version."""
    choices = branches.versions(conversation.id)
    if not choices:
        return None
    number, position = number_in(values, "turn"), number_in(values, "version")
    seq = min(choices) if number is None else number - 1
    versions = choices.get(seq)
    if versions is None:
        raise BranchChoiceError(f"turn {number} has no other version")
    position = versions.others()[0] if position is None else position
    if position == versions.active or position not in versions.others():
        raise BranchChoiceError(f"turn {number or seq + 1} has no kept version {position}: "
                                f"choose one of {', '.join(map(str, versions.others()))}")
    turn = get_turn(conversation, seq)
    kept = branches.kept_turn(conversation.id, seq, position)
    if turn is None or kept is None:  # changed since the versions were read
        raise BranchChoiceError("that turn changed meanwhile: reload the page")
    later = next(a.later for a in branches.alternatives_of(conversation.id, seq)
                 if a.position == position)
    shown = BranchSide(versions.active, versions.total, True, turn,
                       conversation.turn_count - seq - 1, rebuild(turn),
                       *next_request(conversation, config))
    other = BranchSide(position, versions.total, False, kept, later, rebuild(kept),
                       *next_request(conversation, config, seq, position))
    return BranchComparison(seq, choices, shown, other)
