"""The chat's quiet notes where the request started sending less: turns that left the history
since the previous reply's request, summarized or dropped, and pins that no longer fit.

Derived only from the stored request manifests (webapp/context/manifest.py) of a turn and the
one before it, so a note sits at the reply where the change happened, says what the viewer's
fates say, and is the same on every reload.
"""
from dataclasses import dataclass, field

from flask import g
from sqlalchemy import select

from ..extensions import db
from ..models import Turn

SUMMARIZED, DROPPED, EXCLUDED = "SUMMARIZED", "DROPPED", "EXCLUDED"


@dataclass
class TrimNote:
    seq: int  # the turn whose request first sent less
    summarized_through: int = -1  # the summary's reach in that request, when it grew
    summarized: list[int] = field(default_factory=list)  # turns that left for the summary
    dropped: list[int] = field(default_factory=list)  # turns that left, in nobody's words
    pins_unfit: list[int] = field(default_factory=list)  # pinned turns no longer sent

    @property
    def pieces(self) -> list[list[tuple[str, int | None]]]:
        """Exactly the turns that changed here, as (words, turn seq to link or None): a change
        noted at one reply is never noted again."""
        pieces = []
        if self.summarized:
            verb = "is" if len(self.summarized) == 1 else "are"
            pieces.append(turns_linked(self.summarized) + [(f" {verb} now summarized", None)])
        if self.dropped:
            pieces.append(turns_linked(self.dropped) + [(" dropped", None)])
        for seq in self.pins_unfit:
            pieces.append([("pinned turn ", None), (f"{seq + 1}", seq), (" no longer fits", None)])
        return pieces

    @property
    def parts(self) -> list[str]:
        return ["".join(words for words, _ in piece) for piece in self.pieces]

    @property
    def text(self) -> str:
        return " · ".join(self.parts)


def turn_runs(seqs: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for seq in sorted(set(seqs)):
        if runs and seq == runs[-1][-1] + 1:
            runs[-1].append(seq)
        else:
            runs.append([seq])
    return runs


def turns_linked(seqs: list[int]) -> list[tuple[str, int | None]]:
    """Turn numbers as a person writes them, each run linked to its first turn:
    "Turn 3", "Turns 1–4", "Turns 3, 5 and 7–9"."""
    names = [(f"{r[0] + 1}–{r[-1] + 1}" if len(r) > 2 else f"{r[0] + 1}", r[0]) for r in turn_runs(seqs)
             for r in ([r] if len(r) != 2 else [r[:1], r[1:]])]
    pieces: list[tuple[str, int | None]] = [("Turn " if len(set(seqs)) == 1 else "Turns ", None)]
    for index, name in enumerate(names):
        if index:
            pieces.append((" and " if index == len(names) - 1 else ", ", None))
        pieces.append(name)
    return pieces


def turns_named(seqs: list[int]) -> str:
    """Turn numbers as a person writes them: "Turn 3", "Turns 1–4", "Turns 3, 5 and 7–9"."""
    return "".join(words for words, _ in turns_linked(seqs))


def history_seqs(manifest: dict) -> set[int]:
    history = next((s for s in manifest.get("sections") or [] if s.get("name") == "history"), {})
    return {entry[0] for entry in history.get("turns") or []}


def summary_through(manifest: dict) -> int:
    summary = next((s for s in manifest.get("sections") or [] if s.get("name") == "summary"), {})
    return summary.get("through_seq", -1) if summary else -1


def fate_in(manifest: dict, seq: int) -> tuple[str, str]:
    """A turn's fate in a request, as assemble() decided it (context.py's rules for older turns)."""
    for entry in (*(manifest.get("marks") or []), *(manifest.get("fates") or [])):
        if entry[0] == seq:
            return entry[1], entry[2]
    fate, reason = manifest.get("older") or (DROPPED, "")
    if fate == DROPPED and seq <= summary_through(manifest):
        return SUMMARIZED, reason
    return fate, reason


def note_between(previous: dict | None, manifest: dict | None, seq: int) -> TrimNote | None:
    """What turn `seq`'s request stopped sending that the previous request sent."""
    if not previous or not manifest or not isinstance(manifest.get("sections"), list):
        return None
    left = sorted(history_seqs(previous) - history_seqs(manifest))
    note = TrimNote(seq, summary_through(manifest))
    for gone in left:
        fate, reason = fate_in(manifest, gone)
        if fate == SUMMARIZED:
            note.summarized.append(gone)
        elif fate == DROPPED and reason.startswith("pinned"):
            note.pins_unfit.append(gone)
        elif fate == DROPPED:
            note.dropped.append(gone)
        # EXCLUDED: the person chose it; a note would only repeat their click
    sent_before, through_before = history_seqs(previous), summary_through(previous)
    for seq_now in range(through_before + 1, note.summarized_through + 1):
        # dropped earlier while the summary was behind, now folded in at last
        if seq_now not in sent_before and fate_in(previous, seq_now)[0] == DROPPED \
                and fate_in(manifest, seq_now)[0] == SUMMARIZED:
            note.summarized.append(seq_now)
    return note if note.parts else None


def manifest_before(turn: Turn) -> dict | None:
    return db.session.scalar(select(Turn.manifest).where(
        Turn.conversation_id == turn.conversation_id, Turn.seq == turn.seq - 1))


def trim_note(turn: Turn) -> TrimNote | None:
    """The note to show above `turn`, if any: pages render turns oldest first, so the previous
    manifest is usually at hand and only a page's first turn costs a lookup."""
    user = g.get("user")
    if (user is not None and not user.trim_notes) or turn.seq == 0 or not turn.manifest:
        return None
    seen = g.setdefault("trim_manifests", {})
    seen.setdefault(turn.conversation_id, {})
    manifests = seen[turn.conversation_id]
    manifests[turn.seq] = turn.manifest
    if turn.seq - 1 not in manifests:
        manifests[turn.seq - 1] = manifest_before(turn)
    return note_between(manifests[turn.seq - 1], turn.manifest, turn.seq)


def init_app(app) -> None:
    app.jinja_env.globals["trim_note"] = trim_note
