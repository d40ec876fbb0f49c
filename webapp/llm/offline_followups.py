"""The offline model's reading of short follow-ups: thanks, "the other one", "what did I ask
you about X before?". Each pattern names what the person means; offline.py decides the reply."""
import re

THANKS = re.compile(r"^\s*(?:thanks?(?: you)?|thank u|thx|ty|cheers|much appreciated|great,? thanks?|"
                    r"perfect,? thanks?|ok(?:ay)?,? thanks?)(?: (?:so much|a lot|again))?\s*[.!]*\s*$",
                    re.I)
OTHER_ONE = re.compile(r"\b(?:the|my|and the) other (?:one|order)\b|\bthe other\s*\??$", re.I)
ASKED_BEFORE = re.compile(r"\bwhat did i (?:ask|say|tell you|write)(?: you)?(?: about)? (.+?)"
                          r"(?: before| earlier| last time| previously)?\s*\??$", re.I)


def thanked(text: str) -> bool:
    """A thank-you with nothing else to answer: a short acknowledgement, not an introduction."""
    return bool(THANKS.match(text))


def asked_before(text: str) -> str | None:
    """The topic of "what did I ask you about shipping before?": searched in earlier chats."""
    found = ASKED_BEFORE.search(text)
    if not found:
        return None
    topic = re.sub(r"\b(?:before|earlier|last time|previously)\b", "", found.group(1)).strip(" ?.")
    return topic or None


RETURN_ITEM = re.compile(r"\b(?:return|refund|send back|exchange|money back for)\s+(?:my|the|a|these|those|"
                         r"this|that)\s+(?:new\s+)?([a-z][a-z -]{1,30}?)\s*(?:please|pls|i bought.*)?[.!?]*$",
                         re.I)


def item_asked(text: str) -> str | None:
    """The item named in "I want to return my jacket" (no order number): found through list_orders."""
    found = RETURN_ITEM.search(text)
    return found.group(1).strip().lower() if found else None


def order_for_item(item: str, orders: list[dict]) -> dict | None:
    """The newest listed order whose item names what the person said ("jacket" → "Rain jacket")."""
    words = [w.rstrip("s") for w in item.split() if len(w) > 2]
    return next((o for o in orders if any(w in str(o.get("item", "")).lower() for w in words)), None)
