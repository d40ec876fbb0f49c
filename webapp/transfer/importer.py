"""Import a conversation: read the file, check all of it against the schema, then write it at once.

A refusal names the turn and the field in one line, and nothing is written. A plain transcript
(a list of {role, content}) may open with the assistant speaking: those messages become a first
turn whose question is empty, so every turn still starts with one user message.
"""
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pydantic import ValidationError
from sqlalchemy import insert

from ..titles import short_title
from ..extensions import db
from ..pacing import Pace
from ..llm import ROLES, compact_turn, final_answer, estimate_messages
from ..context import store_texts, text_hash
from ..context.summary.models import ConversationSummary
from ..models import Conversation, Turn, TurnAlternative, User, utcnow
from .export import READS
from .memories import import_memories
from .schema import (NEUTRAL_KEYS, ConversationExport, PlainMessage, TurnRecord, bounded_text,
                     to_utc)

WRITE_BATCH = 50  # conversations written with one flush and one insert of their turns
# Turns written in one transaction: 0.3 ms or more each on SQLite with their keyword index. A
# chat's write that arrives mid-batch waits for the whole batch (pacing.py rests only between
# batches), so a commit holds the write lock some 20 ms, not a tenth of a second:
# bench/import_under_load.py, chatters' first-token p95 while importing 1,170 ms at 250 turns a
# commit, 621-1,068 ms at 60 (five runs), the imports taking 238-461 s beside the chats.
TURNS_PER_COMMIT = 60
HIDDEN_FOR = timedelta(minutes=30)  # a conversation written in parts is hidden this long ahead
TITLE_CHARS = 200


class InvalidImport(ValueError):
    """The file is not a conversation we can import; the text says why, in one line."""


def where(loc, plain: bool = False, origins=None) -> str:
    """A schema location in people's words: ('turns', 2, 'messages', 0, 'user', 'content') ->
    'turn 3, message 1, content'."""
    parts, loc = [], list(loc)
    if plain and loc and isinstance(loc[0], int):
        parts.append(f"message {loc.pop(0) + 1}")
    while loc:
        name = loc.pop(0)
        index = loc.pop(0) if loc and isinstance(loc[0], int) else None
        if name in ("turns", "messages") and index is not None:
            parts.append(f"{name[:-1]} {index + 1}")
            if loc and loc[0] in ROLES:
                loc.pop(0)  # the discriminator's tag
        elif isinstance(name, int):
            parts.append(f"[{name}]")
        else:
            field = f"{name}[{index}]" if index is not None else str(name)
            if parts and not parts[-1].startswith(("turn ", "message ")):
                parts[-1] += "." + field
            else:
                parts.append(field)
    return ", ".join(parts) or "the file"


def reason(error: ValidationError, prefix: str = "", plain: bool = False, skip: int = 0) -> str:
    """The first problem pydantic found, as one line naming the turn (or message) and the field;
    `skip` drops the start of its location that `prefix` already names."""
    problem = error.errors(include_url=False)[0]
    message = problem["msg"].removeprefix("Value error, ")
    value = problem.get("input")
    if problem["type"] not in ("missing", "value_error") and isinstance(value, (str, int, float)):
        message += f" (got {json.dumps(value)[:40]})"
    loc = list(problem["loc"][skip:])
    if skip and loc and loc[0] in ROLES:
        loc.pop(0)  # the discriminator's tag
    place = where(loc, plain)
    place = f"{prefix}, {place}" if prefix and place != "the file" else (prefix or place)
    return f"{place}: {message}"


@dataclass
class Checked:
    """One conversation of a file, checked and ready to write."""
    turns: list[TurnRecord]
    raw: list[dict]  # the turns' records as the file gave them (messages in the neutral format)
    meta: ConversationExport | None = None
    title: str | None = None
    created_at: datetime | None = None
    instructions: str | None = None
    label: str = ""  # how errors and progress name it: "conversation 3 ('Trip to Lyon')"
    updated_at: datetime | None = None  # its last message's time, when the file gives one
    left_out: int = 0  # messages on branches other than the active one, not imported
    notes: list[str] = field(default_factory=list)  # what was read otherwise than written, in words
    pinned: bool = False  # the app showed it pinned (Open WebUI's `pinned`)
    archived: bool = False  # the app had archived it (Open WebUI's `archived`, ChatGPT's `is_archived`)
    source: str = ""  # its id in the app it came from ("chatgpt:…"): sources.py
    # A Nimbus export's versions of turns not shown, as the file gave them (version 5).
    extra_alternatives: list[dict] = field(default_factory=list)
    # A chat app's other branches: (the turn where each leaves this path, its whole transcript).
    versions: list = field(default_factory=list)


