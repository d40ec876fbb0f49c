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


# Words people type short: "whats", "wheres", "pls".
TYPOS = [(r"\bwhats\b", "what's"), (r"\bwheres\b", "where's"), (r"\bhows\b", "how's"),
         (r"\b(?:pls|plz)\b", "please"), (r"\bu\b", "you"), (r"\bur\b", "your"),
         (r"\bwat\b", "what"), (r"\b(?:ya|yea|yup|yas)\b", "yes"),
         (r"\b(?:refnd|refud|refunf|refound|refun|rfund)\b", "refund"),
         (r"\b(?:oder|ordr|odrer)\b", "order"), (r"\b(?:tiket|ticekt|tickt)(s?)\b", r"ticket\1")]


def normalized(text: str) -> str:
    for typo, word in TYPOS:
        text = re.sub(typo, word, text, flags=re.I)
    return text


# "no thanks, not now" declines an offer; "no, call me Maxine" says something else.
DECLINE = re.compile(r"^\s*(?:no|nope|nah|not now|no need)(?:[\s,.!]+(?:thanks?|thank you|not now|"
                     r"maybe later|later|i'm good|that's all|that's it|all good))*[\s.!]*$", re.I)
TICKET_LIST = re.compile(r"\b(?:what|which|any|my|list|show)\b[\w ]{0,20}\btickets\b|"
                         r"\btickets?\b[\w ]{0,20}\b(?:open|status)\b.*\?", re.I)
TICKET_REQUEST = re.compile(r"\b(?:open|create|file|raise|make|log|start|submit)\b[\w ]{0,20}"
                            r"\b(?:ticket|case|complaint)\b", re.I)
# Something went wrong: the help center has an article for it, whatever the wording.
PROBLEM = re.compile(r"\b(?:torn|broke|broken|damaged|faulty|defective|missing|not working|"
                     r"stopped working|forgot|lost|cancel)\b", re.I)
WHY = re.compile(r"^\s*(?:but |and |ok,? )?(?:why(?: not)?|how come)\b[^?]{0,30}\??\s*$", re.I)
HELP_WITH_ORDER = re.compile(r"\bhelp with (?:an|my|one of my) order\b", re.I)
# How a person's words are asked of the help center: what its articles call the same thing.
HELP_WORDS = [(r"\bsend (?:it |them |this |that )?back\b", "return"), (r"\bmoney\b", "refund"),
              (r"\b(?:arrive|get here|delivery time)\b", "shipping times"),
              (r"\bopening hours\b|\bhours\b|\bopen on\b", "contact support hours")]
ORDER_INTENT = re.compile(r"\b(?:refund|money back|return|send back|status|where|arrive|pending|"
                          r"go through|went through|track|shipped)\b", re.I)
ITEM_REF = re.compile(r"\b(?:my|the|that|this|those|these)\s+((?:[a-z]+\s+){0,2}[a-z]+)", re.I)
# A follow-up that is only a thing: "the headphones", "what about the socks", "ok and the lamp?".
JUST_AN_ITEM = re.compile(r"^\s*(?:(?:ok(?:ay)?|and|so|what about|how about)\W*)*"
                          r"(?:the|my|that|this|those|these)\s+[a-z]+(?:\s+[a-z]+)?\s*[?.!]*\s*$", re.I)
NOT_ITEMS = set("""order orders one other refund money item items thing parcel package delivery
address password account ticket tickets link card help website shop support way same last first
next window policy""".split())


def help_query(text: str, messages: list[dict]) -> str:
    """What to search the help center for: the question in its words, and a short follow-up
    ("how much is it?", "and express?") with the question it follows."""
    query = text
    for said, meant in HELP_WORDS:
        if re.search(said, query, re.I):
            query = f"{query} {meant}"
    earlier = [m.get("content") or "" for m in messages[:-1] if m["role"] == "user"]
    if earlier and len(text.split()) <= 5 and re.search(r"\b(?:it|that|and|then|those)\b", text, re.I):
        query = f"{query} {earlier[-1]}"
    return query


def items_named(text: str) -> list[str]:
    """The words of "my socks", "the desk lamp" that may name an item (never "the order")."""
    found = []
    for phrase in ITEM_REF.findall(text):
        found += [w.lower() for w in phrase.split() if w.lower() not in NOT_ITEMS and len(w) > 2]
    return found


def order_named(texts: list[str], orders: list[dict]) -> dict | None:
    """The order whose item the first of these texts that names one does ("the lamp" → Desk lamp)."""
    for text in texts:
        words = {w.rstrip("s") for w in re.findall(r"[a-z]{3,}", text.lower()) if w not in NOT_ITEMS}
        for order in orders:
            item = {w.rstrip("s") for w in re.findall(r"[a-z]{3,}", str(order.get("item", "")).lower())}
            if words & item:
                return order
    return None


def wants_an_order_by_item(text: str, earlier_user: list[str], orders_talked_about: bool,
                           asked_which: bool) -> bool:
    """Whether a question with no order number is about an order it names by its item ("did my
    refund for the desk lamp go through?", "what about the socks", "is it still pending?")."""
    if items_named(text) and (ORDER_INTENT.search(text) or (
            JUST_AN_ITEM.match(text) and (orders_talked_about or asked_which))):
        return True
    return bool(re.search(r"\bit\b", text, re.I) and ORDER_INTENT.search(text)
                and not orders_talked_about and any(items_named(t) for t in earlier_user))
