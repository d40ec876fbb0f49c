"""What the banner says of the configured provider after it was first asked: the outcome of the
newest reply it was asked for, read from the stored turns, so every worker says the same, an outage
shows after one failed reply (and after a reload) and clears with the next reply that succeeds."""
from sqlalchemy import select

from ..extensions import db
from ..models import Turn

LOOKED_AT = 5  # newest finished turns read for one that asked the provider (most did)
CALLED = ("answered", "cut_off", "step_limit", "api_error")  # outcomes a model call decided
ANSWERED_KINDS = {"answer", "cut_off", "tool_call"}  # trace steps the provider's answer made


def last_failure() -> str | None:
    """Why the newest reply that asked the provider failed; None when it answered (or none did)."""
    rows = db.session.execute(select(Turn.outcome, Turn.trace).where(Turn.outcome.in_(CALLED))
                              .order_by(Turn.id.desc()).limit(LOOKED_AT)).all()
    for outcome, trace in rows:
        failed = [step for step in trace or [] if step.get("kind") == "error"
                  and str(step.get("line", "")).startswith("API error")]
        if outcome == "api_error" and failed:
            return str(failed[-1]["line"]).removeprefix("API error: ")[:200]
        if any(step.get("kind") in ANSWERED_KINDS for step in trace or []):
            return None
    return None
