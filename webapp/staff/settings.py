"""Tenant settings an admin chooses: context defaults for new requests and the assistant's persona.

They sit between the app's configuration and a conversation's own settings: a conversation's
choice wins, then the shop's, then NIMBUS_* defaults. Read by context assembly (budget, newest
turns), the summary (style), the system prompt (name, extra instructions) and new conversations
(strategy).
"""
from ..extensions import db
from ..security import whole_number
from ..context import STRATEGIES, STYLES

MAX_BUDGET = 1_000_000
MAX_RECENT = 100
MAX_NAME_CHARS = 60
MAX_INSTRUCTIONS_CHARS = 2000


class InvalidSettings(ValueError):
    """A value an admin can correct; the message says how."""


def whole(form, name: str, low: int, high: int, label: str) -> int | None:
    value = (form.get(name) or "").strip()
    if not value:
        return None
    number = whole_number(value, low, high)
    if number is None:
        raise InvalidSettings(f"{label} must be a whole number from {low} to {high:,}")
    return number


def parse_settings(form) -> dict:
    """The settings an admin posted, validated; empty fields mean "use the app's default"."""
    strategy = (form.get("strategy") or "").strip()
    if strategy and strategy not in STRATEGIES:
        raise InvalidSettings(f"unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")
    style = (form.get("summary_style") or "").strip()
    if style and style not in STYLES:
        raise InvalidSettings(f"unknown summary style {style!r}; choose from {', '.join(STYLES)}")
    name = " ".join((form.get("assistant_name") or "").split())
    if len(name) > MAX_NAME_CHARS:
        raise InvalidSettings(f"the assistant's name is at most {MAX_NAME_CHARS} characters")
    instructions = (form.get("instructions") or "").strip().replace("\r\n", "\n")
    if len(instructions) > MAX_INSTRUCTIONS_CHARS:
        raise InvalidSettings(f"extra instructions are at most {MAX_INSTRUCTIONS_CHARS:,} characters")
    values = {"strategy": strategy, "budget": whole(form, "budget", 1, MAX_BUDGET, "the budget"),
              "recent_turns": whole(form, "recent_turns", 0, MAX_RECENT, "newest turns in full"),
              "summary_style": style, "assistant_name": name, "instructions": instructions}
    return {k: v for k, v in values.items() if v not in (None, "")}


def save_settings(tenant, values: dict) -> None:
    tenant.settings = dict(values)  # a new dict, so the JSON column is seen as changed
    db.session.commit()
