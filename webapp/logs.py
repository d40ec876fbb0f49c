"""Nimbus's own log lines, timestamped and from INFO up, however it is served.

Neither gunicorn nor `flask run` nor the Huey worker configures the `webapp` loggers, so their
INFO lines (which provider answers, its window and slots) went nowhere and their warnings came
without a time. Here they get one handler, in gunicorn's shape, unless the host configured
logging itself (a handler on the root logger): then only their level is set.
"""
import logging
import sys

FORMAT = "[%(asctime)s] [%(process)d] [%(levelname)s] %(name)s: %(message)s"
DATE_FORMAT = "%Y-%m-%d %H:%M:%S %z"
LOGGER = "webapp"


class BadLogLevel(ValueError):
    """NIMBUS_LOG_LEVEL names no level; the text says which it may be."""


def level_of(name: str) -> int:
    """The logging level NIMBUS_LOG_LEVEL names (DEBUG, INFO, WARNING, ERROR)."""
    level = logging.getLevelName(str(name or "INFO").strip().upper())
    if not isinstance(level, int):
        raise BadLogLevel(f"NIMBUS_LOG_LEVEL={name!r} is not one of DEBUG, INFO, WARNING, ERROR")
    return level


def configure(level_name: str = "INFO", stream=None) -> logging.Logger:
    """Give the `webapp` loggers their level and, where nothing else prints them, a handler."""
    logger = logging.getLogger(LOGGER)
    logger.setLevel(level_of(level_name))
    if any(getattr(h, "nimbus", False) for h in logger.handlers):
        return logger  # a second app in this process (the CLI, the worker): once is enough
    if logging.getLogger().handlers:
        return logger  # the host's logging prints them (its format, its destination)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT, DATE_FORMAT))
    handler.nimbus = True
    logger.addHandler(handler)
    logger.propagate = False  # a root handler added later (Huey's) would print each line twice
    return logger


def init_app(app) -> None:
    """Configure Nimbus's logging for a served app; tests keep pytest's capture as it is."""
    if not app.testing:
        configure(app.config.get("NIMBUS_LOG_LEVEL") or "INFO")
