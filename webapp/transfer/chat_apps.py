"""Readers for chat apps' own exports: ChatGPT's and Claude.ai's conversations.json, Open WebUI.

ChatGPT and Open WebUI keep every edit and regeneration as a tree; the conversation a person saw
last is the branch from the current node back to the root, which is what is shown. The other
branches come along as versions of the turn where each leaves it (transfer/branches.py reads them
for ChatGPT, Claude and Open WebUI alike; webapp/branches.py keeps them).
"""
from ..llm import tool_message
from .fields import epoch, field, named, tool_arguments
from .importer import Checked, InvalidImport, check_transcript
from .branches import other_branches
from .parts import marker, part_text, short_name
from .citations import cited
from .sources import source_key

NO_RESULT = "no result in the exported file"


def branch(nodes: dict, current, parent_key: str, where: str,
           cut: list[str] | None = None) -> list[tuple[str, dict]]:
    """(id, node) from the root to `current`, following each node's parent. A parent missing
    from the file refuses the conversation, or, given `cut`, starts the branch there and adds
    a line saying so to it."""
    path, seen = [], set()
    while current is not None:
        if not isinstance(current, (str, int)):
            raise InvalidImport(f"{where}: a node's link must be an id, got "
                                f"{type(current).__name__}")
        if current in seen:
            raise InvalidImport(f"{where}: node {str(current)[:40]!r} is its own ancestor")
        seen.add(current)
        node = nodes.get(current) if isinstance(current, str) else None
        if not isinstance(node, dict):
            if cut is None or not path:
                raise InvalidImport(f"{where}: node {str(current)[:40]!r} is missing from the tree")
            cut.append(f"{where.rsplit(', ', 1)[0]}: the messages before node "
                       f"{str(path[-1][0])[:40]!r} are not in the file: imported from there")
            break
        path.append((current, node))
        current = node.get(parent_key)
    return path[::-1]


def closed(pairs: list[tuple[str, dict]], only: set | None = None) -> list[tuple[str, dict]]:
    """Give a tool call the export has no result for one saying so, keeping the turn whole;
    `only`: just these calls' ids."""
    answered = {m.get("tool_call_id") for _, m in pairs if isinstance(m, dict)
                and m.get("role") == "tool"}
    out = []
    for origin, message in pairs:
        out.append((origin, message))
        for call in (message.get("tool_calls") if isinstance(message, dict) else None) or []:
            if call["id"] not in answered and (only is None or call["id"] in only):
                out.append((origin, tool_message(call["id"], call["name"], {"error": NO_RESULT})))
    return out


def chatgpt_text(content: dict, where: str) -> str | None:
    """The words of a ChatGPT message; None for what was never shown (reasoning, hidden)."""
    kind = content.get("content_type")
    if kind in ("text", "multimodal_text"):
        parts = field(content, "parts", list, f"{where}, content", required=False) or []
        return "\n".join(part_text(p, f"{where}, parts[{i}]") for i, p in enumerate(parts))
    if kind in ("code", "execution_output", "tether_quote", "system_error"):
        return field(content, "text", str, f"{where}, content", required=False) or ""
    if kind == "tether_browsing_display":
        return field(content, "result", str, f"{where}, content", required=False) or ""
    return None  # thoughts, reasoning_recap, model_editable_context…


def chatgpt(record: dict, label: str) -> Checked:
    """A ChatGPT conversation: the branch from current_node back to the root of `mapping`."""
    title = record.get("title")
    label = named(label, title) or "the conversation"
    mapping = field(record, "mapping", dict, label)
    current, notes = record.get("current_node"), []
    if isinstance(current, (str, int)) and current not in mapping:
        # A cut-down export (LibreChat's importer reads these too): take what is there.
        notes.append(f"{label}: its current_node {str(current)[:40]!r} is not in the file: "
                     "imported its newest branch")
        current = None
    if current is None:  # very old exports: the newest leaf
        current = newest_leaf(mapping)
    path = branch(mapping, current, "parent", f"{label}, mapping", cut=notes)
    pairs, uncalled = chatgpt_messages(path, label)
    if uncalled:
        notes.append(f"{label}: left out {uncalled} tool result{'s' if uncalled > 1 else ''} "
                     "the export shows without the call that asked for it")
    created = epoch(record.get("create_time"), f"{label}, create_time")
    checked = check_transcript(closed(pairs), label, title=title if isinstance(title, str)
                               else None, created_at=iso(created))
    on_branch = {node_id for node_id, _ in path}
    checked.versions, kept = other_versions(mapping, on_branch, checked, label)
    imported = on_branch | kept  # once: a union per node made a long conversation quadratic
    checked.left_out = sum(1 for node_id, node in mapping.items()
                           if node_id not in imported and shown(node))
    checked.notes = notes
    checked.archived = record.get("is_archived") is True
    checked.source = source_key("chatgpt", record.get("conversation_id") or record.get("id"))
    return checked


