"""Which format a file is in, and the readers for OpenAI messages and ShareGPT.

Every reader turns its records into transcripts: (origin, message) pairs in the neutral format
(webapp/llm/messages.py) plus a title and a time, which importer.check_transcript checks turn by
turn. The shapes each reader expects, and where they are described, are in docs/import-formats.md.
"""
import json
import logging
from collections.abc import Iterator

from ..models import Conversation, User
from .chat_apps import chatgpt, closed
from .librechat import librechat
from .openwebui import openwebui
from .claude import claude
from .export import FORMAT
from .fields import field, named, tool_arguments
from .parts import only_placeholders, text_of
from .loading import JsonLines, UnreadableLine
from .importer import (Checked, InvalidImport, check_nimbus,
                       check_transcript, import_all)

log = logging.getLogger(__name__)
FORMATS = ("auto", "nimbus", "openai", "chatgpt", "claude", "openwebui", "sharegpt",
           "librechat")
# The key a record of each multi-conversation format always has.
MARKERS = {"mapping": "chatgpt", "chat_messages": "claude", "chat": "openwebui",
           "conversations": "sharegpt", "messages": "openai"}


def detect(data) -> str:
    """The format of a loaded file, from its shape."""
    if isinstance(data, dict):
        if data.get("format") == FORMAT:
            return "nimbus"
        if "conversationId" in data and ("messages" in data or "messagesTree" in data):
            return "librechat"
        if {"history", "folders"} <= data.keys():
            raise InvalidImport("a Chatbot UI export is not a format Nimbus reads yet")
        for key, fmt in MARKERS.items():
            if key in data:
                return fmt
    elif isinstance(data, list) and (first := next(
            (r for r in data if not isinstance(r, UnreadableLine)), None)) is not None \
            and isinstance(first, dict):
        if "role" in first and not isinstance(data, JsonLines):
            return "openai"  # one conversation: a list of messages
        for key, fmt in MARKERS.items():
            if key in first:
                return fmt
    elif isinstance(data, list) and not data:
        raise InvalidImport("the file holds no conversations")
    raise InvalidImport("not a conversation file Nimbus reads: expected a Nimbus export, OpenAI "
                        "messages, ChatGPT's or Claude's conversations.json, an Open WebUI "
                        "export, a LibreChat export or ShareGPT")


def parse(data, fmt: str = "auto", progress=None, skipped: list[str] | None = None
          ) -> list[Checked]:
    """Every conversation of a loaded file, checked: nothing is written yet. With a `skipped`
    list, an unreadable conversation adds one line naming it there instead of refusing the file."""
    return read(data, fmt, progress, skipped)


def import_conversation(data, user: User) -> Conversation:
    """Create a new conversation for `user` from a one-conversation file; nothing is written on
    a refusal."""
    return import_all(parse(data), user)[0]


def read(data, fmt: str = "auto", progress=None, skipped: list[str] | None = None
         ) -> list[Checked]:
    """Every conversation in a loaded file of format `fmt` (auto: detected), checked;
    `progress(n)` is called as each conversation has been checked; see parse for `skipped`."""
    return list(read_each(data, fmt, progress, skipped))


def read_each(data, fmt: str = "auto", progress=None, skipped: list[str] | None = None
              ) -> Iterator[Checked]:
    """read's conversations one at a time, as each is checked (a streamed file is never held
    whole). A file refused in the format picked for it, whose shape is another's, says which."""
    if fmt == "auto":
        yield from read_as(data, detect(data), progress, skipped)
        return
    try:
        yield from read_as(data, fmt, progress, skipped)
    except InvalidImport as error:
        try:
            shape = detect(data)
        except InvalidImport:
            raise error from None
        if shape == fmt:
            raise
        raise InvalidImport(f"this file looks like {NAMES[shape]}, not {NAMES[fmt]}: choose "
                            f"{shape} or auto") from None


NAMES = {"nimbus": "a Nimbus export", "openai": "OpenAI messages", "chatgpt": "a ChatGPT export",
         "claude": "a Claude export", "openwebui": "an Open WebUI export",
         "sharegpt": "ShareGPT", "librechat": "a LibreChat export"}


