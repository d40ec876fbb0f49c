"""A past turn's request as it was sent, rebuilt from its manifest: the texts by their hashes,
the history turns from their stored forms, each model call's own messages from the turn.

Nothing is re-assembled under today's state, so a summary or memory block that changed since
still shows as it was; a history turn that was edited since, or a text blanked when a customer's
data was deleted, is named, not silently shown as sent.
"""
from dataclasses import dataclass, field

from sqlalchemy import select

from ..extensions import db
from ..context import messages_hash, text_hash
from ..models import RequestText, Turn
from .report import SECTION_TITLES


@dataclass
class SentSection:
    name: str
    title: str
    tokens: int
    messages: list[dict]
    detail: dict  # memory_ids, through_seq, style, turns: what the manifest says of it


@dataclass
class SentCall:
    step: int
    messages: list[dict]  # exactly what the provider received, in the neutral format
    estimated_tokens: int
    prompt_tokens: int | None
    own: int = 0  # how many of the messages are the turn's own (question, tool steps so far)

    @property
    def turn_messages(self) -> list[dict]:
        return self.messages[len(self.messages) - self.own:]


@dataclass
class AsSent:
    seq: int
    manifest: dict
    sections: list[SentSection] = field(default_factory=list)
    calls: list[SentCall] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def number(self) -> int:
        return self.seq + 1

    @property
    def prefix_length(self) -> int:
        return sum(len(s.messages) for s in self.sections)


def texts_of(conversation_id: str, hashes: set[str]) -> dict[str, str]:
    return dict(db.session.execute(select(RequestText.hash, RequestText.text).where(
        RequestText.conversation_id == conversation_id, RequestText.hash.in_(hashes))).all())


def history_messages(conversation_id: str, entry: dict, problems: list[str]) -> list[dict]:
    seqs = [seq for seq, _, _ in entry["turns"]]
    rows = {row.seq: row for row in db.session.execute(
        select(Turn.seq, Turn.messages, Turn.compact).where(
            Turn.conversation_id == conversation_id, Turn.seq.in_(seqs)))}
    messages = []
    for seq, form, digest in entry["turns"]:
        row = rows.get(seq)
        sent = (row.messages if form == "full" else row.compact) if row else []
        if row is None or messages_hash(sent) != digest:
            problems.append(f"turn {seq + 1} reads differently now than when it was sent")
        messages.extend(sent)
    return messages


def rebuild(turn: Turn) -> AsSent | None:
    """The messages of every model call of `turn`; None for a turn recorded without a manifest."""
    manifest = turn.manifest
    if not manifest or not isinstance(manifest.get("sections"), list):
        return None
    result = AsSent(turn.seq, manifest)
    hashes = {m["hash"] for s in manifest["sections"] for m in s.get("messages", [])}
    texts = texts_of(turn.conversation_id, hashes)
    for entry in manifest["sections"]:
        if entry["name"] == "history":
            messages = history_messages(turn.conversation_id, entry, result.problems)
        else:
            messages = []
            for m in entry.get("messages", []):
                if m["hash"] not in texts:
                    result.problems.append(f"the {entry['name']} text of this turn is missing")
                elif text_hash(texts[m["hash"]]) != m["hash"]:
                    result.problems.append(f"the {entry['name']} text of this turn was changed "
                                           "after it was sent: a deleted customer's memory is "
                                           "blanked in it")
                rest = {k: v for k, v in m.items() if k != "hash"}
                messages.append({**rest, "content": texts.get(m["hash"], "")})
        title = SECTION_TITLES.get(entry["name"], entry["name"].replace("_", " ").capitalize())
        detail = {k: v for k, v in entry.items() if k not in ("name", "tokens", "messages")}
        result.sections.append(SentSection(entry["name"], title, entry.get("tokens", 0),
                                           messages, detail))
    prefix = [m for s in result.sections for m in s.messages]
    for step, call in enumerate(manifest.get("calls") or [], 1):
        own = turn.messages[:call["messages"]]
        result.calls.append(SentCall(step, prefix + own, call.get("estimated_tokens", 0),
                                     call.get("prompt_tokens"), len(own)))
    return result
