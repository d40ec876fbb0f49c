"""What every request must satisfy before a view sees it: bounded ints, valid UTF-8, no NUL.

Views keep their own checks (lengths, ownership); this layer removes the inputs that would reach
the database as something it cannot store (a NUL in PostgreSQL text, an int beyond 64 bits).
"""
from urllib.parse import parse_qsl, unquote_to_bytes

from flask import Request, request
from werkzeug.datastructures import ImmutableMultiDict
from werkzeug.exceptions import BadRequest
from werkzeug.routing import IntegerConverter

INT_MIN, INT_MAX = -(2**63), 2**63 - 1  # what SQLite and PostgreSQL BIGINT hold
NUL = "\x00"
NUL_MESSAGE = ("Your text contains a NUL character (\\0), which cannot be stored. "
               "Remove it and send again.")
UTF8_MESSAGE = "The request is not valid UTF-8 text. Send it again as UTF-8."


def bounded_int(value) -> int:
    """int() that refuses what no database column can hold; raises ValueError like int()."""
    number = int(value)
    if not INT_MIN <= number <= INT_MAX:
        raise ValueError(f"{value!r} is out of range")
    return number


class BoundedIntConverter(IntegerConverter):
    """`<int:…>` in every route: digits up to 2**63-1; a larger number is a 404, never a 500."""

    def __init__(self, map, *args, **kwargs):
        kwargs.setdefault("max", INT_MAX)
        super().__init__(map, *args, **kwargs)


class Parameters(ImmutableMultiDict):
    """Query and form values: `.get(name, type=int)` gives the default for an out-of-range int."""

    def get(self, key, default=None, type=None):
        return super().get(key, default, bounded_int if type is int else type)


class NimbusRequest(Request):
    parameter_storage_class = Parameters


def text_problem(text) -> str | None:
    """Why a piece of text cannot be stored, or None; for commands and stores as for requests."""
    return NUL_MESSAGE if isinstance(text, str) and NUL in text else None


def check_request() -> None:
    """Refuse a request whose URL or form is not UTF-8, or that carries a NUL anywhere we read."""
    uri = request.environ.get("RAW_URI") or request.environ.get("REQUEST_URI") or ""
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
    if any(NUL in text for text in texts):
        raise BadRequest(NUL_MESSAGE)


def init_app(app) -> None:
    app.request_class = NimbusRequest
    app.url_map.converters["int"] = BoundedIntConverter
    app.before_request_funcs.setdefault(None, []).insert(0, check_request)
