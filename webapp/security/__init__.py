"""Security: one validation layer for what a request carries, refusals people can read,
security headers on every response, and rate limits on what writes."""
from werkzeug.middleware.proxy_fix import ProxyFix


def init_app(app) -> None:
    """Everything but the rate limits; call before the blueprints register their routes."""
    from . import counters, headers, refusals, validation
    counters.init_app(app)  # new guests and failed sign-ins are counted before any view
    validation.init_app(app)  # it replaces the `int` URL converter the routes are built with
    refusals.init_app(app)
    headers.init_app(app)
    hops = app.config["NIMBUS_PROXY_HOPS"]
    if hops:  # behind a reverse proxy: the client's address and scheme come from X-Forwarded-*
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)


def limit_writes(app) -> None:
    """Rate-limit the routes that send to the model or write memories (after the blueprints)."""
    from . import limits
    limits.init_app(app)


def guard_commands(app) -> None:
    """Commands refuse NUL in their arguments as requests do (after every command is added)."""
    from .validation import guard_commands as guard
    guard(app.cli)
