"""LibreChat's own JSON export: one conversation, its messages a flat list or a `children` tree.

Messages link by parentMessageId; the branch a person saw last is the path to the latest leaf,
which is what is imported; the other branches come along as versions of the turn where they
leave it. Every field is guarded: the export
is written by many LibreChat versions and endpoints.
"""
from .branches import latest_leaf_path, other_branches
from .claude import as_list
from .fields import field, named
from .importer import Checked, InvalidImport, check_transcript
from .schema import iso_time
from .sources import source_key


def flatten(messages: list) -> list[dict]:
    """Every message of a flat list or a nested `children` tree, in file order."""
    out, stack = [], list(reversed(messages))
    while stack:
        message = stack.pop()
        if isinstance(message, dict):
            out.append(message)
            stack += reversed(as_list(message.get("children")))
    return out


def words(message: dict, where: str) -> str:
    """A message's text: `text`, or the text parts of `content` (agents' messages)."""
    text = field(message, "text", str, where, required=False)
    if text and text.strip():
        return text
    texts = []
    for part in field(message, "content", list, where, required=False) or []:
        text = part.get("text") if isinstance(part, dict) else None
        text = text.get("value") if isinstance(text, dict) else text
        if isinstance(text, str) and text.strip():
            texts.append(text)
    return "\n\n".join(texts)


def when(value):
    try:
        return iso_time(value) if value else None
    except (ValueError, TypeError):
        return None


def librechat(record: dict, label: str) -> Checked:
    """A LibreChat conversation: the path from the root to its latest leaf; every other leaf's
    branch (a regenerated answer, an edited question) comes along as a version."""
    title = record.get("title")
    label = named(label, title) or "the conversation"
    nodes = flatten(as_list(record.get("messages")) or as_list(record.get("messagesTree")))
    if not nodes:
        raise InvalidImport(f"{label}: no messages")
    path = latest_leaf_path(nodes, "messageId", "parentMessageId", "createdAt", label)
    checked = check_transcript(message_pairs(path, nodes, label), label,
                               title=title if isinstance(title, str) else None,
                               created_at=when(path[-1].get("createdAt")))
    on_branch = {id(m) for m in path}
    parents = {m.get("parentMessageId") for m in nodes}
    leaves = [m for m in nodes if m.get("messageId") and m.get("messageId") not in parents
              and id(m) not in on_branch]

    def read(leaf):
        other = latest_leaf_path(nodes, "messageId", "parentMessageId", "createdAt", label,
                                 current=leaf.get("messageId"))
        return [id(m) for m in other], check_transcript(message_pairs(other, nodes, label), label)
    checked.versions, kept = other_branches(checked, leaves, read)
    checked.left_out = len(nodes) - len(on_branch | kept)
    checked.source = source_key("librechat", record.get("conversationId"))
    return checked


def message_pairs(path: list[dict], nodes: list[dict], label: str) -> list[tuple[str, dict]]:
    """A branch's messages as (where, neutral message), files named by a marker."""
    pairs = []
    for message in path:
        where = f"{label}, message {str(message.get('messageId') or nodes.index(message) + 1)[:40]}"
        created = when(message.get("createdAt"))
        role = "user" if message.get("isCreatedByUser") else "assistant"
        text = words(message, where) + "".join(
            f"\n\n[file: {f.get('filename') or f.get('file_id') or 'file'}]"
            for f in as_list(message.get("files")) if isinstance(f, dict))
        pairs.append((where, {"role": role, "content": text.strip(),
                              **({"created_at": created.isoformat()} if created else {})}))
    return pairs
