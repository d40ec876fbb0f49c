"""Readers for chat apps' own exports: ChatGPT's and Claude.ai's conversations.json, Open WebUI.

ChatGPT and Open WebUI keep every edit and regeneration as a tree; the conversation a person saw
last is the branch from the current node back to the root, which is what is imported.
"""
from ..llm.messages import tool_message
from .fields import epoch, field, named, tool_arguments
from .importer import Checked, InvalidImport, check_transcript
from .parts import marker, part_text
from .citations import cited
from .sources import source_key

NO_RESULT = "no result in the exported file"


def branch(nodes: dict, current, parent_key: str, where: str) -> list[tuple[str, dict]]:
    """(id, node) from the root to `current`, following each node's parent."""
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
            raise InvalidImport(f"{where}: node {str(current)[:40]!r} is missing from the tree")
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
    current = record.get("current_node")
    if current is None:  # very old exports: the newest leaf
        leaves = [k for k, n in mapping.items() if isinstance(n, dict) and not n.get("children")]
        current = leaves[-1] if leaves else None
    pairs: list[tuple[str, dict]] = []
    open_calls: list[dict] = []
    for node_id, node in branch(mapping, current, "parent", f"{label}, mapping"):
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
            if call is None:  # a result the export shows without its call (browsing, actions)
                call = {"id": f"call_{node_id}"[:200], "name": name, "arguments": {}}
                pairs.append((where, {"role": "assistant", "content": "", "tool_calls": [call]}))
            else:
                open_calls.remove(call)
            pairs.append((where, {"role": "tool", "tool_call_id": call["id"], "name": call["name"],
                                  "content": text}))
        else:
            raise InvalidImport(f"{where}, author.role: unknown role {str(role)[:20]!r}")
        if role == "user":
            open_calls.clear()
    created = epoch(record.get("create_time"), f"{label}, create_time")
    checked = check_transcript(closed(pairs), label, title=title if isinstance(title, str)
                               else None, created_at=iso(created))
    checked.source = source_key("chatgpt", record.get("conversation_id") or record.get("id"))
    return checked


def arguments(text: str, where: str) -> dict:
    """A ChatGPT tool call's text: JSON arguments for most tools, code for the Python one."""
    try:
        return tool_arguments(text, where)
    except InvalidImport:
        return {"input": text}


def iso(text: str | None):
    from datetime import datetime
    return datetime.fromisoformat(text) if text else None
