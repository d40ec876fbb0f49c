"""Context: how stored turns become the next model call's request, under a token budget.

Where things are decided: `assemble.py` (the sections, every turn's fate), `plans.py` (the
policy and what a plan holds), `strategies.py` (the table of strategies; how each keeps turns),
`tail.py` (the newest-first read), `pins.py` (turns pinned or left out from the chat),
`manifest.py` (what a request sent), and `summary/` (the rolling summary: its table, its section, the fold, its job, the offline summarizer).
"""


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
