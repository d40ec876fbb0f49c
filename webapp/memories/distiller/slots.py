"""What a memory is about, when only one such fact can be true at a time.

A person has one name, one way they want to be contacted, one address and one size: a new note
keyed the same way as an active one ("Prefers phone calls." after "Prefers email over phone.")
contradicts it, and supersedes it instead of sitting beside it in the prompt.
"""
import re

CONTACT = re.compile(r"\b(e-?mails?|phones?|calls?|called|calling|phoned|rung|ring|texts?|texted|e-?mailed|text messages?|sms|"
                     r"letters?|post)\b", re.I)
SLOTS = [
    ("name", re.compile(r"^(?:Name:|Is called\b|Goes by\b)", re.I)),
    ("address", re.compile(r"^(?:Address:|Lives (?:in|at)\b|Moved to\b)", re.I)),
    ("size", re.compile(r"^(?:Size:|Wears (?:a )?size\b|Is a size\b)", re.I)),
    ("shoe size", re.compile(r"^Shoe size:", re.I)),
]


def slot_of(content: str) -> str | None:
    """The one-at-a-time fact this note states ("name", "contact", ...), or None for any other."""
    text = (content or "").strip()
    for slot, pattern in SLOTS:
        if pattern.match(text):
            return slot
    if re.match(r"^(?:Prefers|Would rather|Wants to be|Likes to be)\b", text, re.I) \
            and CONTACT.search(text):
        return "contact"
    return None


def same_slot(new: str, known: list) -> object | None:
    """The first of `known` (memories, newest first) holding the fact `new` replaces."""
    slot = slot_of(new)
    if slot is None:
        return None
    return next((m for m in known if slot_of(m.content) == slot), None)