def read_as(data, fmt: str, progress=None, skipped: list[str] | None = None
            ) -> Iterator[Checked]:
    """Every conversation of a file read as format `fmt`, one at a time; see read."""
    if fmt == "nimbus":
        if not (isinstance(data, dict) and data.get("format") == FORMAT):
            raise InvalidImport(f"not a Nimbus conversation: expected format {FORMAT!r}")
        yield check_nimbus(data)
        return
    if fmt == "openai" and isinstance(data, list) and not isinstance(data, JsonLines) \
            and (not data or "messages" not in data[0]):
        yield with_words(check_transcript(openai_messages(data)))
        return
    readers = {"openai": openai_record, "chatgpt": chatgpt, "claude": claude,
               "openwebui": openwebui, "sharegpt": sharegpt, "librechat": librechat}
    records = data if isinstance(data, list) else [data]
    if not records:
        raise InvalidImport("the file holds no conversations")
    lines = isinstance(data, JsonLines)
    checked, unreadable = 0, []
    for n, record in enumerate(records, 1):
        label = f"line {n}" if lines else f"conversation {n}" if len(records) > 1 else ""
        try:
            if isinstance(record, UnreadableLine):
                raise InvalidImport(f"{label}: {record.reason}")
            if not isinstance(record, dict):
                raise InvalidImport(f"{label or 'the file'}: expected an object, got "
                                    f"{type(record).__name__}")
            one = with_words(unsurprised(readers[fmt], record, label))
        except InvalidImport as error:
            if skipped is None or len(records) == 1:
                raise
            unreadable.append(f"{error} — skipped")
        else:
            checked += 1
            yield one
        if progress:
            progress(1)
    if unreadable and not checked:  # nothing stored: the file is refused as a whole
        raise InvalidImport(f"none of its {len(records)} conversations could be read; "
                            f"the first: {unreadable[0].removesuffix(' — skipped')}")
    if skipped is not None:
        skipped += unreadable


def unsurprised(reader, record: dict, label: str) -> Checked:
    """Run a reader; a shape it did not foresee (a list where an id belongs…) refuses the record
    in words, and is logged so the reader can learn it, never a crash of the whole upload."""
    try:
        return reader(record, label)
    except (TypeError, AttributeError, KeyError, IndexError) as error:
        log.warning("import reader %s: unforeseen shape in %s", reader.__name__, label or "file",
                    exc_info=True)
        raise InvalidImport(f"{label or 'the file'}: a field holds a value of a type this format "
                            f"never has ({type(error).__name__})") from None


def with_words(checked: Checked) -> Checked:
    """Refuse a conversation in which every message would be a placeholder: none of its words
    could be read, so storing it would only pretend to have imported it."""
    if marker := only_placeholders(checked.raw):
        raise InvalidImport(f"{checked.label or 'the conversation'}: no words in any message, "
                            f"only {marker}")
    return checked


def openai_messages(messages: list, label: str = "") -> list[tuple[str, dict]]:
    """OpenAI Chat Completions messages (or Nimbus's neutral ones) as (origin, neutral) pairs.

    LLaMA-Factory's v1 files put a call in the assistant's parts ({"type": "tool_call"}) and give
    its result without an id: such results answer the open calls in order."""
    pairs, names, waiting = [], {}, []
    for i, item in enumerate(messages, 1):
        origin = f"message {i}"
        where = f"{label}, {origin}" if label else origin
        if not isinstance(item, dict):
            pairs.append((origin, item))  # refused by the schema, naming the message
            continue
        message = dict(item)
        if message.get("role") == "developer":  # OpenAI's newer name for the system role
            message["role"] = "system"
        part_calls = []
        if message.get("role") == "assistant" and isinstance(message.get("content"), list):
            message["content"], part_calls = split_parts(message["content"], i, where)
        if "content" in message and message.get("role") in ("system", "user", "assistant", "tool"):
            message["content"] = text_of(message["content"], where)
        calls = message.get("tool_calls")
        if message.get("role") == "assistant" and (isinstance(calls, list) or part_calls):
            message["tool_calls"] = [neutral_call(c, f"{where}, tool_calls[{j}]")
                                     for j, c in enumerate(calls or [])] + part_calls
            named_calls = [c for c in message["tool_calls"] if isinstance(c, dict)
                           and isinstance(c.get("id"), str)]
            names.update((c["id"], c["name"]) for c in named_calls)
            waiting = [c["id"] for c in named_calls]
        if message.get("role") == "tool" and message.get("tool_call_id") is None and waiting:
            for result in results_for(message, waiting):
                pairs.append((origin, {**result, "name": names[result["tool_call_id"]]}))
            continue
        if message.get("role") == "tool":
            if message.get("tool_call_id") in waiting:
                waiting.remove(message["tool_call_id"])
            if "name" not in message:
                message["name"] = names.get(message.get("tool_call_id"), "tool")
        pairs.append((origin, message))
    part_calls = {c["id"] for _, m in pairs if isinstance(m, dict)
                  for c in m.get("tool_calls") or [] if str(c.get("id")).startswith("call_part")}
    return closed(pairs, part_calls) if part_calls else pairs


