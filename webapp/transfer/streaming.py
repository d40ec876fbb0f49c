"""Read an upload's conversations one at a time, so an export of many is never held whole: a JSON
array item by item, JSON Lines line by line, each value decoded and checked as loading.load does.

A first pass reads the file through (count, first record, every value checked) keeping nothing; the
import then reads it again record by record. A file this cannot read as a stream (one conversation:
a Nimbus export, a single record, a list of messages), or one with any problem at all, goes to
loading.load whole, so what is accepted and every refusal's words stay as they were. One
conversation is still held whole while it is read and written.
"""
import codecs
import json

from .importer import InvalidImport
from .loading import (ARCHIVES, JsonLines, UnreadableLine, check_values, cut_off, finite_float,
                      json_value, load, refuse_constant, whole_number)

CHUNK = 1 << 20  # bytes read at a time
SPACE = " \t\r\n"  # JSON's whitespace
DECODER = json.JSONDecoder(parse_constant=refuse_constant, parse_float=finite_float,
                           parse_int=whole_number)


class NotAStream(Exception):
    """The file is not read as a stream: it is loaded whole (loading.load) instead."""


class Records(list):
    """A list's face (len, the first record, iteration) over records read from the file again on
    each iteration; it holds none of them (formats.read takes it for the loaded list)."""

    def __init__(self, opener, items):
        super().__init__()
        self.opener, self.items = opener, items
        self.count, self.first = 0, None
        for record in self:  # the first pass: every value checked, nothing kept
            if self.first is None and not isinstance(record, UnreadableLine):
                self.first = record
            self.count += 1
            check_values([record])

    def __iter__(self):
        with self.opener() as file:
            yield from self.items(file)

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index):
        if index != 0:
            raise IndexError("a streamed file gives its first record only")
        return self.first


class StreamedLines(Records, JsonLines):
    """A JSON Lines file's records, read from disk line by line."""


def records(opener, strict: bool = True):
    """The file's conversations as loading.load reads them, streamed where the shape allows;
    `opener()` opens the file (binary) each time it is read."""
    try:
        with opener() as file:
            head = file.read(CHUNK)
        if ARCHIVES.get(head[:4]) or ARCHIVES.get(head[:2]):
            raise NotAStream
        text = head.removeprefix(b"\xef\xbb\xbf").lstrip(SPACE.encode())
        if text.startswith(b"["):
            found = Records(opener, array_items)
            if found.count == 1 or not isinstance(found.first, dict) or "role" in found.first:
                # One conversation (or a list of messages, which is one) is held whole anyway:
                # decoded once, not item by item from a growing buffer.
                raise NotAStream
            return found
        if text.startswith(b"{"):
            if not several_lines(opener):
                raise NotAStream
            return StreamedLines(opener, lambda file: lines_of(file, strict))
        raise NotAStream
    except (NotAStream, InvalidImport, ValueError, RecursionError):
        with opener() as file:  # refused in load's own words, or one conversation held whole
            return load(file.read(), strict)


def several_lines(opener) -> bool:
    """Whether load would read the file as JSON Lines: its first line one whole JSON value and
    something after it."""
    with opener() as file:
        first = file.readline().decode("utf-8").removeprefix("\ufeff")
        if not first.strip(SPACE):
            return False
        value, end = DECODER.raw_decode(first, len(first) - len(first.lstrip(SPACE)))
        if first[end:].strip(SPACE) or not isinstance(value, dict):
            return False
        return any(line.strip(SPACE.encode()) for line in file)


def chunks(file):
    """The file's text, a CHUNK at a time, without its byte-order mark."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    first = True
    while block := file.read(CHUNK):
        text = decoder.decode(block)
        if first:
            text, first = text.removeprefix("\ufeff"), False
        yield text
    decoder.decode(b"", final=True)


def array_items(file):
    """The items of a top-level JSON array, decoded one at a time; NotAStream for anything
    load would read otherwise (or refuse)."""
    pieces = chunks(file)
    buffer, pos, ended = "", 0, False

    def more(at_least: int = 1) -> bool:
        nonlocal buffer, pos, ended
        buffer, pos = buffer[pos:], 0
        wanted = len(buffer) + at_least
        while not ended and len(buffer) < wanted:
            piece = next(pieces, None)
            if piece is None:
                ended = True
            else:
                buffer += piece
        return not ended or len(buffer) >= wanted

    def skip_space() -> str:
        nonlocal pos
        while True:
            while pos < len(buffer) and buffer[pos] in SPACE:
                pos += 1
            if pos < len(buffer) or not more():
                return buffer[pos] if pos < len(buffer) else ""

    if skip_space() != "[":
        raise NotAStream
    pos += 1
    if skip_space() == "]":
        raise NotAStream  # an empty list: load refuses it in its words
    while True:
        skip_space()
        while True:  # an item whole, with the character after it read (a number may go on)
            try:
                value, end = DECODER.raw_decode(buffer, pos)
            except json.JSONDecodeError:
                if ended:
                    raise NotAStream from None
                more(len(buffer) - pos + CHUNK)  # twice as much each time: linear, not quadratic
                continue
            if end < len(buffer) or ended:
                break
            more()
        pos = end
        yield value
        mark = skip_space()
        pos += 1
        if mark == "]":
            if skip_space() != "":
                raise NotAStream  # something after the list: load reads it otherwise
            return
        if mark != ",":
            raise NotAStream


def lines_of(file, strict: bool):
    """A JSON Lines file's records as load reads them (str.splitlines' lines, numbered alike);
    a line that is not JSON is an UnreadableLine unless `strict`."""
    number, waiting, ends_with_newline = 0, None, False
    for raw in file:
        text = raw.decode("utf-8")
        if number == 0 and waiting is None:
            text = text.removeprefix("\ufeff")
        ends_with_newline = text.endswith(("\n", "\r"))
        for line in text.splitlines():
            if waiting is not None:
                yield record_of(*waiting, False, strict)
            number += 1
            waiting = (number, line) if line.strip() else None  # a blank line is no record
    if waiting is not None:
        yield record_of(*waiting, not ends_with_newline, strict)


def record_of(number: int, line: str, last: bool, strict: bool):
    try:
        return json_value(line)
    except json.JSONDecodeError as error:
        if strict or last and cut_off(line, error):
            raise InvalidImport(f"line {number}: {cut_off(line, error) if last else ''}"
                                f"not valid JSON: {error}") from None
        return UnreadableLine(f"not valid JSON: {error}")
