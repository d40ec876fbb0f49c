"""Import files record by record: each readable conversation is stored on its own, and each one
that cannot be read is skipped with one line naming it, so one bad record never costs the rest.

`strict` keeps the all-or-nothing import: the first problem refuses every file and stores nothing.
"""
import io
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field, replace

from ..extensions import db
from ..models import Conversation, User
from ..pacing import Pace
from ..plurals import plural
from .formats import parse, read_each
from .importer import (TURNS_PER_COMMIT, WRITE_BATCH, Checked, InvalidImport, write_in_parts,
                       write_many)
from .loading import load
from .sources import not_yet_imported
from .streaming import records


@dataclass(frozen=True)
class Imported:
    """What is shown of a stored conversation, read before its batch's commit expires the row
    (reading it back after would cost a query per conversation)."""
    id: str
    title: str
    turn_count: int

    @classmethod
    def of(cls, conversation: Conversation) -> "Imported":
        return cls(conversation.id, conversation.title, conversation.turn_count)


@dataclass
class ImportResult:
    """What an import stored and what it skipped, in the words the CLI and the page show."""
    conversations: list[Imported] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "conversation 3 (…): … — skipped"
    left_out: int = 0  # messages on inactive branches (retries, edits) not imported
    notes: list[str] = field(default_factory=list)  # a conversation read otherwise than written
    already: int = 0  # conversations the owner had imported before (or twice in the files)
    withheld: str = ""  # what a staff import was not allowed to write, in words
    personal: dict = field(default_factory=dict)  # {"instructions": n, "memories": n} written

    def count(self, stored: list) -> None:
        """Add what the stored conversations left out and the notes on how they were read."""
        self.left_out += sum(one.left_out for one in stored)
        self.notes += [line for one in stored for line in one.notes]

    def to_json(self) -> dict:
        """What the page shows of it, stored with the import (webapp/transfer/jobs.py)."""
        return {"conversations": [[c.id, c.title, c.turn_count] for c in self.conversations],
                "skipped": self.skipped, "left_out": self.left_out, "notes": self.notes,
                "already": self.already, "withheld": self.withheld, "personal": self.personal}

    @classmethod
    def from_json(cls, data: dict) -> "ImportResult":
        return cls([Imported(*one) for one in data.get("conversations", [])],
                   **{key: data[key] for key in ("skipped", "left_out", "notes", "already",
                                                 "withheld", "personal") if key in data})

    @property
    def turns(self) -> int:
        return sum(c.turn_count for c in self.conversations)

    @property
    def summary(self) -> str:
        n, s = len(self.conversations), len(self.skipped)
        if n == 0 and self.already:
            text = "Nothing new to import"
        else:
            text = f"Imported {plural(n, 'conversation')} ({plural(self.turns, 'turn')})"
        if self.already:
            text += f"; {plural(self.already, 'conversation')} " \
                    f"{'was' if self.already == 1 else 'were'} already imported: skipped"
        text += f"; skipped {s} that could not be read" if s else ""
        if self.left_out:
            text += f"; left out {self.left_out} message{'' if self.left_out == 1 else 's'} " \
                    "on other branches"
        return text + "."


def read_files(files: list[tuple[str, bytes]], fmt: str = "auto", strict: bool = False,
               progress=None) -> tuple[list[Checked], list[str]]:
    """Check every (name, content) file; returns the conversations to store and the skipped
    lines. Refuses (InvalidImport) when strict and anything is wrong, or when nothing is readable.

    `progress(name, data)`, if given, is a context manager around checking one loaded file that
    yields the callback parse calls per conversation (or None)."""
    checked, skipped = [], []
    many = len(files) > 1
    for name, raw in files:
        lines: list[str] = []
        try:
            data = load(raw, strict)
            with progress(name, data) if progress else nullcontext() as update:
                checked += parse(data, fmt, update, None if strict else lines)
        except InvalidImport as error:
            if strict:
                raise InvalidImport(f"{name}: {error}" if many else str(error)) from None
            lines.append(f"{error} — skipped")
        skipped += [f"{name}: {line}" for line in lines] if many else lines
    if not checked:
        if len(skipped) == 1:
            raise InvalidImport(skipped[0].removesuffix(" — skipped"))
        raise InvalidImport(f"none of the {len(files)} files could be read: " + "; ".join(
            line.removesuffix(" — skipped") for line in skipped))
    return checked, skipped


def import_each(checked: list[Checked], user: User, progress=None, stored=None) -> ImportResult:
    """Store the checked conversations, committing between them every WRITE_BATCH, so each is
    stored whole or not at all and a failure keeps those committed before it; `progress(turns)`
    and `stored(conversations)` are called after each batch's commit. Everything that can refuse a conversation was checked before:
    writing it cannot. (A commit per conversation would spend most of the import on fsync.)"""
    result, pace = ImportResult(), Pace()
    try:
        for start in range(0, len(checked), WRITE_BATCH):
            batch = checked[start:start + WRITE_BATCH]
            result.conversations += map(Imported.of, write_many(batch, user))
            result.count(batch)
            db.session.commit()
            pace.batch_done()
            if progress:
                progress(sum(len(one.turns) for one in batch))
            if stored:
                stored(len(batch))
    except BaseException:
        db.session.rollback()
        raise
    return result


