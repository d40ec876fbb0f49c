"""Security: one validation layer for what a request carries, refusals people can read,
security headers on every response, and rate limits on what writes."""


def init_app(app) -> None:
    from . import headers, refusals, validation
    validation.init_app(app)  # before any blueprint: it replaces the `int` URL converter
    refusals.init_app(app)
    headers.init_app(app)
