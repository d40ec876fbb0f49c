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
# Words that open a new clause: a long first sentence is cut before the last of them that fits.
CLAUSE_OPENERS = {"and", "but", "or", "so", "because", "since", "when", "while", "which", "who",
                  "that", "if", "although", "though", "as", "then", "can", "could", "will", "would"}
# Words a title must not end on: "…and the", "…order for".
DANGLING = CLAUSE_OPENERS | {"a", "an", "the", "my", "your", "our", "to", "of", "for", "in", "on", "at",
                             "with", "from", "by", "about", "is", "are", "was", "i", "it", "me"}


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
    words = text.split()
    title = " ".join(clause_cut(words) if len(words) > TITLE_WORDS else words)
    if len(title) > TITLE_CHARS:
        title = " ".join(without_dangling(title[:TITLE_CHARS - 1].rsplit(" ", 1)[0].split())) + "…"
    if not title:
        return " ".join(message.split())[:TITLE_CHARS] or "New conversation"
    return title[0].upper() + title[1:]


def clause_cut(words: list[str]) -> list[str]:
    """At most TITLE_WORDS words ending where a clause ends: after a comma, before "and"/"because",
    or at least never on a comma or a word that needs the next one."""
    cuts = [i for i in range(3, TITLE_WORDS + 1)
            if words[i - 1][-1] in ",;:" or words[i].lower().strip(",") in CLAUSE_OPENERS]
    return without_dangling(words[:cuts[-1]] if cuts else words[:TITLE_WORDS])


def without_dangling(words: list[str]) -> list[str]:
    """The words less any trailing punctuation and words that lean on what was cut."""
    words = [*words]
    while len(words) > 1 and (words[-1].lower().strip(",;:-") in DANGLING or not words[-1].strip(",;:-")):
        words.pop()
    if words:
        words[-1] = words[-1].rstrip(",;:-")
    return words
