"""Long-term memory: scoped memories, the distiller that writes them, recall, tools and opt-out."""


def init_app(app) -> None:
    """Wire memory into the app: the memory section of every request (before any summary), the
    tools, the after-turn hook and jobs (with the sweep for vectors an outage lost), the offline
    model's distiller, commands and pages."""
    from .. import hooks
    from ..agent.tools import register_tools
    from ..jobs import register_jobs
    from . import block, cli, jobs, tools
    from .distiller import offline as offline_distiller
    from .panel import report_views, views
    from .search import lost_vectors
    hooks.add(hooks.SECTION_SOURCES, block.memory_section, first=True)
    register_tools(*tools.TOOLS)
    hooks.add(hooks.AFTER_TURN, jobs.after_turn)
    register_jobs(*jobs.JOBS, *lost_vectors.JOBS)
    hooks.add(hooks.OFFLINE_TASKS, offline_distiller.distil_offline)
    cli.init_app(app)
    app.register_blueprint(views.bp)
    app.register_blueprint(report_views.bp)