def plain_turns(messages: list[tuple[str, dict]]) -> tuple[list[dict], list[str]]:
    """A transcript's (origin, message) pairs as turn records, and its system messages' texts.

    `origin` names the message in the file ("message 4"). Opening assistant messages get an
    empty question; a system message becomes the conversation's instructions, not a turn; an
    assistant message without words or calls is none, so its question stays unanswered."""
    records: list[dict] = []
    instructions: list[str] = []
    for origin, item in messages:
        try:
            message = PlainMessage.model_validate(item)
        except ValidationError as error:
            raise InvalidImport(reason(error, origin)) from None
        if message.role == "system":
            text = item.get("content")
            if not isinstance(text, str):
                raise InvalidImport(f"{origin}, content: a system message's content must be text")
            if text.strip():
                instructions.append(text.strip())
            continue
        if message.role == "assistant" and not item.get("tool_calls") and \
                not (item.get("content") or "").strip():
            continue  # an empty reply (a training set's missing turn) is no answer
        if message.role == "user" or not records:
            records.append({"messages": [], "origins": []})
            if message.role != "user":
                records[-1]["messages"].append({"role": "user", "content": ""})
                records[-1]["origins"].append(origin)
        records[-1]["messages"].append({k: item[k] for k in NEUTRAL_KEYS[message.role] if k in item})
        records[-1]["origins"].append(origin)
        if message.created_at and "created_at" not in records[-1]:
            records[-1]["created_at"] = item["created_at"]
        if message.created_at:
            records[-1]["last_at"] = to_utc(message.created_at)
    return records, instructions


def check_transcript(messages: list[tuple[str, dict]], label: str = "", title=None,
                     created_at=None) -> Checked:
    """Check a transcript (see plain_turns) turn by turn; errors name the file's own message."""
    prefix = f"{label}, " if label else ""
    raw, instructions = plain_turns([(prefix + origin, m) for origin, m in messages])
    if not raw:
        raise InvalidImport(f"{label or 'the conversation'} has no messages")
    turns = []
    times = [t for t in (record.pop("last_at", None) for record in raw) if t]
    for n, record in enumerate(raw, 1):
        origins = record.pop("origins")
        try:
            turns.append(TurnRecord.model_validate(record))
        except ValidationError as error:
            loc = error.errors()[0]["loc"]
            if len(loc) > 1 and loc[0] == "messages":  # name the file's own message
                raise InvalidImport(reason(error, origins[loc[1]], skip=2)) from None
            raise InvalidImport(reason(error, f"{prefix}turn {n} (from {origins[0]})")) from None
    text = "\n\n".join(instructions)
    try:
        bounded_text(text)
    except ValueError as error:
        raise InvalidImport(f"{prefix}the system messages: {error}") from None
    return Checked(turns, raw, title=title, created_at=to_utc(created_at) if created_at else None,
                   instructions=text or None, label=label, updated_at=max(times, default=None))


def check_nimbus(data: dict) -> Checked:
    """Validate a Nimbus export (webapp/transfer/export.py writes it)."""
    if data.get("version") not in READS:
        raise InvalidImport(f"unsupported version {data.get('version')!r} (expected one of "
                            f"{', '.join(map(str, READS))})")
    try:
        meta = ConversationExport.model_validate(data)
    except ValidationError as error:
        raise InvalidImport(reason(error)) from None
    return Checked(meta.turns, data["turns"], meta, meta.title, meta.created_at, meta.instructions,
                   source=f"nimbus:{meta.id}" if meta.id and len(meta.id) <= 90 else "",
                   extra_alternatives=data.get("alternatives") or [])


def import_all(checked: list[Checked], user: User, progress=None) -> list[Conversation]:
    """Store every checked conversation for `user` in one commit; `progress(turns)` is called
    after each conversation with how many turns it held."""
    try:
        conversations = []
        for start in range(0, len(checked), WRITE_BATCH):
            batch = checked[start:start + WRITE_BATCH]
            conversations += write_many(batch, user)
            if progress:
                progress(sum(len(one.turns) for one in batch))
        db.session.commit()
    except BaseException:
        db.session.rollback()
        raise
    return conversations


