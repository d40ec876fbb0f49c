"""Export a conversation as JSON or Markdown, and import one back, atomically and validated."""
import json
from datetime import datetime

from sqlalchemy import select

from .extensions import db
from .llm.messages import InvalidMessage, compact_turn, final_answer, split_into_turns, validate_turn
from .llm.tokens import estimate_messages
from .memory.manifest import store_texts, text_hash
from .models import Conversation, RequestText, Turn, User, utcnow

FORMAT = "nimbus.conversation"
VERSION = 1
MAX_TURNS = 100_000
TURN_FIELDS = ("outcome", "trace", "prompt_tokens", "completion_tokens", "context_tokens",
               "resend_tokens", "manifest")


class InvalidImport(ValueError):
    """The file is not a conversation we can import; the text says why."""


def export_conversation(conversation: Conversation) -> dict:
    return {
        "format": FORMAT, "version": VERSION, "id": conversation.id, "title": conversation.title,
        "strategy": conversation.strategy, "settings": conversation.settings or {},
        "created_at": conversation.created_at.isoformat(),
        "turns": [{"messages": t.messages, "created_at": t.created_at.isoformat(),
                   **{f: getattr(t, f) for f in TURN_FIELDS}}
                  for t in conversation.turns],
        # The texts the turns' request manifests refer to by hash (webapp/memory/manifest.py).
        "request_texts": dict(db.session.execute(select(RequestText.hash, RequestText.text)
                                                 .where(RequestText.conversation_id == conversation.id)).all()),
    }


def export_markdown(conversation: Conversation) -> str:
    lines = [f"# {conversation.title}", "", f"Conversation `{conversation.id}`", ""]
    for turn in conversation.turns:
        lines += [f"## Turn {turn.seq + 1}", "", f"**Customer:** {turn.question}", ""]
        for m in turn.messages[1:]:
            for call in m.get("tool_calls") or []:
                lines.append(f"- *tool call* `{call['name']}({json.dumps(call['arguments'])})`")
            if m["role"] == "tool":
                lines.append(f"- *result* `{m['content'][:200]}`")
        lines += ["", f"**Nimbus:** {final_answer(turn.messages)}", ""]
    return "\n".join(lines)


def parse_turns(data) -> tuple[dict, list[dict]]:
    """Validate an export (or a plain list of {role, content} messages) into turn records."""
    if isinstance(data, list):
        messages = [m for m in data if not (isinstance(m, dict) and m.get("role") == "system")]
        for i, m in enumerate(messages):
            if not isinstance(m, dict) or "role" not in m or "content" not in m:
                raise InvalidImport(f"message {i}: expected an object with 'role' and 'content'")
        meta, records = {}, [{"messages": t} for t in split_into_turns(messages)]
    elif isinstance(data, dict) and data.get("format") == FORMAT:
        if data.get("version") != VERSION:
            raise InvalidImport(f"unsupported version {data.get('version')!r} (expected {VERSION})")
        if not isinstance(data.get("turns"), list):
            raise InvalidImport("'turns' must be a list")
        meta, records = data, data["turns"]
    else:
        raise InvalidImport(f"not a Nimbus conversation: expected format {FORMAT!r} or a list of "
                           "{'role', 'content'} messages")
    if not records:
        raise InvalidImport("the conversation has no messages")
    if len(records) > MAX_TURNS:
        raise InvalidImport(f"too many turns ({len(records)}; at most {MAX_TURNS})")
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            raise InvalidImport(f"turn {i + 1}: expected an object")
        try:
            validate_turn(record.get("messages"))
        except InvalidMessage as error:
            raise InvalidImport(f"turn {i + 1}: {error}") from None
    return meta, records


def import_conversation(data, user: User) -> Conversation:
    """Create a new conversation for `user` from validated data; nothing is written on error."""
    meta, records = parse_turns(data)
    conversation = Conversation(tenant_id=user.tenant_id, user_id=user.id,
                                title=str(meta.get("title") or records[0]["messages"][0]["content"])[:200],
                                strategy=str(meta.get("strategy") or "compact"),
                                settings=meta.get("settings") if isinstance(meta.get("settings"), dict) else {})
    history = 0
    for seq, record in enumerate(records):
        messages = record["messages"]
        turn = Turn(seq=seq, messages=messages, compact=compact_turn(messages),
                    question=messages[0]["content"], answer=final_answer(messages),
                    full_tokens=estimate_messages(messages),
                    compact_tokens=estimate_messages(compact_turn(messages)),
                    tool_calls=sum(len(m.get("tool_calls") or []) for m in messages),
                    outcome=record.get("outcome") or "answered", trace=record.get("trace") or [],
                    prompt_tokens=record.get("prompt_tokens"),
                    completion_tokens=record.get("completion_tokens"),
                    context_tokens=record.get("context_tokens") or 0,
                    resend_tokens=record.get("resend_tokens") or 0,
                    manifest=record.get("manifest") if isinstance(record.get("manifest"), dict) else None)
        if record.get("created_at"):
            turn.created_at = parse_time(record["created_at"])
        history += turn.full_tokens
        conversation.turns.append(turn)
    conversation.turn_count, conversation.history_tokens = len(records), history
    if meta.get("created_at"):
        conversation.created_at = parse_time(meta["created_at"])
    conversation.updated_at = utcnow()
    db.session.add(conversation)
    db.session.flush()
    texts = meta.get("request_texts") if isinstance(meta.get("request_texts"), dict) else {}
    # Only a text that matches its hash, so an import cannot make a turn claim it was sent.
    store_texts(conversation.id, {h: t for h, t in texts.items()
                                  if isinstance(t, str) and text_hash(t) == h})
    db.session.commit()
    return conversation


def parse_time(value) -> datetime:
    try:
        return datetime.fromisoformat(str(value)).replace(tzinfo=None)
    except ValueError:
        raise InvalidImport(f"invalid timestamp {value!r}") from None
