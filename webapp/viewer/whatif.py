"""What-if settings from a request: validated into a Policy to preview, saved only when applied."""
from collections.abc import Mapping

from ..extensions import db
from ..memory.context import STRATEGIES, Policy
from ..models import utcnow

FIELDS = ("strategy", "budget", "recent_turns")
BOUNDS = {"budget": (0, 1_000_000), "recent_turns": (0, 100)}


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
    for name, (low, high) in BOUNDS.items():
        text = (values.get(name) or "").strip()
        if not text:
            continue
        try:
            number = int(text)
        except ValueError:
            raise WhatIfError(f"{name} must be a whole number, not {text!r}") from None
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
    """Make the previewed settings the conversation's own: its next request uses them."""
    conversation.strategy = policy.strategy
    conversation.settings = {**(conversation.settings or {}), "budget": policy.budget,
                             "recent_turns": policy.recent_turns}
    conversation.updated_at = utcnow()
    db.session.commit()
