"""The viewer: each stored turn beside what the next request sends of it, and why."""


def init_app(app) -> None:
    """The viewer blueprint: its pages (views) and the debugging and demo routes on it."""
    from . import inspect_views, views
    for routes in (views, inspect_views):
        if routes.bp.name not in app.blueprints:
            app.register_blueprint(routes.bp)
