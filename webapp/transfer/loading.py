"""Read an uploaded file as JSON or JSON Lines before any format is guessed, refusing in one line
what is no conversation file at all: empty, an archive, cut off, not UTF-8, NUL, a lone
surrogate, NaN, a number of thousands of digits, nesting deeper than any export needs.
"""
import json
from dataclasses import dataclass

from ..security import has_nul
from .importer import InvalidImport, where

MAX_DEPTH = 40  # JSON nesting: a real export needs about 12


class JsonLines(list):
    """The records of a JSON Lines file (one JSON value per line), in order."""


@dataclass
class UnreadableLine:
    """A line of a JSON Lines file that is not JSON, kept in its place so a partial import can
    name it and read the others."""
    reason: str


def load(raw: bytes | str, strict: bool = True):
    """Parse JSON (or JSON Lines) text, refusing what no database stores: NUL, a lone surrogate,
    NaN, deep nesting, non-UTF-8. Not `strict`: a JSON Lines line that is not JSON becomes an
    UnreadableLine, for the reader to skip."""
    if isinstance(raw, bytes) and (kind := ARCHIVES.get(raw[:4]) or ARCHIVES.get(raw[:2])):
        raise InvalidImport(f"the file is a {kind} archive: unpack it and choose the "
                            "conversations.json (or other .json file) inside")
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        raise InvalidImport("the file is not UTF-8 text") from None
    text = text.removeprefix("\ufeff")  # a byte-order mark some editors write
    if not text.strip():
        raise InvalidImport("the file is empty")
    try:
        data = json_value(text)
    except json.JSONDecodeError as error:
        if error.msg != "Extra data":
            raise InvalidImport(f"{cut_off(text, error)}not valid JSON: {error}") from None
        data = JsonLines()
        lines = text.splitlines()
        for number, line in enumerate(lines, 1):
            if line.strip():
                try:
                    data.append(json_value(line))
                except json.JSONDecodeError as error:
                    # A last line cut mid-record is an unfinished file, not one bad record:
                    # importing the rest would store a part and call it the whole.
                    last = number == len(lines) and not text.endswith(("\n", "\r"))
                    if strict or last and cut_off(line, error):
                        raise InvalidImport(f"line {number}: {cut_off(line, error) if last else ''}"
                                            f"not valid JSON: {error}") from None
                    data.append(UnreadableLine(f"not valid JSON: {error}"))
    check_values(data)
    return data


ARCHIVES = {b"PK\x03\x04": "ZIP", b"\x1f\x8b": "gzip", b"7z\xbc\xaf": "7-Zip"}


def cut_off(text: str, error: json.JSONDecodeError) -> str:
    """'the file ends mid-record (cut off?): ' when the JSON stops before it is finished."""
    if error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated string"):
        return "the file stops in the middle of a record (cut off?): "
    return ""


def json_value(text: str):
    try:
        return json.loads(text, parse_constant=refuse_constant, parse_float=finite_float,
                          parse_int=whole_number)
    except RecursionError:
        raise InvalidImport(f"the JSON is nested more than {MAX_DEPTH} levels deep") from None


def refuse_constant(name):
    raise InvalidImport(f"{name} is not a number that can be stored")


def whole_number(text: str) -> int:
    """A JSON integer; one of thousands of digits is no count or id any file needs."""
    if len(text) > 40:
        raise InvalidImport(f"a number of {len(text.lstrip('-')):,} digits cannot be stored")
    return int(text)


def finite_float(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):
        refuse_constant(text[:40])
    return number


def check_values(data) -> None:
    """Walk the whole document once, without recursion: bounded depth, no NUL in any text."""
    plain = isinstance(data, list)
    stack = [(data, ())]
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_DEPTH:
            raise InvalidImport(f"{where(path[:6], plain)}: nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            for key, item in value.items():
                if has_nul(key) or not (key.isascii() or valid_unicode(key)):
                    raise InvalidImport(f"{where(path, plain)}: a key contains a NUL character "
                                        "or a lone surrogate")
                stack.append((item, (*path, key)))
        elif isinstance(value, list):
            stack.extend((item, (*path, i)) for i, item in enumerate(value))
        elif isinstance(value, str):
            if has_nul(value):
                raise InvalidImport(f"{where(path, plain)}: contains a NUL character (\\0), "
                                    "which cannot be stored")
            if not value.isascii() and not valid_unicode(value):
                raise InvalidImport(f"{where(path, plain)}: contains a lone surrogate (half of an "
                                    "emoji's escape, like \\ud83d), which is not text")


def valid_unicode(text: str) -> bool:
    """False for a string with a lone surrogate, which JSON's \\u escapes can spell but UTF-8
    (and so every database column) cannot hold."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
