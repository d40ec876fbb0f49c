"""The viewer: each stored turn beside what the next request sends of it, and why."""


def init_app(app) -> None:
    """The viewer blueprint: its pages (views) and the debugging and demo routes on it."""
    from ..agent import assistant_name_of
    from . import inspect_views, views
    # The viewer speaks as the chat does: answers under the persona the conversation's shop chose.
    app.jinja_env.globals["assistant_of"] = lambda conversation: assistant_name_of(
        getattr(conversation, "tenant", None))
    for routes in (views, inspect_views):
        if routes.bp.name not in app.blueprints:
            app.register_blueprint(routes.bp)
