"""Dates named in a question ("on March 14", "14th of March", "2026-03-14", "in March").

Searching "what did I cook on March 14" should find what was said that day although the words
never mention it: the day, in the reader's time zone, becomes a time range on each row's
created_at (stored as UTC), and the date's words leave the keyword query. A day or month without
a year means its latest occurrence up to `today` (this year's, or last year's if it has not come
yet).
"""
import re
from datetime import datetime, timedelta

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]
MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|" \
        r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
YEAR = r"(?:,?\s+(\d{4}))?"
PATTERNS = [
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), "ymd"),
    (re.compile(rf"\b{DAY}(?:\s+of)?\s+{MONTH}\b{YEAR}", re.I), "dmy"),
    (re.compile(rf"\b{MONTH}\s+{DAY}\b{YEAR}", re.I), "mdy"),
    (re.compile(rf"\b(?:in|during|of|last)\s+{MONTH}\b{YEAR}", re.I), "my"),
]


def month_number(name: str) -> int:
    return next(i for i, m in enumerate(MONTHS, 1) if m.startswith(name.lower()[:3]))


def latest(year: str | None, month: int, day: int | None, today: datetime) -> datetime | None:
    try:
        if year:
            return datetime(int(year), month, day or 1)
        moment = datetime(today.year, month, day or 1)
        return moment if moment <= today else datetime(today.year - 1, month, day or 1)
    except ValueError:  # "February 31"
        return None


def span(start: datetime, whole_month: bool) -> tuple[datetime, datetime]:
    if not whole_month:
        return start, start + timedelta(days=1)
    following = datetime(start.year + start.month // 12, start.month % 12 + 1, 1)
    return start, following


def find_dates(query: str, today: datetime) -> tuple[list[tuple[datetime, datetime]], str]:
    """The (start, end) ranges the question names, and the question without them."""
    ranges, rest = [], query or ""
    for pattern, shape in PATTERNS:
        for match in pattern.finditer(rest):
            groups = match.groups()
            if shape == "ymd":
                start, whole = latest(groups[0], int(groups[1]), int(groups[2]), today), False
            elif shape == "dmy":
                start, whole = latest(groups[2], month_number(groups[1]), int(groups[0]),
                                      today), False
            elif shape == "mdy":
                start, whole = latest(groups[2], month_number(groups[0]), int(groups[1]),
                                      today), False
            else:
                start, whole = latest(groups[1], month_number(groups[0]), None, today), True
            if start is not None:
                ranges.append(span(start, whole))
        rest = pattern.sub(" ", rest)
    return ranges, rest
