"""The viewer's report as plain JSON (GET /c/<id>/viewer.json): the schema is in docs/viewer.md."""
from dataclasses import asdict

from .report import TurnRow, ViewerReport


def turn_payload(row: TurnRow) -> dict:
    return {"seq": row.seq, "number": row.number, "outcome": row.outcome,
            "created_at": row.created_at.isoformat(), "fate": row.fate, "reason": row.reason,
            "stored": row.stored, "sent": row.sent,
            "in_summary": row.in_summary,
            "tokens": {"full": row.full_tokens, "sent": row.sent_tokens},
            "usage": {"prompt_tokens": row.prompt_tokens,
                      "completion_tokens": row.completion_tokens,
                      "context_tokens": row.context_tokens, "resend_tokens": row.resend_tokens,
                      "model_calls": row.model_calls, "cost": row.cost,
                      "counted_by": row.cost_counted_by},
            "trace": row.trace}


def report_payload(report: ViewerReport) -> dict:
    """Everything the page shows, for tools and tests."""
    conversation, chart, gauge = report.conversation, report.chart, report.gauge
    return {
        "conversation": {"id": conversation.id, "title": conversation.title,
                         "strategy": conversation.strategy,
                         "settings": conversation.settings or {},
                         "turn_count": conversation.turn_count},
        "policy": asdict(report.policy),
        "stored_policy": asdict(report.stored_policy),
        "what_if": report.what_if,
        "strategies": report.strategies,
        "request": {"total_tokens": report.plan.total_tokens, "token_ratio": report.plan.ratio,
                    "sections": [{"name": s.name, "title": s.title, "tokens": s.tokens,
                                  "percent": s.percent, "messages": s.messages,
                                  "detail": s.detail} for s in report.sections],
                    "messages": report.plan.messages,
                    "window": report.plan.shape.payload() if report.plan.shape else None},
        "gauge": {"total": gauge.total, "history": gauge.history, "budget": gauge.budget,
                  "history_budget": gauge.history_budget,
                  "history_percent": gauge.history_percent, "over_budget": gauge.over_budget,
                  "budget_mark": gauge.budget_mark,
                  "overlap": gauge.overlap, "overlap_seqs": gauge.overlap_seqs,
                  "segments": [asdict(s) for s in gauge.segments]},
        "fates": report.fate_counts,
        "runs": [asdict(run) for run in report.runs],
        "turns": [turn_payload(row) for row in report.rows],
        "page": {"turn_count": report.turn_total, "older_before": report.older_before,
                 "has_newer": report.has_newer, "newer_before": report.newer_before},
        "cost": {"turns": chart.turns, "sent": chart.sent, "resend": chart.resend,
                 "counts": chart.counts, "turns_per_point": chart.turns_per_point,
                 "total_sent": chart.total_sent, "total_resend": chart.total_resend,
                 "saved": chart.saved, "percent_sent": chart.percent_sent,
                 "summary": chart.sentence},
    }
