"""Refusals people can read: a 4xx says what was wrong where they look, never a bare error page.

An htmx request gets the message swapped into the page's error slot (the chat's message-box
error, or the page-wide alert every page has); a plain request gets a small page with a way back.
"""
import logging

from flask import current_app, render_template, request, url_for
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from werkzeug.exceptions import (BadRequest, HTTPException, RequestEntityTooLarge,
                                 RequestURITooLarge)

from ..extensions import db, htmx

log = logging.getLogger(__name__)

ERROR_SLOTS = "#composer-error, #page-alert"  # the first in the page wins: the chat's own slot
GENERIC = {400: "The request could not be understood.",
           413: "That was too much to send at once. Please send something shorter.",
           429: "Too many requests. Please wait a moment and try again."}


def refusal(message: str, status: int, headers: dict | None = None):
    """The response for a refused request, as a partial (htmx) or a page."""
    if htmx:
        body = render_template("_refusal.html", message=message)
        return body, status, {"HX-Retarget": ERROR_SLOTS, "HX-Reswap": "innerHTML", **(headers or {})}
    return render_template("refused.html", message=message, status=status), status, headers or {}


def message_of(error: HTTPException) -> str:
    """The error's own description when a view gave one, else a plain sentence for its status."""
    default = type(error).description
    if error.description and error.description != default:
        return error.description
    return GENERIC.get(error.code, default)


def wants_json() -> bool:
    """A JSON document or an event stream is asked for: a refusal is JSON, not a page."""
    return request.path.endswith((".json", "/stream")) or request.is_json or \
        request.accept_mimetypes.best in ("application/json", "text/event-stream")


def refuse_http_error(error: HTTPException):
    if wants_json():
        return {"error": message_of(error)}, error.code
    return refusal(message_of(error), error.code)


DATABASE_DOWN = ("Nimbus cannot reach its database right now, so nothing was changed. "
                 "Please try again in a few seconds.")
# Connection lost or refused, pool exhausted, disk full, read-only file: the request is refused
# as a whole (the session rolled back) and the client is told when to come back.
OUTAGES = (OperationalError, InterfaceError, PoolTimeout)


REDIS_DOWN = ("Nimbus cannot reach its lock and job service right now, so nothing was changed. "
               "Please try again in a few seconds.")


def redis_outages() -> tuple:
    """Redis refused or timed out (the conversation lock, the job queue), when redis is installed."""
    try:
        import redis
    except ImportError:
        return ()
    return (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


def refuse_database_down(error):
    log.warning("%s unavailable: %s", "redis" if isinstance(error, redis_outages()) else "database",
                str(error).splitlines()[0][:200])
    message = REDIS_DOWN if isinstance(error, redis_outages()) else DATABASE_DOWN
    try:
        db.session.rollback()
    except Exception:  # the connection is gone: nothing to roll back
        pass
    headers = {"Retry-After": str(current_app.config.get("NIMBUS_BUSY_RETRY_AFTER", 3))}
    if wants_json():
        return {"error": message}, 503, headers
    # Rendered without the app's context processors: they read the user from the database.
    template = "_refusal.html" if htmx else "outage.html"
    body = current_app.jinja_env.get_template(template).render(
        message=message, request=request, url_for=url_for)
    if htmx:
        headers.update({"HX-Retarget": ERROR_SLOTS, "HX-Reswap": "innerHTML"})
    return body, 503, headers


def init_app(app) -> None:
    for outage in OUTAGES + redis_outages():
        app.register_error_handler(outage, refuse_database_down)
    app.register_error_handler(BadRequest, refuse_http_error)
    app.register_error_handler(RequestEntityTooLarge, refuse_http_error)
    app.register_error_handler(RequestURITooLarge, refuse_http_error)
