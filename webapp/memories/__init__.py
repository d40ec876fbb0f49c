"""Long-term memory: scoped memories, the distiller that writes them, recall, tools and opt-out.

Importing the package registers its parts: the memory section of every request, the tools, the
after-turn hook and jobs, and the offline model's distiller.
"""
from . import block, jobs, offline_distiller, tools  # noqa: F401  (they register themselves)


def init_app(app) -> None:
    from . import cli, report_views, views
    cli.init_app(app)
    app.register_blueprint(views.bp)
    app.register_blueprint(report_views.bp)
