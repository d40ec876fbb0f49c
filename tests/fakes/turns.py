"""Stored-turn stand-ins for testing strategies as pure functions, without a database."""
from dataclasses import dataclass
from datetime import datetime

from webapp.llm.messages import assistant_message, compact_turn, tool_message, user_message
from webapp.llm.tokens import estimate_messages


@dataclass
class FakeTurn:
    seq: int
    messages: list
    compact: list
    full_tokens: int
    compact_tokens: int
    question: str
    tool_calls: int
    created_at: datetime


def fake_turn(seq: int, question: str, tool_calls: int, answer_len: int,
              created_at: datetime) -> FakeTurn:
    """A turn with `tool_calls` calls (each with its result) and an answer of `answer_len` chars."""
    messages = [user_message(question)]
    if tool_calls:
        calls = [{"id": f"c{seq}_{i}", "name": "lookup_order", "arguments": {"order_id": i}}
                 for i in range(tool_calls)]
        messages.append(assistant_message("", calls))
        messages += [tool_message(c["id"], c["name"], {"x": "r" * 40}) for c in calls]
    messages.append(assistant_message("a" * answer_len))
    compact = compact_turn(messages)
    return FakeTurn(seq, messages, compact, estimate_messages(messages),
                    estimate_messages(compact), question, tool_calls, created_at)
