"""Rate limits with Flask-Limiter: sends (each costs a model call) and memory writes per browser
session and per IP; sign-ins, sign-ups and share-link opens per IP (nobody is signed in yet), and
new guests per IP. Counters in Redis with REDIS_URL, else in a SQLite file every worker shares.

The limits apply by endpoint (WRITES, PER_ADDRESS below), so a view need not know about them; a
new route that sends to the model or writes memories joins by adding its endpoint there.
"""
import time

from flask import current_app, g, request
from flask_limiter import Limiter, RateLimitExceeded
from flask_limiter.util import get_remote_address

from ..plurals import plural
from .counters import counters, storage_uri
from .refusals import refusal, wants_json

# endpoint -> the kind of write it is; endpoints of one kind share their counters
WRITES = {
    "chat.start_conversation": "sends",
    "chat.send_message": "sends",
    "memories.add_memory": "memory",
    "memories.edit_memory": "memory",
    "chat.share_conversation": "shares",  # each link is an audit row: no floods of them
    "shares.create": "shares",
    "chat.give_feedback": "feedback",
    "transfer.upload": "imports",  # each parses a file and writes many rows
}
# endpoint -> (kind, methods counted, count only answers with this status or every one)
PER_ADDRESS = {
    "accounts.login": ("sign_in", ["POST"], 401),  # failed sign-ins: a busy office signs in freely
    "accounts.signup": ("sign_up", ["POST"], None),
    "share.show_shared": ("share_opens", ["GET"], None),  # guessing tokens, or audit-log floods
}
MESSAGES = {
    "sends": "You are sending messages faster than Nimbus can answer them. "
             "Please wait a moment and send again.",
    "memory": "That is a lot of memory changes at once. Please wait a moment and try again.",
    "shares": "That is a lot of share links at once. Please wait a moment and try again.",
    "feedback": "That is a lot of feedback at once. Please wait a moment and try again.",
    "imports": "That is a lot of imports at once. Please wait a moment and import again.",
    "sign_in": "Too many sign-in attempts from your address. Please wait a moment and try again.",
    "sign_up": "Too many sign-ups from your address. Please wait a moment and try again.",
    "share_opens": "Too many share links opened from your address. "
                   "Please wait a moment and try again.",
    "guests": "Too many new visitors from your address. Please wait a moment and try again, "
              "or sign in.",
}


def by_session() -> str:
    """The browser's person (its account or guest); a request without one counts by its address."""
    user = g.get("user")
    return f"user:{user.id}" if user is not None else f"ip:{get_remote_address()}"


def config_key(kind: str, per: str) -> str:
    return f"NIMBUS_RATE_LIMIT_{kind.upper()}_PER_{per}"


def kind_of(endpoint: str | None) -> str:
    return WRITES.get(endpoint) or PER_ADDRESS.get(endpoint, ("sends",))[0]


def too_fast(kind: str, wait: int):
    """429 with what to do, where the visitor looks (JSON for JSON clients), and when to retry."""
    message = MESSAGES[kind].replace("a moment", plural(wait, "second"))
    headers = {"Retry-After": str(wait)}
    if wants_json():
        return {"error": message}, 429, headers
    return refusal(message, 429, headers)


def refuse_too_fast(error: RateLimitExceeded):
    breached = current_app.extensions["nimbus_limiter"].current_limit
    wait = max(1, int(breached.reset_at - time.time())) if breached else 60
    return too_fast(kind_of(request.endpoint), wait)


def refuse_new_guest():
    """A 429 when this address made its share of guests lately, else None (and it is counted)."""
    config = current_app.config
    if not config["NIMBUS_RATE_LIMIT_ENABLED"]:
        return None
    wait = counters().spend(config["NIMBUS_RATE_LIMIT_GUESTS_PER_IP"], "guests",
                            get_remote_address())
    return too_fast("guests", wait) if wait else None


def init_app(app) -> None:
    """Attach the limits to their endpoints (call after the blueprints are registered)."""
    config = app.config
    config["RATELIMIT_ENABLED"] = bool(config["NIMBUS_RATE_LIMIT_ENABLED"])
    config["RATELIMIT_STORAGE_URI"] = storage_uri(app)  # Redis, else a file all workers share
    # Storage down: count in this worker's memory meanwhile (per worker, so looser), never a 500;
    # Flask-Limiter goes back to it once it answers again.
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
    for endpoint, (kind, methods, status) in PER_ADDRESS.items():
        if endpoint in app.view_functions:
            deduct_when = (lambda response, status=status: response.status_code == status) \
                if status else None
            app.view_functions[endpoint] = limiter.shared_limit(
                config[config_key(kind, "IP")], scope=f"{kind}-IP", methods=methods,
                deduct_when=deduct_when, error_message=MESSAGES[kind])(app.view_functions[endpoint])
    app.register_error_handler(RateLimitExceeded, refuse_too_fast)
