"""The viewer's data: every stored turn beside what the next request sends for it, and why.

Fates come only from plan_request() (the planner whose plan the agent loop sends); this module lines them up
with the stored turns, sizes and traces, for the page, the JSON and the tests alike.
"""
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, select

from ..extensions import db
from ..context import STRATEGIES, ContextPlan, Policy, Section, plan_request, memory_count
from ..models import Conversation, Turn
from .chart import CostChart, cost_chart
from .fates import FateRun, Fates
from .gauge import Gauge, request_gauge
from .series import cost_series
from .strip import Strip, fate_strip

SECTION_TITLES = {"system": "System prompt", "memory": "Long-term memory",
                  "summary": "Rolling summary", "history": "Conversation history"}
NOT_FINISHED = "not finished yet, so nothing of it is sent"


@dataclass
class TurnRow:
    """One stored turn (left column) and what the next request sends of it (right column)."""
    seq: int
    outcome: str
    created_at: datetime
    stored: list[dict]
    fate: str | None  # None while the turn is still pending
    reason: str
    sent: list[dict]
    full_tokens: int  # the whole turn, sized like the plan sizes what it sends
    sent_tokens: int
    prompt_tokens: int | None
    completion_tokens: int | None
    context_tokens: int
    resend_tokens: int
    trace: list[dict]
    in_summary: bool = False  # sent by the history and covered by the summary too
    model_calls: int = 1
    memories_used: int | None = None  # memories its request carried; None without a manifest

    @property
    def number(self) -> int:
        return self.seq + 1

    @property
    def cost(self) -> int:
        """Prompt tokens over all the turn's model calls, counted as the chart counts them."""
        return self.context_tokens if self.prompt_tokens is None else self.prompt_tokens

    @property
    def requested(self) -> bool:
        """False for a turn imported from another app: it made no model call here."""
        return self.prompt_tokens is not None or self.context_tokens > 0

    @property
    def cost_counted_by(self) -> str:
        if not self.requested:
            return "imported, no request"
        return "estimated" if self.prompt_tokens is None else "provider-reported"


@dataclass
class SectionView:
    name: str
    title: str
    tokens: int
    percent: int  # share of the whole request
    messages: list[dict]
    detail: dict


@dataclass
class ViewerReport:
    conversation: Conversation
    policy: Policy
    stored_policy: Policy
    plan: ContextPlan
    sections: list[SectionView]
    gauge: Gauge
    rows: list[TurnRow]
    chart: CostChart
    fate_counts: dict[str, int]
    turn_total: int
    runs: list[FateRun] = field(default_factory=list)
    strip: Strip | None = None
    fates: Fates | None = None
    older_before: int | None = None  # `before` of the page of older turns, if any
    has_newer: bool = False  # a page of newer turns exists ...
    newer_before: int | None = None  # ... at this `before` (None: the newest page)
    strategies: list[str] = field(default_factory=lambda: list(STRATEGIES))
    live_sources: set[str] = field(default_factory=set)  # memories' source conversations not deleted
    counted_replies: int = 0  # replies whose prompt the provider counted: what the ratio learnt from

    @property
    def what_if(self) -> bool:
        """True when the page previews settings the conversation does not have."""
        return self.policy != self.stored_policy


def section_view(section: Section, total: int) -> SectionView:
    title = SECTION_TITLES.get(section.name, section.name.replace("_", " ").capitalize())
    percent = round(100 * section.tokens / total) if total else 0
    return SectionView(section.name, title, section.tokens, percent, section.messages,
                       dict(section.detail or {}))


def live_sources(sections: list[SectionView]) -> set[str]:
    """The memories' source conversations that still exist, so a deleted one is named as such."""
    ids = {m.get("conversation_id") for s in sections if s.name == "memory"
           for m in s.detail.get("memories") or [] if isinstance(m, dict)} - {None}
    if not ids:
        return set()
    return set(db.session.scalars(select(Conversation.id).where(
        Conversation.id.in_(ids), Conversation.deleted_at.is_(None))))


def page_of_turns(conversation_id: str, before: int | None, size: int) -> list[Turn]:
    query = select(Turn).where(Turn.conversation_id == conversation_id)
    if before is not None:
        query = query.where(Turn.seq < before)
    return list(reversed(db.session.scalars(query.order_by(Turn.seq.desc()).limit(size)).all()))


def model_calls(turn: Turn) -> int:
    if turn.prompt_tokens is None and not turn.context_tokens:
        return 0  # imported: no request was made here
    manifest = turn.manifest or {}
    if manifest.get("calls"):
        return len(manifest["calls"])
    return max(1, len({t.get("step") for t in turn.trace or [] if t.get("step")}))


def counted_replies(conversation_id: str) -> int:
    """Replies the provider counted the prompt of: the token ratio was learnt from these."""
    return db.session.scalar(select(func.count()).select_from(Turn).where(
        Turn.conversation_id == conversation_id, Turn.prompt_tokens.is_not(None))) or 0


def turn_row(turn: Turn, fates: Fates, ratio: float) -> TurnRow:
    if turn.outcome == "pending":
        fate, reason, sent, sent_tokens = None, NOT_FINISHED, [], 0
    else:
        fate, reason = fates.of(turn.seq)
        sent, sent_tokens = fates.sent(turn.seq)
    return TurnRow(turn.seq, turn.outcome, turn.created_at, turn.messages, fate, reason, sent,
                   round(turn.full_tokens * ratio), sent_tokens, turn.prompt_tokens,
                   turn.completion_tokens, turn.context_tokens, turn.resend_tokens,
                   list(turn.trace or []), fates.in_summary(turn.seq), model_calls(turn),
                   None if turn.outcome == "pending" else memory_count(turn.manifest))


def build_report(conversation: Conversation, config, policy: Policy | None = None,
                 before: int | None = None, size: int | None = None) -> ViewerReport:
    """Assemble the next request under `policy` and line it up with a page of stored turns
    (`size` of them; the viewer's page size by default)."""
    stored_policy = Policy.for_conversation(conversation, config)
    policy = policy or stored_policy
    plan = plan_request(conversation, config, policy)
    total = plan.total_tokens
    size = size or config["NIMBUS_VIEWER_PAGE_TURNS"]
    turns = page_of_turns(conversation.id, before, size)
    fates = Fates(plan, conversation.id)
    series = cost_series(conversation.id, conversation.turn_count)
    overlap = fates.overlap()
    report = ViewerReport(
        conversation, policy, stored_policy, plan,
        [section_view(s, total) for s in plan.sections],
        request_gauge([(s.name, s.tokens) for s in plan.sections], policy.budget,
                      plan.policy.history_budget, [f.seq for f in overlap],
                      sum(f.tokens for f in overlap)),
        [turn_row(t, fates, plan.ratio) for t in turns],
        cost_chart(series.turns, series.sent, series.resend, series.counts, series.unrequested),
        fates.counts(), conversation.turn_count, fates.runs())
    report.strip, report.fates = fate_strip(report.runs, fates.through), fates
    report.live_sources = live_sources(report.sections)
    report.counted_replies = counted_replies(conversation.id)
    if turns and turns[0].seq > 0:
        report.older_before = turns[0].seq
    if turns and turns[-1].seq < conversation.turn_count - 1:
        end = turns[-1].seq + 1 + size
        report.has_newer = True
        report.newer_before = end if end < conversation.turn_count else None
    return report
