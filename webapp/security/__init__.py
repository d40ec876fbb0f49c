"""Security: one validation layer for what a request carries, refusals people can read,
security headers on every response, and rate limits on what writes.

validation.py checks what a request or command carries (ids, NUL, UTF-8, lengths, `next`),
refusals.py says no in a page or JSON people can read, limits.py and counters.py count writes,
new guests and failed sign-ins, headers.py sets the response headers. Other packages import
what is named below; nothing else (tests/test_layers.py holds the rule).
"""
from werkzeug.middleware.proxy_fix import ProxyFix

from .counters import counters as shared_counters
from .limits import refuse_new_guest
from .refusals import ERROR_SLOTS, redis_outages, refusal, refuse_http_error, wants_json
from .validation import (NUL_MESSAGE, UTF8_MESSAGE, bounded_int, has_nul, length_problem,
                         safe_next, whole_number)

__all__ = ["ERROR_SLOTS", "NUL_MESSAGE", "UTF8_MESSAGE", "bounded_int", "has_nul",
           "length_problem", "limit_writes", "guard_commands", "redis_outages", "refusal",
           "refuse_http_error", "refuse_new_guest", "safe_next", "shared_counters", "wants_json",
           "whole_number"]


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