def chatgpt_messages(path: list[tuple[str, dict]], label: str) -> tuple[list, int]:
    """The neutral messages of one branch of a ChatGPT tree, each with where it came from, and
    how many tool results it shows without the call that asked for them."""
    pairs: list[tuple[str, dict]] = []
    open_calls: list[dict] = []
    results: dict[str, dict] = {}  # this turn's answered calls: id → their tool message
    uncalled = 0
    for node_id, node in path:
        message = node.get("message")
        if message is None:
            continue  # the root
        where = f"{label}, message {str(node_id)[:40]}"
        if not isinstance(message, dict):
            raise InvalidImport(f"{where}: expected an object")
        author = field(message, "author", dict, where)
        role = author.get("role")
        content = field(message, "content", dict, where)
        metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
        created = epoch(message.get("create_time"), f"{where}, create_time")
        stamp = {"created_at": created} if created else {}
        if content.get("content_type") == "user_editable_context":  # custom instructions
            text = "\n\n".join(content[k] for k in ("user_profile", "user_instructions")
                               if isinstance(content.get(k), str) and content[k].strip())
            pairs.append((where, {"role": "system", "content": text}))
            continue
        text = chatgpt_text(content, where)
        if text is not None and role == "assistant":
            text = cited(text, metadata)
        if text is not None and role == "user":
            text = with_attachments(text, metadata.get("attachments"))
        if text is None or metadata.get("is_visually_hidden_from_conversation") and role != "tool":
            continue
        if role == "system":
            pairs.append((where, {"role": "system", "content": text}))
        elif role == "user":
            pairs.append((where, {"role": "user", "content": text, **stamp}))
        elif role == "assistant" and message.get("recipient", "all") not in ("all", None):
            call = {"id": f"call_{node_id}"[:200], "name": str(message["recipient"])[:200],
                    "arguments": arguments(text, where)}
            open_calls.append(call)
            pairs.append((where, {"role": "assistant", "content": "", "tool_calls": [call],
                                  **stamp}))
        elif role == "assistant":
            if text.strip():
                pairs.append((where, {"role": "assistant", "content": text, **stamp}))
        elif role == "tool":
            name = str(author.get("name") or "tool")[:200]
            call = next((c for c in reversed(open_calls) if c["name"] == name), None) or \
                (open_calls[-1] if open_calls else None)
            if call is None:
                # A step's further results (browsing's mclick quotes one page per message)
                # belong to the call that asked for them; a result with no call at all was no
                # call of this conversation's, and none is invented for it.
                earlier = next((m for m in reversed(results.values()) if m["name"] == name), None)
                if earlier is not None:
                    earlier["content"] = "\n\n".join(filter(None, (earlier["content"], text)))
                else:
                    uncalled += 1
                continue
            open_calls.remove(call)
            result = {"role": "tool", "tool_call_id": call["id"], "name": call["name"],
                      "content": text}
            results[call["id"]] = result
            pairs.append((where, result))
        else:
            raise InvalidImport(f"{where}, author.role: unknown role {str(role)[:20]!r}")
        if role == "user":
            open_calls.clear()
            results.clear()
    return pairs, uncalled


def other_versions(mapping: dict, on_branch: set, active: Checked,
                   label: str) -> tuple[list[tuple[int, Checked]], set]:
    """Every other leaf's branch (a regenerated answer, an edited question) as (the turn where it
    leaves the imported path, its whole transcript), and the nodes they hold; a branch that does
    not read as a transcript, or only goes on past the path's end, stays out (and is counted)."""
    # A branch ends at a shown message with nothing shown after it (a hidden node may follow).
    parents_of_shown = set()
    for one in mapping.values():
        seen = set()
        while isinstance(one, dict) and shown(one) and one.get("parent") not in seen:
            parent = one.get("parent")
            if not isinstance(parent, str) or parent in parents_of_shown:
                break
            seen.add(parent)
            parents_of_shown.add(parent)
            one = mapping.get(parent)
    leaves = [node_id for node_id, one in mapping.items()
              if node_id not in on_branch and node_id not in parents_of_shown and shown(one)]

    def read(leaf):
        path = branch(mapping, leaf, "parent", f"{label}, mapping", cut=[])
        return ([step for step, _ in path],
                check_transcript(closed(chatgpt_messages(path, label)[0]), label))
    return other_branches(active, leaves, read)


def newest_leaf(mapping: dict):
    """The leaf written last (by its message's time, then file order); None for no leaf."""
    leaves = [(i, k, n) for i, (k, n) in enumerate(mapping.items())
              if isinstance(n, dict) and not n.get("children")]
    if not leaves:
        return None

    def written(leaf):
        message = leaf[2].get("message")
        when = message.get("create_time") if isinstance(message, dict) else None
        return (when if isinstance(when, (int, float)) else 0, leaf[0])
    return max(leaves, key=written)[1]


def shown(node) -> bool:
    """Whether a node off the branch held a message the person saw (a retry, an edit)."""
    message = node.get("message") if isinstance(node, dict) else None
    if not isinstance(message, dict):
        return False
    metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
    author = message.get("author") if isinstance(message.get("author"), dict) else {}
    return author.get("role") in ("user", "assistant") and \
        not metadata.get("is_visually_hidden_from_conversation")


def with_attachments(text: str, attachments) -> str:
    """A question with its uploads named: an image part's marker takes the attachment's file
    name in place of its asset id, and an upload no part shows gets a marker of its own."""
    extra = []
    for attachment in attachments if isinstance(attachments, list) else []:
        if not isinstance(attachment, dict):
            continue
        name = attachment.get("name")
        ident = attachment.get("id")
        if not isinstance(name, str) or not name.strip():
            name = None
        if isinstance(ident, str) and ident and f": {ident}]" in text:
            text = text.replace(f": {ident}]", f": {short_name(name)}]") if name else text
            continue
        kind = "image" if str(attachment.get("mime_type", "")).startswith("image/") else "file"
        extra.append(marker(kind, {"name": name} if name else {}))
    return "\n".join(filter(None, (text, *extra)))


def arguments(text: str, where: str) -> dict:
    """A ChatGPT tool call's text: JSON arguments for most tools, code for the Python one."""
    try:
        return tool_arguments(text, where)
    except InvalidImport:
        return {"input": text}


def iso(text: str | None):
    from datetime import datetime
    return datetime.fromisoformat(text) if text else None