def import_files(files: list[tuple[str, bytes | str | Callable]], user: User, fmt: str = "auto",
                 strict: bool = False, personal: bool = True, checking=None,
                 stored=None) -> ImportResult:
    """Read and store `files` (name, content, a path or a function opening it) for `user`: record by record, or
    (strict) all or nothing; without `personal` (staff importing for a customer) the files'
    instructions and memories are left out. `checking` is read_files' `progress`, `stored`
    import_each's (the import job's progress).

    Each file is streamed (streaming.py): conversations are read, checked and stored a batch at
    a time, so memory holds one batch, not the file. Strict reads every file through first,
    storing nothing, so its first problem still refuses them all before anything is written."""
    files = [(name, opener_of(content)) for name, content in files]
    if strict:
        for name, opener in files:  # the check, storing nothing
            for _ in read_file(name, opener, fmt, True, None, len(files) > 1, checking):
                pass
        checking = None  # counted once
    writer = Writer(user, personal, strict, stored)
    skipped: list[str] = []
    for name, opener in files:
        lines: list[str] = []
        for one in read_file(name, opener, fmt, strict, lines, len(files) > 1, checking):
            writer.add(one)
        skipped += [f"{name}: {line}" for line in lines] if len(files) > 1 else lines
    if not writer.read:
        if len(skipped) == 1:
            raise InvalidImport(skipped[0].removesuffix(" — skipped"))
        raise InvalidImport(f"none of the {len(files)} files could be read: " + "; ".join(
            line.removesuffix(" — skipped") for line in skipped))
    result = writer.finish()
    result.skipped[:0] = skipped
    return result


def opener_of(content: bytes | str):
    """A function opening the file anew each time (the stream is read twice); given one, it."""
    if callable(content):
        return content
    if isinstance(content, (bytes, bytearray)):
        return lambda: io.BytesIO(content)
    return lambda: open(content, "rb")


def read_file(name: str, opener, fmt: str, strict: bool, lines: list[str], many: bool,
              progress=None):
    """One file's conversations as each is checked; a file refused adds its line to `lines`
    (strict: raises, naming the file when there are several)."""
    try:
        data = records(opener, strict)
        with progress(name, data) if progress else nullcontext() as update:
            yield from read_each(data, fmt, update, None if strict else lines)
    except InvalidImport as error:
        if strict:
            raise InvalidImport(f"{name}: {error}" if many else str(error)) from None
        lines.append(f"{error} — skipped")


class Writer:
    """Stores checked conversations a batch at a time (WRITE_BATCH conversations or
    TURNS_PER_COMMIT turns), each batch one short commit, or (strict) all in one; one longer
    than a batch is written in parts (importer.write_in_parts)."""

    def __init__(self, user: User, personal: bool, strict: bool, stored=None):
        self.user, self.personal, self.strict, self.stored = user, personal, strict, stored
        self.result, self.waiting, self.read, self.seen = ImportResult(), [], 0, set()
        self.would = {"instructions": 0, "memories": 0}
        self.pace = Pace()  # between batches, rests while replies are being written

    def add(self, one: Checked) -> None:
        self.read += 1
        self.waiting.append(one)
        # A conversation's row costs about what a turn's does.
        if len(self.waiting) >= WRITE_BATCH or \
                sum(len(c.turns) + 1 for c in self.waiting) >= TURNS_PER_COMMIT:
            self.flush()

    def flush(self) -> None:
        batch, self.waiting = self.waiting, []
        fresh, already = not_yet_imported(batch, self.user, self.seen)
        self.result.already += already
        counts = personal_counts(fresh)
        self.would = {key: self.would[key] + counts[key] for key in counts}
        if not self.personal and any(counts.values()):
            fresh = [replace(one, instructions=None, meta=one.meta and one.meta.model_copy(
                update={"memories": []})) for one in fresh]
        if not fresh:
            return
        try:
            if self.strict or len(fresh) > 1 or len(fresh[0].turns) <= TURNS_PER_COMMIT:
                written = write_many(fresh, self.user)
            else:
                written = [write_in_parts(fresh[0], self.user, self.pace)]
            self.result.conversations += map(Imported.of, written)
            self.result.count(fresh)
            if not self.strict:
                db.session.commit()
                self.pace.batch_done()
        except BaseException:
            db.session.rollback()
            raise
        if self.stored and not self.strict:
            self.stored(len(fresh))

    def finish(self) -> ImportResult:
        self.flush()
        if self.strict:
            db.session.commit()
            if self.stored:
                self.stored(len(self.result.conversations))
        result, counts = self.result, self.would
        if not self.personal and any(counts.values()):
            result.withheld = (
                f"Left out {plural(counts['instructions'], 'conversation instruction')} and "
                f"{plural(counts['memories'], 'memory')}: only an admin may write a "
                f"customer's instructions and memories.")
            counts = dict.fromkeys(counts, 0)
        result.personal = counts
        return result


def personal_counts(checked: list[Checked]) -> dict:
    """How many conversation instructions and memories the files would write."""
    return {"instructions": sum(1 for one in checked if one.instructions),
            "memories": sum(len(one.meta.memories) for one in checked if one.meta and one.meta.memories)}
