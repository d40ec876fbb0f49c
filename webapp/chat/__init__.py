"""The chat page: its routes, the sidebar, streaming a reply, steering and summary views."""


def init_app(app) -> None:
    """The chat blueprint with every module that adds routes to it, its template helpers, and
    the minute sweep that finishes deletions, and the job that lets a real model write titles."""
    from ..jobs import register_jobs
    from .. import hooks
    from . import (branch_views, context_gauge, conversation_views, deletion_jobs,
                   feedback_views, memories_used, model_titles, organize_views, rendering,
                   share_views, sidebar_views, steer_views, summary_views, trim_notes, views)
    for helpers in (rendering, trim_notes, context_gauge, memories_used, steer_views,
                    branch_views):
        helpers.init_app(app)
    # views owns the blueprint; the others add routes to it: sidebar actions (rename, delete,
    # undo; pin and archive), owners' read-only shares, answer feedback, steering (pin, leave
    # out), the rolling summary's panel, the sidebar's next pages, and a turn's versions
    # (regenerate, edit, switch).
    for routes in (views, conversation_views, organize_views, share_views, feedback_views,
                   steer_views, summary_views, sidebar_views, branch_views):
        if routes.bp.name not in app.blueprints:
            app.register_blueprint(routes.bp)
    register_jobs(deletion_jobs.finish_deletions_every_minute, model_titles.write_title)
    hooks.add(hooks.AFTER_TURN, model_titles.queue_title)
