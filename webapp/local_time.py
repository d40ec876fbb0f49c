"""Times in the reader's own time zone: the browser names it in a cookie (static/js/timezone.js).

Stored times are naive UTC. Without the cookie (a first visit, no script) pages use
NIMBUS_TIMEZONE, the shop's zone, which is UTC unless configured.
"""
from contextvars import ContextVar
from datetime import datetime, timezone
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from flask import current_app, has_request_context, request

COOKIE = "nimbus_tz"
RUN_ZONE: ContextVar[str | None] = ContextVar("run_zone", default=None)  # a reply run's reader


@lru_cache(maxsize=512)  # a page asks once per time it shows; a forged name fails once
def zone_named(name: str | None) -> ZoneInfo | None:
    """The IANA zone called `name`, or None for anything else (a cookie is the visitor's to forge)."""
    if not name or len(name) > 64:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: "America" is a directory
        return None


def named_zone() -> str | None:
    """The zone the reader's browser named: this request's cookie, or the one a run was given."""
    return request.cookies.get(COOKIE) if has_request_context() else RUN_ZONE.get()


def reader_zone() -> ZoneInfo:
    """The zone this request's reader lives in (ZoneInfo caches each zone it has loaded)."""
    return zone_named(named_zone()) or zone_named(current_app.config["NIMBUS_TIMEZONE"]) \
        or ZoneInfo("UTC")


def local(moment: datetime | None) -> datetime | None:
    """A stored (naive UTC) time as the reader's wall-clock time, zone attached."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(reader_zone())


# The one way a page writes a date and time (the chat's, the viewer's, a fate's reason): "3 Dec 2026, 07:48".
DATE_TIME = "%-d %b %Y, %H:%M"


def when_text(moment: datetime | str | None) -> str:
    """A stored time (or its ISO text, as a JSON payload carries it) in the reader's zone and
    the one date format."""
    if isinstance(moment, str):
        try:
            moment = datetime.fromisoformat(moment)
        except ValueError:
            return moment
    return local(moment).strftime(DATE_TIME) if moment is not None else ""


def wall_clock_now(zone: ZoneInfo) -> datetime:
    """Now on the zone's clocks, naive, to compare with other wall-clock times."""
    return datetime.now(zone).replace(tzinfo=None)


def stored(wall_clock: datetime, zone: ZoneInfo) -> datetime:
    """A wall-clock time in `zone` as the naive UTC the database stores."""
    return wall_clock.replace(tzinfo=zone).astimezone(timezone.utc).replace(tzinfo=None)


def init_app(app) -> None:
    app.add_template_filter(local, "local")
    app.add_template_filter(when_text, "when")