def results_for(message: dict, waiting: list[str]) -> list[dict]:
    """An id-less result for the open calls, in order; one result holding a JSON list with an
    entry per open call (LLaMA-Factory's parallel calls) answers each of them."""
    text = message.get("content") or ""
    entries = None
    if len(waiting) > 1:
        try:
            entries = json.loads(text)
        except json.JSONDecodeError:
            pass
    if isinstance(entries, list) and len(entries) == len(waiting) \
            and all(isinstance(e, dict) for e in entries):
        bodies = [e["content"] if isinstance(e.get("content"), str) else json.dumps(e)
                  for e in entries]
    else:
        bodies = [text]
    answered, waiting[:len(bodies)] = waiting[:len(bodies)], []
    return [{"role": "tool", "tool_call_id": call_id, "content": body}
            for call_id, body in zip(answered, bodies)]


CALL_PARTS = ("tool_call", "function_call")
UNSAID_PARTS = ("reasoning", "thinking")  # the model's notes to itself, never shown as its answer


def split_parts(parts: list, n: int, where: str) -> tuple[list, list[dict]]:
    """An assistant's parts without its calls and reasoning, and the calls as neutral ones."""
    kept, calls = [], []
    for j, part in enumerate(parts):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in CALL_PARTS:
            value = part.get("value", part.get("content", part.get("text")))
            call = tool_arguments(value, f"{where}, content[{j}]")
            if not isinstance(call.get("name"), str):
                raise InvalidImport(f"{where}, content[{j}]: a tool call needs a name")
            calls.append({"id": f"call_part_{n}_{j}", "name": call["name"][:200],
                          "arguments": tool_arguments(call.get("arguments") or {},
                                                      f"{where}, content[{j}]")})
        elif kind not in UNSAID_PARTS:
            kept.append(part)
    return kept, calls


def neutral_call(call, where: str):
    """{id, type, function: {name, arguments}} → {id, name, arguments}; neutral ones pass."""
    if isinstance(call, dict) and isinstance(call.get("function"), dict):
        function = call["function"]
        return {"id": call.get("id"), "name": function.get("name"),
                "arguments": tool_arguments(function.get("arguments"), where)}
    return call


def openai_record(record: dict, label: str) -> Checked:
    """One {"messages": [...]} record (a line of a fine-tuning JSONL file)."""
    messages = field(record, "messages", list, label or "the file")
    return check_transcript(openai_messages(messages, label), label)


SHAREGPT_ROLES = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant",
                  "chatgpt": "assistant", "bing": "assistant", "bard": "assistant",
                  "model": "assistant", "system": "system", "function_call": "call",
                  "observation": "tool", "tool": "tool"}


def sharegpt(record: dict, label: str) -> Checked:
    """{"conversations": [{"from": "human|gpt|system", "value": …}]}, with LLaMA-Factory's
    function_call / observation steps as a tool call and its result."""
    turns = field(record, "conversations", list, label or "the file")
    pairs: list[tuple[str, dict]] = []
    if isinstance(record.get("system"), str):
        pairs.append(("system", {"role": "system", "content": record["system"]}))
    open_call = None
    for i, item in enumerate(turns, 1):
        origin = f"message {i}"
        where = f"{label}, {origin}" if label else origin
        if not isinstance(item, dict):
            raise InvalidImport(f"{where}: expected an object with from and value")
        speaker = field(item, "from", str, where)
        value = field(item, "value", str, where)
        role = SHAREGPT_ROLES.get(speaker.lower())
        if role is None:
            raise InvalidImport(f"{where}, from: unknown speaker {speaker[:20]!r}; expected "
                                "human, gpt or system")
        if role == "call":
            try:
                call = json.loads(value)
            except json.JSONDecodeError:
                raise InvalidImport(f"{where}, value: a function_call must be JSON") from None
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise InvalidImport(f"{where}, value: a function_call needs a name")
            open_call = {"id": f"call_{i}", "name": call["name"],
                         "arguments": tool_arguments(call.get("arguments") or {}, where)}
            pairs.append((origin, {"role": "assistant", "content": "", "tool_calls": [open_call]}))
        elif role == "tool":
            if open_call is None:
                raise InvalidImport(f"{where}: an observation without a function_call before it")
            pairs.append((origin, {"role": "tool", "tool_call_id": open_call["id"],
                                   "name": open_call["name"], "content": value}))
            open_call = None
        else:
            pairs.append((origin, {"role": role, "content": value}))
    return check_transcript(pairs, named(label, record.get("title")))
