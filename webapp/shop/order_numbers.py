"""The one way to find an order number in what people write: #1041, order 1041, order no. 1041.

A leaf (it imports nothing of the app), so the offline model, the offline distiller and the
offline summarizer all read order numbers alike.
"""
import re

# An optional mark that says "this is an order" ("#", or "order" with up to 20 characters of
# words before the number, "no." and "nr." included), then 4 to 6 digits not led by 0 and not
# part of a phone number or date (555-0142, 2026-12-01).
ORDER_NUMBER = re.compile(
    r"(?P<mark>\borders?\b(?:\s*(?:no|nr|num)\.)?[^.?!\d]{0,20}#?|#)?"
    r"(?<![\d-])\b(?P<number>[1-9]\d{3,5})\b(?!-\d)", re.I)


def order_numbers(text: str, marked: bool = False) -> list[int]:
    """Every number in the text that could be an order's, in the order written; with `marked`,
    only those written as an order's (#1041, order 1041), not any 4-digit number such as a year."""
    return [int(m["number"]) for m in ORDER_NUMBER.finditer(text or "")
            if m["mark"] or not marked]
