"""Import a conversation: read the file, check all of it against the schema, then write it at once.

A refusal names the turn and the field in one line, and nothing is written. A plain transcript
(a list of {role, content}) may open with the assistant speaking: those messages become a first
turn whose question is empty, so every turn still starts with one user message.
"""
import json

from pydantic import ValidationError

from ..chat.titles import short_title
from ..extensions import db
from ..llm.messages import ROLES, compact_turn, final_answer
from ..llm.tokens import estimate_messages
from ..memory.manifest import store_texts, text_hash
from ..models import Conversation, Turn, User, utcnow
from .export import FORMAT, VERSION
from .schema import NEUTRAL_KEYS, ConversationExport, PlainMessage, TurnRecord

MAX_DEPTH = 40  # JSON nesting: a real export needs about 12
TITLE_CHARS = 200


class InvalidImport(ValueError):
    """The file is not a conversation we can import; the text says why, in one line."""


def load(raw: bytes | str):
    """Parse JSON text, refusing what no database stores: NUL, NaN, deep nesting, non-UTF-8."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        data = json.loads(text, parse_constant=refuse_constant, parse_float=finite_float)
    except UnicodeDecodeError:
        raise InvalidImport("the file is not UTF-8 text") from None
    except RecursionError:
        raise InvalidImport(f"the JSON is nested more than {MAX_DEPTH} levels deep") from None
    except json.JSONDecodeError as error:
        raise InvalidImport(f"not valid JSON: {error}") from None
    check_values(data)
    return data


def refuse_constant(name):
    raise InvalidImport(f"{name} is not a number that can be stored")


def finite_float(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):
        refuse_constant(text[:40])
    return number


def check_values(data) -> None:
    """Walk the whole document once, without recursion: bounded depth, no NUL in any text."""
    plain = isinstance(data, list)
    stack = [(data, ())]
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_DEPTH:
            raise InvalidImport(f"{where(path[:6], plain)}: nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            for key, item in value.items():
                if "\x00" in key:
                    raise InvalidImport(f"{where(path, plain)}: a key contains a NUL character")
                stack.append((item, (*path, key)))
        elif isinstance(value, list):
            stack.extend((item, (*path, i)) for i, item in enumerate(value))
        elif isinstance(value, str) and "\x00" in value:
            raise InvalidImport(f"{where(path, plain)}: contains a NUL character (\\0), "
                                "which cannot be stored")


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


def plain_turns(messages: list) -> list[dict]:
    """A transcript's messages as turn records; opening assistant messages get an empty question."""
    records: list[dict] = []
    for i, item in enumerate(messages):
        try:
            message = PlainMessage.model_validate(item)
        except ValidationError as error:
            raise InvalidImport(reason(error, f"message {i + 1}")) from None
        if message.role == "system":
            continue  # the system prompt is never stored
        if message.role == "user" or not records:
            records.append({"messages": [], "origins": []})
            if message.role != "user":
                records[-1]["messages"].append({"role": "user", "content": ""})
                records[-1]["origins"].append(i + 1)
        records[-1]["messages"].append({k: item[k] for k in NEUTRAL_KEYS[message.role] if k in item})
        records[-1]["origins"].append(i + 1)
        if message.created_at and "created_at" not in records[-1]:
            records[-1]["created_at"] = item["created_at"]
    return records


def parse(data) -> tuple[ConversationExport | None, list[TurnRecord], list[dict]]:
    """Validate an export (or a plain list of messages): (meta, checked turns, their raw records)."""
    if isinstance(data, list):
        meta, raw = None, plain_turns(data)
        if not raw:
            raise InvalidImport("the conversation has no messages")
        turns = []
        for n, record in enumerate(raw, 1):
            origins = record.pop("origins")
            try:
                turns.append(TurnRecord.model_validate(record))
            except ValidationError as error:
                loc = error.errors()[0]["loc"]
                if len(loc) > 1 and loc[0] == "messages":  # name the file's own message
                    raise InvalidImport(reason(error, f"message {origins[loc[1]]}",
                                               skip=2)) from None
                raise InvalidImport(reason(error, f"turn {n} (from message {origins[0]})")) from None
        return meta, turns, raw
    if not (isinstance(data, dict) and data.get("format") == FORMAT):
        raise InvalidImport(f"not a Nimbus conversation: expected format {FORMAT!r} or a list of "
                            "{'role', 'content'} messages")
    if data.get("version") != VERSION:
        raise InvalidImport(f"unsupported version {data.get('version')!r} (expected {VERSION})")
    try:
        meta = ConversationExport.model_validate(data)
    except ValidationError as error:
        raise InvalidImport(reason(error)) from None
    return meta, meta.turns, data["turns"]


def import_conversation(data, user: User) -> Conversation:
    """Create a new conversation for `user` from a file's data; nothing is written on a refusal."""
    return write(parse(data), user)


def write(parsed, user: User) -> Conversation:
    """Store what `parse` checked as a new conversation of `user`, in one commit."""
    meta, turns, raw = parsed
    first_question = next((t.messages[0].content for t in turns if t.messages[0].content), "")
    title = " ".join(meta.title.split())[:TITLE_CHARS] if meta and meta.title else ""
    # No title of its own: the gist of the first question, as a chat started here is titled.
    title = title or (short_title(first_question) if first_question else "Imported conversation")
    conversation = Conversation(
        tenant_id=user.tenant_id, user_id=user.id, title=title,
        strategy=meta.strategy if meta else "compact",
        settings=meta.settings.model_dump(exclude_unset=True) if meta else {})
    for seq, (checked, record) in enumerate(zip(turns, raw)):
        messages = record["messages"]
        compact = compact_turn(messages)
        turn = Turn(seq=seq, messages=messages, compact=compact, question=messages[0]["content"],
                    answer=final_answer(messages), full_tokens=estimate_messages(messages),
                    compact_tokens=estimate_messages(compact),
                    tool_calls=sum(len(m.get("tool_calls") or []) for m in messages),
                    outcome=checked.outcome, trace=record.get("trace") or [],
                    prompt_tokens=checked.prompt_tokens, completion_tokens=checked.completion_tokens,
                    context_tokens=checked.context_tokens, resend_tokens=checked.resend_tokens,
                    manifest=record.get("manifest"))
        if checked.created_at:
            turn.created_at = checked.created_at
        conversation.turns.append(turn)
    conversation.turn_count = len(turns)
    conversation.history_tokens = sum(t.full_tokens for t in conversation.turns)
    created = (meta.created_at if meta else None) or turns[0].created_at
    if created:
        conversation.created_at = created
    conversation.updated_at = utcnow()
    db.session.add(conversation)
    db.session.flush()
    texts = meta.request_texts if meta else {}
    # Only a text that matches its hash, so an import cannot make a turn claim it was sent.
    store_texts(conversation.id, {h: t for h, t in texts.items() if text_hash(t) == h})
    db.session.commit()
    return conversation
