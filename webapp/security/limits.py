"""Rate limits on what writes: sends (each costs a model call) and memory writes, per browser
session and per IP, with Flask-Limiter; counters in Redis with REDIS_URL, else in memory.

The limits apply by endpoint (WRITES below), so a view need not know about them; a new route
that sends to the model or writes memories joins by adding its endpoint there.
"""
import time

from flask import current_app, g, request
from flask_limiter import Limiter, RateLimitExceeded
from flask_limiter.util import get_remote_address

from .refusals import refusal

# endpoint -> the kind of write it is; endpoints of one kind share their counters
WRITES = {
    "chat.start_conversation": "sends",
    "chat.send_message": "sends",
    "memories.add_memory": "memory",
    "memories.edit_memory": "memory",
}
MESSAGES = {
    "sends": "You are sending messages faster than Nimbus can answer them. "
             "Please wait a moment and send again.",
    "memory": "That is a lot of memory changes at once. Please wait a moment and try again.",
}


def by_session() -> str:
    """The browser's person (its account or guest); a request without one counts by its address."""
    user = g.get("user")
    return f"user:{user.id}" if user is not None else f"ip:{get_remote_address()}"


def config_key(kind: str, per: str) -> str:
    return f"NIMBUS_RATE_LIMIT_{'SENDS' if kind == 'sends' else 'MEMORY'}_PER_{per}"


def refuse_too_fast(error: RateLimitExceeded):
    """429 with what to do, where the visitor looks, and when to try again."""
    breached = current_app.extensions["nimbus_limiter"].current_limit
    wait = max(1, int(breached.reset_at - time.time())) if breached else 60
    message = MESSAGES[WRITES.get(request.endpoint, "sends")]  # says the wait Retry-After says
    message = message.replace("a moment", f"{wait} second{'s' if wait != 1 else ''}")
    return refusal(message, 429, {"Retry-After": str(wait)})


def init_app(app) -> None:
    """Attach the limits to the WRITES endpoints (call after the blueprints are registered)."""
    config = app.config
    config["RATELIMIT_ENABLED"] = bool(config["NIMBUS_RATE_LIMIT_ENABLED"])
    config["RATELIMIT_STORAGE_URI"] = config.get("REDIS_URL") or "memory://"
    # Redis down: count in this worker's memory meanwhile (per worker, so looser), never a 500;
    # Flask-Limiter goes back to Redis once it answers again.
    config.setdefault("RATELIMIT_IN_MEMORY_FALLBACK_ENABLED", True)
    config.setdefault("RATELIMIT_KEY_PREFIX", "nimbus-limits")  # Redis keys: LIMITS:LIMITER/<prefix>/…
    # No X-RateLimit-* headers: they would also rewrite the Retry-After of a busy server's 503.
    config["RATELIMIT_HEADERS_ENABLED"] = False
    limiter = Limiter(get_remote_address, app=app)
    app.extensions["nimbus_limiter"] = limiter  # the limits hold it weakly: keep it alive
    for endpoint, kind in WRITES.items():
        view = app.view_functions.get(endpoint)
        if view is None:
            continue
        for per, key in (("SESSION", by_session), ("IP", get_remote_address)):
            view = limiter.shared_limit(config[config_key(kind, per)], scope=f"{kind}-{per}",
                                        key_func=key, error_message=MESSAGES[kind])(view)
        app.view_functions[endpoint] = view
    app.register_error_handler(RateLimitExceeded, refuse_too_fast)
