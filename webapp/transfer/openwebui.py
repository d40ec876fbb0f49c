"""Open WebUI chats: the branch from currentId back by parentId (the others as its versions), its
markup turned into structure.

Open WebUI writes reasoning and tool calls into the answer as `<details type=…>` blocks and, in
newer versions, as structured `output[]` items; reasoning is dropped (Nimbus keeps no model notes,
as with reasoning parts in OpenAI files) and calls become neutral tool calls with their results.
"""
import html
import json
import re

from .chat_apps import branch, closed, iso
from .claude import as_list
from .fields import epoch, field, named
from .importer import Checked, InvalidImport, check_transcript
from .sources import source_key
from .branches import other_branches

DETAILS = re.compile(r'<details\s+type="(?P<kind>[a-z_]+)"(?P<attrs>[^>]*)>.*?</details>\s*',
                     re.S)
ATTR = re.compile(r'(\w+)="([^"]*)"')


def openwebui(record: dict, label: str) -> Checked:
    """An Open WebUI chat: history.messages keyed by id, from currentId back by parentId; every
    other leaf's branch (a regenerated answer, an edited question) comes along as a version."""
    chat = field(record, "chat", dict, label or "the file")
    title = record.get("title") or chat.get("title")
    label = named(label, title) or "the chat"
    history = chat.get("history")
    system_pairs = []
    params = chat.get("params") if isinstance(chat.get("params"), dict) else {}
    system = chat.get("system") or params.get("system")
    if isinstance(system, str):
        system_pairs.append((f"{label}, system", {"role": "system", "content": system}))
    nodes = {}
    if isinstance(history, dict):
        nodes = field(history, "messages", dict, f"{label}, chat.history")
        path = branch(nodes, history.get("currentId"), "parentId", f"{label}, chat.history")
    else:
        path = [(str(i), m) for i, m in enumerate(field(chat, "messages", list, f"{label}, chat"))]
    created = epoch(record.get("created_at") or chat.get("timestamp"), f"{label}, created_at")
    checked = check_transcript(closed(system_pairs + message_pairs(path, label)), label,
                               title=title if isinstance(title, str) else None,
                               created_at=iso(created))
    on_branch = {node_id for node_id, _ in path}
    parents = {m.get("parentId") for m in nodes.values() if isinstance(m, dict)}
    leaves = [k for k in nodes if k not in parents and k not in on_branch]

    def read(leaf):
        other = branch(nodes, leaf, "parentId", f"{label}, chat.history")
        return ([k for k, _ in other],
                check_transcript(closed(system_pairs + message_pairs(other, label)), label))
    checked.versions, kept = other_branches(checked, leaves, read)
    checked.left_out = len(nodes) - len(on_branch | kept) if nodes else 0
    checked.pinned, checked.archived = record.get("pinned") is True, record.get("archived") is True
    checked.source = source_key("openwebui", record.get("id") or chat.get("id"))
    return checked


def message_pairs(path: list[tuple[str, dict]], label: str) -> list[tuple[str, dict]]:
    """One branch's messages as neutral messages, each named by its id in the file."""
    pairs = []
    for node_id, message in path:
        where = f"{label}, message {node_id[:40]}"
        if not isinstance(message, dict):
            raise InvalidImport(f"{where}: expected an object")
        role = field(message, "role", str, where)
        if role not in ("user", "assistant", "system"):
            raise InvalidImport(f"{where}, role: unknown role {role[:20]!r}")
        created = epoch(message.get("timestamp"), f"{where}, timestamp")
        stamp = {"created_at": created} if created else {}
        content = field(message, "content", str, where, required=False) or ""
        if role == "assistant":
            pairs += assistant_steps(message, content, where, stamp)
        else:
            pairs.append((where, {"role": role, "content": content, **stamp}))
    return pairs


def assistant_steps(message: dict, content: str, where: str, stamp: dict) -> list:
    """An answer as neutral messages: structured output[] when present, else its markup."""
    items = [i for i in as_list(message.get("output")) if isinstance(i, dict)]
    if items:
        return output_steps(items, where, stamp)
    out, start = [], 0
    for block in DETAILS.finditer(content):
        attrs = {k: html.unescape(v) for k, v in ATTR.findall(block["attrs"])}
        if block["kind"] == "tool_calls" and attrs.get("name"):
            text = content[start:block.start()].strip()
            start = block.end()
            out += call_pair(attrs.get("id") or f"call_{len(out)}", attrs["name"],
                             attrs.get("arguments"), attrs.get("result"), text, where, stamp)
    answer = DETAILS.sub("", content[start:]).strip()
    out.append((where, {"role": "assistant", "content": answer, **stamp}))
    return out


def call_pair(call_id, name, arguments, result, text: str, where: str, stamp: dict) -> list:
    """A tool call and, when the file holds it, its result."""
    call = {"id": str(call_id)[:200], "name": str(name)[:200], "arguments": args(arguments)}
    out = [(where, {"role": "assistant", "content": text, "tool_calls": [call], **stamp})]
    if result is not None:
        body = result if isinstance(result, str) else json.dumps(result)
        try:  # Open WebUI writes the result JSON-encoded
            decoded = json.loads(body)
            body = decoded if isinstance(decoded, str) else json.dumps(decoded)
        except ValueError:
            pass
        out.append((where, {"role": "tool", "tool_call_id": call["id"], "name": call["name"],
                            "content": body}))
    return out


def args(value) -> dict:
    """A call's arguments as an object, whatever shape the file gives them in."""
    if isinstance(value, dict):
        return value
    try:
        decoded = json.loads(value) if isinstance(value, str) and value.strip() else {}
    except ValueError:
        return {"input": value}
    return decoded if isinstance(decoded, dict) else {"input": decoded}


def call_id(item: dict) -> str | None:
    """An output item's call id; one of another type links nothing."""
    return item["call_id"] if isinstance(item.get("call_id"), str) else None


def output_steps(items: list[dict], where: str, stamp: dict) -> list:
    """Open WebUI's output[]: messages, function_call and function_call_output, reasoning."""
    results = {call_id(i): i.get("output") for i in items
               if i.get("type") == "function_call_output"}
    out, text = [], []
    for item in items:
        kind = item.get("type")
        if kind == "message":
            text += [p["text"] for p in as_list(item.get("content"))
                     if isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"].strip()]
        elif kind == "function_call":
            result = results.get(call_id(item))
            if isinstance(result, list):
                result = "\n".join(p["text"] for p in result
                                   if isinstance(p, dict) and isinstance(p.get("text"), str))
            out += call_pair(call_id(item) or f"call_{len(out)}", item.get("name") or "tool",
                             item.get("arguments"), result, "\n\n".join(text), where, stamp)
            text = []
    out.append((where, {"role": "assistant", "content": "\n\n".join(text), **stamp}))
    return out
