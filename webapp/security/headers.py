"""Security headers on every response, and the session cookie's flags.

The policy allows scripts and styles from our own origin only: no inline script, no inline style,
no eval (htmx runs with allowEval off), no framing; a page can talk only to its own origin (htmx
requests and the SSE streams). A small after_request hook, rather than Flask-Talisman (last
released in 2023), because the whole policy fits on one screen here.
"""
from flask import request

CSP = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "connect-src": "'self'",
    "font-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}
HEADERS = {
    "Content-Security-Policy": "; ".join(f"{name} {value}" for name, value in CSP.items()),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # a conversation's URL never leaves the site
    "X-Frame-Options": "DENY",  # frame-ancestors for browsers that predate it
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
}
HSTS = "max-age=31536000"  # sent only when cookies are Secure, i.e. the site is served over HTTPS


def security_headers(config) -> dict:
    """The headers every response carries under this config (gunicorn.conf.py adds them to
    gunicorn's own refusals too)."""
    headers = dict(HEADERS)
    if config.get("SESSION_COOKIE_SECURE"):
        headers["Strict-Transport-Security"] = HSTS
    return headers


def init_app(app) -> None:
    app.config["SESSION_COOKIE_HTTPONLY"] = True  # Flask's default, kept on whatever config says
    headers = security_headers(app.config)

    @app.after_request
    def add_security_headers(response):
        for name, value in headers.items():
            response.headers.setdefault(name, value)
        if request.endpoint != "static" and "Cache-Control" not in response.headers:
            # Every page but the static files is somebody's (a session's chats, a share link's
            # conversation): no browser or proxy cache may keep a copy.
            response.headers["Cache-Control"] = "no-store"
        return response
