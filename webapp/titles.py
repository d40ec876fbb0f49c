"""A conversation's title from its first message: the gist in a few words, not the message verbatim."""
import re

TITLE_WORDS = 7
TITLE_CHARS = 48
# Openings that carry no topic: greetings, "can I get a", "I'd like to know", "please".
FILLER = re.compile(
    r"^(?:(?:hi|hello|hey|good (?:morning|afternoon|evening))(?: there)?\b[\s,!.]*"
    r"|(?:please|so|ok(?:ay)?|um|well)\b[\s,]*"
    r"|(?:can|could|would|will|may) (?:i|you|we)(?: please)?(?: (?:get|have|help me(?: with)?|tell me|check))?"
    r"(?: (?:a|an|the|my|me))?\b\s*"
    r"|i(?:'d| would) like(?: to(?: know)?)?\s*|i (?:want|need)(?: to(?: know)?)?\s*)", re.I)


def short_title(message: str) -> str:
    """E.g. "Can I get a refund for order #1043?" → "Refund for order #1043"; a message whose
    topic is only a word or two keeps its own words ("I need help")."""
    text = " ".join(message.split())
    for _ in range(4):  # "Hi! Could you please…" sheds one opening at a time
        stripped = FILLER.sub("", text, count=1)
        if stripped == text or not stripped.strip(" ?!.,"):
            break
        text = stripped
    text = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0].strip(" ?!.,;:")  # the first sentence
    whole = re.split(r"(?<=[.!?])\s", " ".join(message.split()), maxsplit=1)[0].strip(" ?!.,;:")
    topic = re.sub(r"^(?:a|an|the|my)\s+", "", text, flags=re.I)
    if len(topic.split()) < 2 and len(whole.split()) <= TITLE_WORDS:
        text = whole  # what was left says too little ("hello 0" → "0", "I need help" → "help")
    words = text.split()[:TITLE_WORDS]
    title = " ".join(words)
    if len(title) > TITLE_CHARS:
        title = title[:TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    if not title:
        return " ".join(message.split())[:TITLE_CHARS] or "New conversation"
    return title[0].upper() + title[1:]
