"""The neutral message format every turn is stored in, and the rules for whole turns.

user:      {"role": "user", "content": str}
assistant: {"role": "assistant", "content": str, "tool_calls": [{"id", "name", "arguments": {}}],
            "provider_raw": {...} (optional: the provider's own message, resent as is),
            "notice": str (optional: Nimbus's own words ending the content, shown, never resent)}
tool:      {"role": "tool", "tool_call_id": str, "name": str, "content": str (JSON)}
"""
import json

ROLES = ("user", "assistant", "tool")


def user_message(text: str) -> dict:
    return {"role": "user", "content": text}


def assistant_message(text: str, tool_calls=None, provider_raw=None) -> dict:
    message = {"role": "assistant", "content": text or ""}
    if tool_calls:
        message["tool_calls"] = [dict(c) for c in tool_calls]
    if provider_raw:
        message["provider_raw"] = provider_raw
    return message


def notice_message(partial: str, notice: str) -> dict:
    """A failed reply as shown: the words the model wrote, then Nimbus's notice, kept apart so
    that only the model's own words are ever sent back to it."""
    message = assistant_message(f"{partial} …\n\n{notice}" if partial else notice)
    message["notice"] = notice
    return message


def as_sent(messages: list[dict]) -> list[dict]:
    """The messages as a request carries them: a notice is Nimbus's, not the model's, so it is
    cut from its message, and a message that held nothing else is left out."""
    if not any("notice" in m for m in messages):
        return messages
    sent = []
    for m in messages:
        if "notice" not in m:
            sent.append(m)
            continue
        words = (m.get("content") or "").removesuffix(m["notice"]).strip().removesuffix("…")
        if words.strip() or m.get("tool_calls"):
            sent.append({k: v for k, v in m.items() if k != "notice"} | {"content": words.strip()})
    return sent


def tool_message(call_id: str, name: str, result) -> dict:
    content = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def final_answer(messages: list[dict]) -> str:
    """The last assistant text of a turn: the answer, which already carries what tools found."""
    for m in reversed(messages):
        if m["role"] == "assistant" and (m.get("content") or "").strip():
            return m["content"]
    return ""


def compact_turn(messages: list[dict]) -> list[dict]:
    """Shrink a turn to its question and final answer; tool traffic is dropped."""
    compact = [user_message(messages[0]["content"])]
    answer = final_answer(as_sent(messages))
    if answer:
        compact.append(assistant_message(answer))
    return compact


def split_into_turns(messages: list[dict]) -> list[list[dict]]:
    """Group messages into turns: each user message starts one."""
    turns: list[list[dict]] = []
    for m in messages:
        if m["role"] == "user" or not turns:
            turns.append([])
        turns[-1].append(m)
    return turns


def close_open_tool_calls(messages: list[dict], reason: str) -> list[dict]:
    """Give every tool call without a result one saying why, so the turn stays well-formed."""
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    closed = []
    for m in messages:
        closed.append(m)
        for call in m.get("tool_calls") or []:
            if call["id"] not in answered:
                closed.append(tool_message(call["id"], call["name"], {"error": reason}))
    return closed


class InvalidMessage(ValueError):
    """A message that is not in the neutral format; the text says what is wrong."""


def validate_turn(messages) -> list[dict]:
    """Check one turn is well-formed: starts with a user message, every call has its result."""
    if not isinstance(messages, list) or not messages:
        raise InvalidMessage("a turn must be a non-empty list of messages")
    calls, results = set(), set()
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ROLES:
            raise InvalidMessage(f"message {i}: role must be one of {', '.join(ROLES)}")
        if m["role"] in ("user", "tool") and not isinstance(m.get("content"), str):
            raise InvalidMessage(f"message {i}: content must be a string")
        if m["role"] == "assistant":
            if not isinstance(m.get("content", ""), (str, type(None))):
                raise InvalidMessage(f"message {i}: content must be a string")
            for call in m.get("tool_calls") or []:
                if not (isinstance(call, dict) and isinstance(call.get("id"), str)
                        and isinstance(call.get("name"), str)
                        and isinstance(call.get("arguments"), dict)):
                    raise InvalidMessage(f"message {i}: a tool call needs id, name and arguments")
                calls.add(call["id"])
        if m["role"] == "tool":
            if m.get("tool_call_id") not in calls:
                raise InvalidMessage(f"message {i}: tool result without a matching tool call")
            results.add(m["tool_call_id"])
    if messages[0]["role"] != "user":
        raise InvalidMessage("a turn must start with a user message")
    if any(m["role"] == "user" for m in messages[1:]):
        raise InvalidMessage("a turn holds exactly one user message")
    if calls - results:
        raise InvalidMessage("tool call without a result")
    return messages