def queue_vectors(conversations: list[Conversation], config) -> bool:
    """Similarity search needs the imported turns' and memories' vectors: one background job for
    the whole import, in batches (a job per conversation was a queue commit each: 25,000 jobs for
    one export); False when search is off and none are needed."""
    if not config.get("NIMBUS_MEMORY_SEARCH"):
        return False
    if conversations:
        from ..jobs import enqueue
        from ..memories import embed_import_job
        enqueue(embed_import_job, [conversation.id for conversation in conversations])
    return True


def write(checked: Checked, user: User) -> Conversation:
    """Add what `parse` checked as a new conversation of `user` (the caller commits)."""
    return write_many([checked], user)[0]


def write_many(checked: list[Checked], user: User) -> list[Conversation]:
    """Add what `parse` checked as new conversations of `user` with one flush and one insert of
    all their turns: per conversation, the ORM's round trips cost more than the rows (the caller
    commits)."""
    built = [conversation_of(one, user) for one in checked]
    db.session.add_all(conversation for conversation, _ in built)
    db.session.flush()
    # One executemany, not one ORM object per turn: a 10,000-turn export is written in seconds.
    db.session.execute(insert(Turn), [{**row, "conversation_id": conversation.id}
                                      for conversation, rows in built for row in rows])
    for one, (conversation, _) in zip(checked, built):
        add_extras(one, conversation, user)
    return [conversation for conversation, _ in built]


def write_in_parts(checked: Checked, user: User, pace: Pace | None = None) -> Conversation:
    """Store a conversation of more than TURNS_PER_COMMIT turns in commits of that many, so the
    write lock is never held for long. It stays hidden (deleted_at ahead of now, renewed with
    each part) until its last part: nobody sees it half written, and a worker that dies midway
    leaves it to the deletion sweep, so a retry stores it again whole."""
    conversation, rows = conversation_of(checked, user)
    updated_at = conversation.updated_at
    try:
        for start in range(0, len(rows), TURNS_PER_COMMIT):
            conversation.deleted_at = utcnow() + HIDDEN_FOR
            if start == 0:
                db.session.add(conversation)
                db.session.flush()
            db.session.execute(insert(Turn), [{**row, "conversation_id": conversation.id}
                                              for row in rows[start:start + TURNS_PER_COMMIT]])
            db.session.commit()
            if pace is not None:
                pace.batch_done()
        add_extras(checked, conversation, user)
        conversation.deleted_at, conversation.updated_at = None, updated_at
        db.session.flush()
    except BaseException:
        db.session.rollback()
        raise
    return conversation


IMPORTED = " (imported)"


def not_after(moment: datetime | None, now: datetime) -> datetime | None:
    """A date from the file, never later than the import: feedback dated 2099 would sort first
    for ever and a transcript dated 9000 would never be purged."""
    return min(moment, now) if moment is not None else None


def as_imported(name: str) -> str:
    """A name the file gives for who pinned or edited something: it is the file's claim, not an
    act of this shop's staff, and is shown so ("Demo admin (imported)")."""
    name = (name or "").strip()
    return name if not name or name.endswith(IMPORTED) else name[:200 - len(IMPORTED)] + IMPORTED


def conversation_of(checked: Checked, user: User) -> tuple[Conversation, list[dict]]:
    """The new conversation's row and its turns' rows, not yet added."""
    meta, turns, raw = checked.meta, checked.turns, checked.raw
    first_question = next((t.messages[0].content for t in turns if t.messages[0].content), "")
    title = " ".join(checked.title.split())[:TITLE_CHARS] if checked.title else ""
    # No title of its own: the gist of the first question, as a chat started here is titled.
    title = title or (short_title(first_question) if first_question else "Imported conversation")
    conversation = Conversation(
        tenant_id=user.tenant_id, user_id=user.id, title=title,
        strategy=meta.strategy if meta else "compact",
        settings=meta.settings.model_dump(exclude_unset=True) if meta else {},
        instructions=checked.instructions, import_key=checked.source or None)
    now = conversation.imported_at = utcnow()
    rows = [turn_row(one, record, seq, now, bool(meta))
            for seq, (one, record) in enumerate(zip(turns, raw))]
    conversation.has_marks = any(one.mark for one in turns)
    conversation.turn_count = len(turns)
    conversation.history_tokens = sum(t["full_tokens"] for t in rows)
    created = not_after(checked.created_at or turns[0].created_at, now)
    if created:
        conversation.created_at = created
    # The sidebar files a conversation by its last activity: the file's, not the import's.
    dates = [not_after(checked.updated_at, now), created,
             *(not_after(t.created_at, now) for t in turns)]
    conversation.updated_at = max((d for d in dates if d), default=now)
    # Where the app kept it: archived, or pinned (never both here, as in the sidebar's menus).
    if checked.archived:
        conversation.archived_at = conversation.updated_at
    elif checked.pinned:
        conversation.pinned_at = conversation.updated_at
    return conversation, rows


