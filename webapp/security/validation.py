"""What every request must satisfy before a view sees it: bounded ints, valid UTF-8, no NUL.

Views keep their own checks (ownership); this layer removes the inputs that would reach the
database as something it cannot store (a NUL in PostgreSQL text, an int beyond 64 bits), and
holds the one NUL check and the one message-length check that stores, imports and commands use.
"""
import functools
import re
from urllib.parse import parse_qsl, unquote_to_bytes, urlsplit

import click

from flask import Request, request
from werkzeug.datastructures import ImmutableMultiDict
from werkzeug.exceptions import BadRequest, RequestURITooLarge
from werkzeug.routing import IntegerConverter

# What every id column holds: PostgreSQL's INTEGER is 32 bits (SQLite's would take 64).
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
DIGITS = re.compile(r"-?[0-9]{1,10}")  # ASCII only: str.isdigit() and int() also take "²", "١"
NUL = "\x00"
NUL_MESSAGE = ("Your text contains a NUL character (\\0), which cannot be stored. "
               "Remove it and send again.")
UTF8_MESSAGE = "The request is not valid UTF-8 text. Send it again as UTF-8."
# The longest request line (method, URL, version) answered here: gunicorn's own default. Its
# limit in gunicorn.conf.py is twice this, so a longer URL gets this refusal, with the headers.
MAX_REQUEST_LINE = 4094
URL_MESSAGE = "That address is too long. Go back and follow a link instead."


def bounded_int(value) -> int:
    """int() of ASCII digits that a database column can hold; raises ValueError like int()."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and DIGITS.fullmatch(value):
        number = int(value)
    else:
        raise ValueError(f"{value!r} is not a whole number")
    if not INT_MIN <= number <= INT_MAX:
        raise ValueError(f"{value!r} is out of range")
    return number


def whole_number(value, low: int = 0, high: int = INT_MAX) -> int | None:
    """The whole number from low to high that `value` spells in ASCII digits, else None: the one
    parse for numbers in forms, queries and cookies."""
    try:
        number = bounded_int((value or "").strip() if isinstance(value, str) else value)
    except ValueError:
        return None
    return number if low <= number <= high else None


class BoundedIntConverter(IntegerConverter):
    """`<int:…>` in every route: digits up to 2**31-1 (an id column's range); a larger number is
    a 404, never a 500."""

    def __init__(self, map, *args, **kwargs):
        kwargs.setdefault("max", INT_MAX)
        super().__init__(map, *args, **kwargs)


class Parameters(ImmutableMultiDict):
    """Query and form values: `.get(name, type=int)` gives the default for an out-of-range int."""

    def get(self, key, default=None, type=None):
        return super().get(key, default, bounded_int if type is int else type)


class NimbusRequest(Request):
    parameter_storage_class = Parameters


def has_nul(text) -> bool:
    """Whether the text holds a NUL (\\0), which PostgreSQL text cannot store: the one NUL check,
    for requests, commands, stores and imports alike."""
    return isinstance(text, str) and NUL in text


def length_problem(message: str, config) -> str | None:
    """"9,000 characters long; the limit is 8,000" for a message over NIMBUS_MAX_MESSAGE_CHARS,
    else None: the one length check, for the chat and the command line alike."""
    limit = config["NIMBUS_MAX_MESSAGE_CHARS"]
    if len(message) <= limit:
        return None
    return f"{len(message):,} characters long; the limit is {limit:,}"


def check_request() -> None:
    """Refuse a request whose URL or form is not UTF-8, or that carries a NUL anywhere we read."""
    uri = request.environ.get("RAW_URI") or request.environ.get("REQUEST_URI") or ""
    if len(request.method) + len(uri) + 10 > MAX_REQUEST_LINE:  # "GET /… HTTP/1.1"
        raise RequestURITooLarge(URL_MESSAGE)
    try:
        unquote_to_bytes(uri).decode("utf-8")
        if request.mimetype == "application/x-www-form-urlencoded":
            # Werkzeug silently drops a form that is not UTF-8; say so instead.
            parse_qsl(request.get_data(cache=True).decode("utf-8"), encoding="utf-8",
                      errors="strict", max_num_fields=None)
    except UnicodeDecodeError:
        raise BadRequest(UTF8_MESSAGE) from None
    texts = [request.path, *(k + v for k, v in request.args.items(multi=True))]
    if request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
        texts += [k + v for k, v in request.form.items(multi=True)]
    texts += [v for k, v in request.headers.items() if k.lower().startswith("hx-")]
    if request.headers.get("HX-Prompt-URI-AutoEncoded") == "true":  # htmx's non-Latin-1 prompt
        try:
            texts.append(unquote_to_bytes(request.headers.get("HX-Prompt", "")).decode("utf-8"))
        except UnicodeDecodeError:
            raise BadRequest(UTF8_MESSAGE) from None
    if any(has_nul(text) for text in texts):
        raise BadRequest(NUL_MESSAGE)


def guard_commands(group: click.Group) -> None:
    """Every command refuses an argument holding a NUL before it runs (argv cannot carry one,
    but a test runner or a wrapper script can, and PostgreSQL cannot store it)."""
    for command in group.commands.values():
        if isinstance(command, click.Group):
            guard_commands(command)
            continue
        callback = command.callback
        if callback is None or getattr(callback, "nul_guarded", False):
            continue

        @functools.wraps(callback)
        def guarded(*args, __callback=callback, **kwargs):
            for name, value in kwargs.items():
                if has_nul(value):
                    raise click.ClickException(f"{name}: contains a NUL character (\\0), "
                                               "which cannot be stored")
            return __callback(*args, **kwargs)
        guarded.nul_guarded = True
        command.callback = guarded


def init_app(app) -> None:
    app.request_class = NimbusRequest
    app.url_map.converters["int"] = BoundedIntConverter
    app.before_request_funcs.setdefault(None, []).insert(0, check_request)


def safe_next(target: str | None) -> str | None:
    """Only a path on this site: never another host, so a link cannot bounce people elsewhere.
    Browsers drop tabs and newlines from a Location and read a backslash as a slash, so
    "/<tab>/evil.example" would be "//evil.example": such a target is refused, not cleaned."""
    if not target or any(c == "\\" or c.isspace() or not c.isprintable() for c in target):
        return None
    parts = urlsplit(target)
    if not target.startswith("/") or target.startswith("//") or parts.scheme or parts.netloc:
        return None
    return target
