"""Context: how stored turns become the next model call's request, under a token budget.

Where things are decided: `assemble.py` (the sections, every turn's fate), `plans.py` (the
policy and what a plan holds), `strategies.py` (the table of strategies; how each keeps turns),
`tail.py` (the newest-first read), `pins.py` (turns pinned or left out from the chat),
`manifest.py` (what a request sent), and `summary/` (the rolling summary: its table, its section, the fold, its job, the offline summarizer).
`request.py` plans the next request (the one planner the loop and every view call),
`tool_fit.py` decides which tools it carries (as many as the window holds),
`fate_runs.py` groups turns by fate for the CLI, `hints.py` spares lookups that would find
nothing. Other packages import what is named below, or the tables (summary/models.py); nothing
else (tests/test_layers.py holds the rule).
"""
from .assemble import (COMPACTED, FULL, KEPT, STRATEGIES, SUMMARY_STRATEGIES, ContextPlan,
                       Policy, Section, sized)
from .fate_runs import fate_lines
from .manifest import (ManifestRecorder, memories_sent, memory_count, messages_hash, store_texts,
                       text_hash)
from .pins import MarkError, set_mark
from .plans import EXCLUDED, WORDS_MAY_REMAIN
from .request import plan_request, window_problem
from .summary.fold import STYLES, Said
from .tool_fit import ToolFit, fit_tools
from .summary.jobs import RETRY_DELAY, fold_due, fold_summary, queue_summary
from .summary.section import cached_summary, refresh_summary, style_of
from .hints import listen as listen_for_hints, memories_may_apply  # last: it reads memories' table

__all__ = ["COMPACTED", "EXCLUDED", "FULL", "KEPT", "RETRY_DELAY", "STRATEGIES", "STYLES",
           "SUMMARY_STRATEGIES", "WORDS_MAY_REMAIN", "ContextPlan", "ManifestRecorder",
           "MarkError", "Policy", "Said", "Section", "cached_summary", "fate_lines", "fold_due",
           "fold_summary", "listen_for_hints", "memories_may_apply", "memories_sent",
           "memory_count", "messages_hash", "plan_request", "queue_summary", "refresh_summary",
           "set_mark", "sized", "store_texts", "style_of", "text_hash", "ToolFit", "fit_tools",
           "window_problem"]


def init_app(app) -> None:
    """Wire the rolling summary into every request, the offline model and the after-turn hook;
    add the `flask context` commands."""
    from .. import hooks
    from ..jobs import register_jobs
    from . import cli
    from .summary import jobs, offline, section
    hooks.add(hooks.RESERVATIONS, section.summary_reservation)
    hooks.add(hooks.SECTION_SOURCES, section.summary_section)
    hooks.add(hooks.OFFLINE_TASKS, offline.summarize)
    hooks.add(hooks.AFTER_TURN, jobs.queue_summary)
    register_jobs(jobs.fold_summary)
    cli.init_app(app)