def turn_row(one: TurnRecord, record: dict, seq: int, now: datetime, nimbus: bool) -> dict:
    """A turn's row from its checked record and the record as the file gave it."""
    messages = record["messages"]
    compact = compact_turn(messages)
    return dict(
        seq=seq, messages=messages, compact=compact, question=messages[0]["content"],
        answer=final_answer(messages), full_tokens=estimate_messages(messages),
        compact_tokens=estimate_messages(compact),
        tool_calls=sum(len(m.get("tool_calls") or []) for m in messages),
        outcome=one.outcome if nimbus or final_answer(messages) else "unanswered",
        trace=record.get("trace") or [],
        prompt_tokens=one.prompt_tokens, completion_tokens=one.completion_tokens,
        context_tokens=one.context_tokens, resend_tokens=one.resend_tokens,
        manifest=record.get("manifest"), created_at=not_after(one.created_at, now) or now,
        heartbeat_at=now, mark=one.mark,
        marked_by_name=as_imported(one.marked_by_name) if one.mark else "",
        marked_at=not_after(one.marked_at, now) if one.mark else None, feedback=one.feedback,
        feedback_comment=one.feedback_comment if one.feedback == "down" else "",
        feedback_at=(not_after(one.feedback_at, now) or now) if one.feedback else None)


def as_text(row: dict) -> dict:
    """A row as JSON keeps it: times as ISO text."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}


def kept_branch(alternative, raw: dict, now: datetime) -> dict:
    """A version from the file as webapp/branches.py keeps one: turn rows (new ids on the way
    back), the versions of its own turns, its summaries; times as ISO text."""
    text = as_text
    return {
        "turns": [text(turn_row(one, record, alternative.seq + i, now, True))
                  for i, (one, record) in enumerate(zip(alternative.turns, raw["turns"]))],
        "alternatives": [{"seq": inner.seq, "position": inner.position, "kind": inner.kind,
                          "branch": kept_branch(inner, inner_raw, now),
                          "created_at": now.isoformat()}
                         for inner, inner_raw in zip(alternative.alternatives,
                                                     raw.get("alternatives", []))],
        "summaries": [text({**s.model_dump(), "updated_at": now, "failed_at": None,
                            "failure": ""}) for s in alternative.summaries],
    }


def add_extras(checked: Checked, conversation: Conversation, user: User) -> None:
    """A Nimbus export's request texts, summaries and memories, once the conversation exists."""
    meta, turns = checked.meta, checked.turns
    texts = meta.request_texts if meta else {}
    # Only a text that matches its hash, so an import cannot make a turn claim it was sent.
    store_texts(conversation.id, {h: t for h, t in texts.items() if text_hash(t) == h})
    for record in (meta.summaries if meta else []):
        if record.through_seq < len(turns):  # a summary never covers turns the file lacks
            db.session.add(ConversationSummary(
                conversation_id=conversation.id, style=record.style, text=record.text,
                through_seq=record.through_seq, topics=record.topics,
                edited_by_name=as_imported(record.edited_by_name),
                edited_at=not_after(record.edited_at, conversation.imported_at)))
    for alternative, raw in zip(meta.alternatives if meta else [], checked.extra_alternatives):
        db.session.add(TurnAlternative(conversation_id=conversation.id, seq=alternative.seq,
                                       position=alternative.position, kind=alternative.kind,
                                       branch=kept_branch(alternative, raw, utcnow())))
    places: dict[int, int] = {}
    for seq, other in checked.versions:  # a chat app's other branches, each where it leaves
        places[seq] = places.get(seq, 0) + 1
        same = other.raw[seq]["messages"][0] == checked.raw[seq]["messages"][0]
        db.session.add(TurnAlternative(
            conversation_id=conversation.id, seq=seq, position=places[seq],
            kind="answer" if same else "question",
            branch={"turns": [as_text(turn_row(one, record, seq + i, utcnow(), False))
                              for i, (one, record) in enumerate(zip(other.turns[seq:],
                                                                    other.raw[seq:]))],
                    "alternatives": [], "summaries": []}))
    if meta and meta.memories:
        import_memories(meta.memories, conversation, user, len(turns))
