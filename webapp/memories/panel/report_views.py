"""The consolidation report as a staff page: what memory writes did in the shop, per scope."""
from datetime import timedelta

from flask import Blueprint, g, render_template, request

from ...access import staff_required
from ...models import utcnow
from .report import COLUMNS, consolidation_report

bp = Blueprint("memory_report", __name__)
PERIODS = (1, 7, 30, 90, 365)


@bp.get("/staff/memory-report")
@staff_required
def show_report():
    """Show, per scope, the memories added, edited, superseded, merged and deleted lately."""
    days = request.args.get("days", 30, type=int)
    days = days if days in PERIODS else 30
    lines = consolidation_report(g.user.tenant_id, utcnow() - timedelta(days=days))
    return render_template("memories/report.html", lines=lines, columns=COLUMNS, days=days,
                           periods=PERIODS)
