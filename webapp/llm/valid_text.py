"""Text from a provider made storable: valid UTF-8, whatever the server sent.

A JSON body may carry `"\ud83d"` alone (a server cutting an emoji in half), or an emoji's two
surrogates in two streamed chunks; Python decodes both to str that no database can encode.
"""
from typing import Iterator


def valid_text(value):
    """`value` (str, or lists and dicts of them) with surrogate pairs joined and lone surrogates
    replaced by U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [valid_text(item) for item in value]
    if isinstance(value, dict):
        return {valid_text(key): valid_text(item) for key, item in value.items()}
    return value


def is_high_surrogate(char: str) -> bool:
    return "\ud800" <= char <= "\udbff"


def valid_stream(chunks: Iterator) -> Iterator:
    """A provider's stream with every text chunk valid; a chunk ending in half of a pair waits for
    the next chunk to complete it. Replies (and their tool calls) are cleaned as a whole."""
    held = ""
    for chunk in chunks:
        if isinstance(chunk, str):
            text = held + chunk
            held = text[-1] if text and is_high_surrogate(text[-1]) else ""
            if text[:len(text) - len(held)]:
                yield valid_text(text[:len(text) - len(held)])
            continue
        if held:
            yield valid_text(held)
            held = ""
        if hasattr(chunk, "text"):
            chunk.text = valid_text(chunk.text)
            for call in getattr(chunk, "tool_calls", None) or []:
                call.id, call.name = valid_text(call.id), valid_text(call.name)
                call.arguments = valid_text(call.arguments)
            chunk.provider_raw = valid_text(chunk.provider_raw)
        yield chunk
    if held:
        yield valid_text(held)
