"""What-if settings from a request: validated into a Policy to preview, saved only when applied."""
from collections.abc import Mapping

from flask import current_app

from ..extensions import db
from ..context import STRATEGIES, Policy
from ..models import utcnow

FIELDS = ("strategy", "budget", "recent_turns", "max_age_days")
# name -> (type, lowest, highest) of the numeric settings a what-if may change (as `show` takes)
NUMBERS = {"budget": (int, 1, 1_000_000), "recent_turns": (int, 0, 100),
           "max_age_days": (float, 0.01, 36_500)}


class WhatIfError(ValueError):
    """A what-if value we cannot preview; the text says which and why."""


def parse_what_if(values: Mapping) -> dict:
    """The overrides present in `values` (empty fields mean "keep the conversation's own")."""
    overrides = {}
    strategy = (values.get("strategy") or "").strip()
    if strategy:
        if strategy not in STRATEGIES:
            raise WhatIfError(f"unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")
        overrides["strategy"] = strategy
    for name, (kind, low, high) in NUMBERS.items():
        text = (values.get(name) or "").strip()
        if not text:
            continue
        try:
            number = kind(text)
        except ValueError:
            noun = "a whole number" if kind is int else "a number"
            raise WhatIfError(f"{name} must be {noun}, not {text!r}") from None
        if not low <= number <= high:
            raise WhatIfError(f"{name} must be between {low:,} and {high:,}")
        overrides[name] = number
    return overrides


def what_if_policy(conversation, config, values: Mapping) -> Policy:
    return Policy.for_conversation(conversation, config, **parse_what_if(values))


def what_if_query(policy: Policy, stored: Policy) -> dict:
    """The query parameters that reproduce `policy` on top of the stored settings (for links)."""
    return {name: getattr(policy, name) for name in FIELDS
            if getattr(policy, name) != getattr(stored, name)}


def apply_policy(conversation, policy: Policy) -> None:
    """Save what the preview changed as the conversation's own; the rest keeps following config."""
    changed = what_if_query(policy, Policy.for_conversation(conversation, current_app.config))
    if "strategy" in changed:
        conversation.strategy = changed.pop("strategy")
    conversation.settings = {**(conversation.settings or {}), **changed}
    conversation.updated_at = utcnow()
    db.session.commit()
