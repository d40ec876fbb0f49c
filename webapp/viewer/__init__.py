"""The viewer: each stored turn beside what the next request sends of it, and why.

report.py builds a conversation's report (rows, sections, fates, the gauge, the cost chart),
views.py and inspect_views.py are its pages, whatif.py and compare.py replay it under another
policy, private_results.py says what a shared page may show. Other packages import what is
named below; nothing else (tests/test_layers.py holds the rule).
"""
from .gauge import Gauge, request_gauge
from .private_results import hide_memories, hide_private_results, without_private_results
from .report import build_report
from .views import report_for

__all__ = ["Gauge", "build_report", "hide_memories", "hide_private_results", "report_for",
           "request_gauge"]


def init_app(app) -> None:
    """The viewer blueprint: its pages (views) and the debugging and demo routes on it."""
    from ..agent import assistant_name_of
    from . import branch_views, inspect_views, views
    # The viewer speaks as the chat does: answers under the persona the conversation's shop chose.
    app.jinja_env.globals["assistant_of"] = lambda conversation: assistant_name_of(
        getattr(conversation, "tenant", None))
    # A kept version is read at render time, so a shared page hides its private results there.
    app.jinja_env.filters["without_private_results"] = without_private_results
    for routes in (views, inspect_views, branch_views):
        if routes.bp.name not in app.blueprints:
            app.register_blueprint(routes.bp)
