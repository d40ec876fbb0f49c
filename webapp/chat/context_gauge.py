"""The chat's context gauge: the next request's sections against the budget (the viewer's gauge,
webapp/viewer/gauge.py), what the provider reported for the last one, and which turn goes next.
"""
from dataclasses import dataclass

from flask import current_app

from ..context import SUMMARY_STRATEGIES, plan_request, cached_summary
from ..models import Conversation
from ..storage import newest_turn
from ..viewer import Gauge, request_gauge

LABELS = {"system": "System prompt", "memory": "Memory", "summary": "Summary",
          "history": "History"}


@dataclass
class ChatGauge:
    gauge: Gauge
    budget: int  # what the summary and history may use together
    estimated: int  # the next request before its question, our calibrated estimate
    reported: int | None  # the last request's prompt tokens as the provider counted them
    next_out: int | None  # the oldest turn the history still sends (not pinned)
    next_fate: str  # "summarized" or "dropped"
    pins_over_budget: bool
    summary_failed: bool = False
    tool_tokens: int = 0  # the tool descriptions the next request carries besides, estimated
    reported_estimate: int | None = None  # what we estimated for the call `reported` counted
    ratio: float = 1.0  # what estimates are scaled by, learnt from the provider's counts

    @property
    def estimate_off(self) -> int | None:
        """How far our estimate of the last request was from the provider's count, in percent
        of the count (negative: we estimated too few)."""
        if not self.reported or self.reported_estimate is None:
            return None
        return round(100 * (self.reported_estimate - self.reported) / self.reported)

    @property
    def percent(self) -> int:
        used = self.gauge.history + sum(s.tokens for s in self.gauge.segments if s.name == "summary")
        return min(round(100 * used / self.budget), 999) if self.budget else 0

    def label(self, name: str) -> str:
        return LABELS.get(name, name.replace("_", " ").capitalize())


def first_call(turn) -> dict:
    """The newest reply's first model call as its manifest recorded it ({} if none)."""
    calls = (turn.manifest or {}).get("calls") or [] if turn is not None else []
    return calls[0] if calls and isinstance(calls[0], dict) else {}


def chat_gauge(conversation: Conversation | None) -> ChatGauge | None:
    """None for a conversation not started yet."""
    if conversation is None or not conversation.turn_count:
        return None
    try:
        plan = plan_request(conversation, current_app.config)
    except ValueError:  # settings no strategy takes (an old import, a hand edit): no gauge, no 500
        return None
    sections = [(s.name, s.tokens) for s in plan.sections]
    gauge = request_gauge(sections, plan.policy.budget, plan.policy.history_budget)
    window = plan.history.window()
    next_out = window[0].seq if window else None  # the oldest the strategy still sends
    fate = "summarized" if plan.policy.strategy in SUMMARY_STRATEGIES else "dropped"
    summary = cached_summary(conversation) if conversation.has_summary else None
    last = first_call(newest_turn(conversation))
    estimate = last.get("estimated_tokens")
    return ChatGauge(gauge, plan.policy.budget, plan.total_tokens, last.get("prompt_tokens"),
                     next_out, fate, plan.history.pins_over_budget,
                     bool(summary and summary.failed_at),
                     plan.shape.tool_tokens if plan.shape else 0,
                     None if estimate is None else estimate + (last.get("tool_tokens") or 0),
                     plan.ratio)


def init_app(app) -> None:
    app.jinja_env.globals["context_gauge"] = chat_gauge
    app.jinja_env.globals["summary_strategies"] = SUMMARY_STRATEGIES
