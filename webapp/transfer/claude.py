"""Claude.ai's conversations.json: each chat's active branch, its tool blocks and its files.

Claude keeps every retry and edit as a tree through `parent_message_uuid`; the branch a person saw
last (the path to the current or latest leaf) is the conversation, the others its versions.
"""
from .branches import latest_leaf_path, other_branches
from .chat_apps import closed
from .fields import field, named
from .importer import Checked, InvalidImport, check_transcript
from .parts import marker, part_text
from .schema import iso_time
from .sources import source_key

TOOL_KINDS = ("tool_use", "tool_result")


def as_list(value) -> list:
    """A field that should be a list, or [] when the file holds something else there."""
    return value if isinstance(value, list) else []


def claude_time(value, where: str):
    """Claude writes ISO 8601 times with a Z."""
    if value is None:
        return None
    try:
        return iso_time(value)
    except (ValueError, TypeError) as error:
        raise InvalidImport(f"{where}: {error}") from None


def active_branch(messages: list, label: str, current=None) -> list:
    """The messages from the root to `current` (the API's and its exporters'
    current_leaf_message_uuid) or else to the latest leaf; all of them when none names a parent."""
    nodes = [m for m in messages if isinstance(m, dict)]
    if len(nodes) != len(messages) or not any(m.get("parent_message_uuid") for m in nodes):
        return messages
    return latest_leaf_path(nodes, "uuid", "parent_message_uuid", "created_at", label, current)


def claude(record: dict, label: str) -> Checked:
    """A Claude.ai conversation: its active branch, each message with its content parts, and the
    other branches of its tree as versions of the turn where each leaves it."""
    title = record.get("name")
    label = named(label, title) or "the conversation"
    messages = field(record, "chat_messages", list, label)
    branch = active_branch(messages, label, record.get("current_leaf_message_uuid"))
    position = {id(m): i for i, m in enumerate(messages)}
    created = claude_time(record.get("created_at"), f"{label}, created_at")
    checked = check_transcript(closed(claude_pairs(branch, position, label)), label,
                               title=title if isinstance(title, str) else None, created_at=created)
    kept = set()
    if branch is not messages:  # a tree: every other leaf is a retry or an edit
        parents = {m.get("parent_message_uuid") for m in messages}
        on_branch = {id(m) for m in branch}
        leaves = [m for m in messages if isinstance(m.get("uuid"), str) and
                  m["uuid"] not in parents and id(m) not in on_branch]

        def read(leaf):
            path = latest_leaf_path(messages, "uuid", "parent_message_uuid", "created_at", label,
                                    leaf["uuid"])
            return ([id(m) for m in path],
                    check_transcript(closed(claude_pairs(path, position, label)), label))
        checked.versions, kept = other_branches(checked, leaves, read)
        kept -= on_branch
    checked.left_out = len(messages) - len(branch) - len(kept)
    checked.source = source_key("claude", record.get("uuid"))
    return checked


def claude_pairs(branch: list, position: dict, label: str) -> list[tuple[str, dict]]:
    """One branch's messages as neutral messages, each named by its place in the file."""
    pairs: list[tuple[str, dict]] = []
    for message in branch:
        where = f"{label}, message {position[id(message)] + 1}"
        if not isinstance(message, dict):
            raise InvalidImport(f"{where}: expected an object")
        sender = field(message, "sender", str, where)
        created = claude_time(message.get("created_at"), f"{where}, created_at")
        stamp = {"created_at": created.isoformat()} if created else {}
        parts = field(message, "content", list, where, required=False) or []
        if not parts:
            parts = [{"type": "text", "text": field(message, "text", str, where,
                                                     required=False) or ""}]
        if sender == "human":
            pairs.append((where, {"role": "user", "content": human_text(message, parts, where),
                                  **stamp}))
        elif sender == "assistant":
            pairs += claude_steps(parts, where, stamp)
        else:
            raise InvalidImport(f"{where}, sender: unknown sender {sender[:20]!r}; expected "
                                "human or assistant")
    return pairs


def human_text(message: dict, parts: list, where: str) -> str:
    """A question's words, its attachments' extracted text and a marker for each file."""
    texts = [part_text(p, f"{where}, content[{j}]") for j, p in enumerate(parts)
             if not (isinstance(p, dict) and p.get("type") in TOOL_KINDS)]
    for attachment in as_list(message.get("attachments")):
        if isinstance(attachment, dict) and isinstance(attachment.get("extracted_content"), str):
            texts.append(f"[file: {attachment.get('file_name') or 'attachment'}]\n"
                         f"{attachment['extracted_content']}")
        elif isinstance(attachment, dict):
            texts.append(marker("file", attachment))
    texts += [marker("image" if f.get("file_kind") == "image" else "file", f)
              for f in as_list(message.get("files_v2")) or as_list(message.get("files"))
              if isinstance(f, dict)]  # uploads the export holds no text of
    return "\n\n".join(t for t in texts if t.strip())


def claude_steps(parts: list, where: str, stamp: dict) -> list[tuple[str, dict]]:
    """One assistant message's parts as neutral messages; a tool_result without an id answers
    the earliest call still open (position), as Claude writes them in order."""
    out, text, calls = [], [], []
    for j, part in enumerate(parts):
        if not isinstance(part, dict):
            raise InvalidImport(f"{where}, content[{j}]: expected an object")
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str) and part["text"].strip():
            text.append(part["text"])
        elif kind == "tool_use":
            name = part.get("name") if isinstance(part.get("name"), str) else "tool"
            call = {"id": str(part.get("id") or f"toolu_{j}")[:200], "name": name[:200],
                    "arguments": part["input"] if isinstance(part.get("input"), dict) else {}}
            calls.append(call)
            out.append((where, {"role": "assistant", "content": "\n\n".join(text),
                                "tool_calls": [call], **stamp}))
            text = []
        elif kind == "tool_result":
            call = next((c for c in calls if c["id"] == part.get("tool_use_id")), None) or (
                calls[0] if calls else None)
            if call is None:
                raise InvalidImport(f"{where}, content[{j}]: a tool_result without its tool_use")
            calls.remove(call)
            result = part.get("content")
            body = result if isinstance(result, str) else "\n".join(
                p.get("text", "") for p in as_list(result) if isinstance(p, dict))
            out.append((where, {"role": "tool", "tool_call_id": call["id"], "name": call["name"],
                                "content": body}))
    if text or not out:  # a whitespace-only answer is no answer
        out.append((where, {"role": "assistant", "content": "\n\n".join(text), **stamp}))
    return out
