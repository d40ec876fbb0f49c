"""Security: one validation layer for what a request carries, and refusals people can read."""


def init_app(app) -> None:
    from . import refusals, validation
    validation.init_app(app)  # before any blueprint: it replaces the `int` URL converter
    refusals.init_app(app)
