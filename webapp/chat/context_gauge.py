"""The chat's context gauge: the next request's sections against the budget (the viewer's gauge,
webapp/viewer/gauge.py), what the provider reported for the last one, and which turn goes next.
"""
from dataclasses import dataclass

from flask import current_app

from ..context.assemble import SUMMARY_STRATEGIES
from ..context.request import plan_request
from ..context.summary.section import cached_summary
from ..models import Conversation
from ..storage import newest_turn
from ..viewer.gauge import Gauge, request_gauge

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

    @property
    def percent(self) -> int:
        used = self.gauge.history + sum(s.tokens for s in self.gauge.segments if s.name == "summary")
        return min(round(100 * used / self.budget), 999) if self.budget else 0

    def label(self, name: str) -> str:
        return LABELS.get(name, name.replace("_", " ").capitalize())


def first_call_reported(turn) -> int | None:
    calls = (turn.manifest or {}).get("calls") or [] if turn is not None else []
    return calls[0].get("prompt_tokens") if calls else None


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
    return ChatGauge(gauge, plan.policy.budget, plan.total_tokens,
                     first_call_reported(newest_turn(conversation)), next_out, fate,
                     plan.history.pins_over_budget, bool(summary and summary.failed_at))


def init_app(app) -> None:
    app.jinja_env.globals["context_gauge"] = chat_gauge
    app.jinja_env.globals["summary_strategies"] = SUMMARY_STRATEGIES
