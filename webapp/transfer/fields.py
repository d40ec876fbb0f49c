"""Field readers every import format shares: a typed field, a time, a call's arguments, and a
record's name in a refusal, so the readers (formats.py, chat_apps.py) need not import each other.
"""
import json
from datetime import datetime, timezone

from .importer import InvalidImport


def named(label: str, title) -> str:
    """'conversation 3' → "conversation 3 ('Trip to Lyon')", so an error finds its record."""
    if isinstance(title, str) and title.strip():
        short = " ".join(title.split())[:40]
        return f"{label} ({short!r})" if label else repr(short)
    return label


def field(record: dict, key: str, kind, where: str, required: bool = True):
    """record[key] if it has the type `kind`; a one-line refusal naming `where` otherwise."""
    value = record.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, kind):
        names = {str: "text", list: "a list", dict: "an object"}
        expected = names.get(kind, " or ".join(names.get(k, k.__name__) for k in kind)
                             if isinstance(kind, tuple) else kind.__name__)
        got = "missing" if key not in record else f"got {type(value).__name__}"
        raise InvalidImport(f"{where}, {key}: expected {expected} ({got})")
    return value


def epoch(value, where: str) -> str | None:
    """Seconds since 1970 (ChatGPT, Open WebUI) as an ISO time; None stays None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidImport(f"{where}: expected seconds since 1970, got {json.dumps(value)[:40]}")
    if value > 1e11:  # milliseconds, as some exports write them
        value = value / 1000
    try:
        return datetime.fromtimestamp(value, timezone.utc).isoformat()
    except (OverflowError, OSError, ValueError):
        raise InvalidImport(f"{where}: {value} seconds since 1970 is not a date") from None


def tool_arguments(raw, where: str) -> dict:
    """A call's arguments: OpenAI sends a JSON string; the neutral format keeps the object."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw or "{}")
        except json.JSONDecodeError:
            raise InvalidImport(f"{where}: the arguments are not valid JSON") from None
        if isinstance(value, dict):
            return value
    raise InvalidImport(f"{where}: the arguments must be a JSON object")
