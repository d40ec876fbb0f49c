"""The offline model's memory distiller: conservative patterns over what the customer said.

It answers only requests carrying the distiller's output format, keeps names, stated preferences,
"remember that…" and "we always / we bill…" arrangements, and writes nothing for small talk or
advice ("remember to…" asks for something once; it is not a fact about anybody). A new way to be
contacted ("please call me instead") supersedes the one already remembered.
"""
import json
import re

from ...llm import SENTENCE_END
from ...shop.order_numbers import order_numbers
from .distil import MARKER
from .phrasing import in_note_form
from .slots import slot_of

LINE = re.compile(r"^\[turn (\d+)\] Customer: (.*)$", re.M)
NAME = re.compile(r"\b(?:my name is|call me|i'm called|i am called)\s+(?!(?:instead|back|later|on|at|"
                  r"from|please|now|when|if|about|by|tomorrow|asap|anytime|maybe)\b)([a-z][\w'-]+)",
                  re.I)
PREFERENCE = re.compile(r"^(?:I'd rather\b|I (?:prefer|always|never|would rather|'d rather|like to be|"
                        r"want to be|don't want)\b|please (?:always|never)\b)", re.I)
ARRANGEMENT = re.compile(r"^we (?:always|never|usually|bill|pay|prefer|use|order|ship|"
                         r"only)\b", re.I)
REMEMBER = re.compile(r"^(?:please\s+)?remember(?: that|:)?\s+(.+)", re.I)
LIVES = re.compile(r"\b(?:I (?:now )?live|I'm living|I am living|I(?:'ve| have)? (?:just )?moved) "
                   r"(?:in|at|to) ([^,;!?]+?)\s*(?:now|these days)?$", re.I)
ADDRESS = re.compile(r"\bmy (?:new )?(?:home |delivery |postal )?address is (?:now )?([^;!?]+?)\.?$", re.I)
SIZE = re.compile(r"\b(?:my size is|I wear(?: a)? size|I'm a size|I am a size|I take(?: a)? size) "
                  r"(?:an? )?(XXS|XS|S|M|L|XL|XXL|\d+)\b", re.I)
QUOTED = re.compile(r'"[^"]*"|“[^”]*”|^>.*$', re.M)  # someone else's words, not the customer's
OPENER = re.compile(r"^(?:(?:actually|no|oh|ok|okay|sorry|also|btw|by the way|and|well|update)[,:!]?\s+)+",
                    re.I)
ADVICE = re.compile(r"^(?:to|when|how|if|why|what|where)\b", re.I)  # "remember to bring…"
KNOWN = re.compile(r"^\[memory (\d+)\] (.*)$", re.M)
ASK_CONTACT = re.compile(r"^(?:actually,?\s+|no,?\s+)?please (call|phone|ring|e-?mail|text|write to) me"
                         r"(?=\s*(?:$|[.,;!]|instead|back|on\b|at\b|from|please|rather|if|when|now|later))",
                         re.I)
CHANNELS = {"call": "phone calls", "phone": "phone calls", "ring": "phone calls",
            "email": "email", "e-mail": "email", "text": "text messages", "write to": "letters"}


def sentences(text: str) -> list[str]:
    """The customer's own sentences: text they quote (another person's words) is left out."""
    return [s.strip() for s in SENTENCE_END.split(QUOTED.sub(" ", text)) if s.strip()]


def offered(prompt: str) -> tuple[list[str], list[int]]:
    """The scope words and order numbers the prompt's schema allows: nothing else is written."""
    schema = json.loads(prompt.split(MARKER, 1)[1].splitlines()[1])
    item = schema["properties"]["memories"]["items"]["properties"]
    return item["scope"]["enum"], item.get("order_number", {}).get("enum", [])


def memory_of(sentence: str, name: str, words: list[str], orders: list[int]) -> dict | None:
    sentence = OPENER.sub("", sentence)
    remembered = REMEMBER.match(sentence)
    fact = remembered.group(1) if remembered else sentence
    if sentence.endswith("?") or (remembered and ADVICE.match(fact)):
        return None
    if (asked := ASK_CONTACT.match(fact)) and "workspace" in words:
        channel = CHANNELS[asked.group(1).lower()]
        return {"content": f"Prefers {channel}.", "scope": "workspace", "personal": True}
    bare = fact.rstrip(".! ")
    if (found := LIVES.search(bare) or ADDRESS.search(bare)) and "workspace" in words:
        place = found.group(1).strip().rstrip(".")
        label = "Lives in" if found.re is LIVES and not place[:1].isdigit() else "Address:"
        return {"content": f"{label} {place}.", "scope": "workspace", "personal": True}
    if (found := SIZE.search(bare)) and "workspace" in words:
        return {"content": f"Size: {found.group(1).upper()}.", "scope": "workspace", "personal": True}
    if (found := NAME.search(fact)) and "workspace" in words:
        return {"content": f"Name: {found.group(1)[:1].upper() + found.group(1)[1:]}.", "scope": "workspace", "personal": True}
    if ARRANGEMENT.match(fact) and "account" in words:
        return {"content": in_note_form(fact), "scope": "account",
                "personal": False}
    if remembered or PREFERENCE.match(fact):
        numbers = [n for n in order_numbers(fact) if n in orders]
        content = in_note_form(fact)
        if numbers and "order" in words:
            return {"content": content, "scope": "order", "order_number": numbers[0],
                    "personal": False}
        return {"content": content, "scope": "workspace", "personal": True}
    return None


def replaces(memory: dict, known: list[tuple[int, str]]) -> dict:
    """{"supersedes": id} when the note replaces a remembered one keyed the same way (a new way
    to be contacted, a new address, another name)."""
    content = memory["content"]
    slot = slot_of(content) if memory["scope"] == "workspace" else None
    for id_, text in known:  # newest first: the fact in force
        if slot is not None and slot_of(text) == slot and text.lower() != content.lower():
            return {"supersedes": id_}
    return {}


def distil_offline(messages: list[dict]) -> str | None:
    if not messages or messages[0]["role"] != "system" or MARKER not in messages[0]["content"]:
        return None
    words, orders = offered(messages[0]["content"])
    known = [(int(id_), text) for id_, text in KNOWN.findall(messages[0]["content"])]
    excerpt = messages[-1]["content"]
    name = re.match(r"Conversation with (.+):", excerpt)
    name = name.group(1) if name else "The customer"
    found = []
    for seq, text in LINE.findall(excerpt):
        for sentence in sentences(text):
            memory = memory_of(sentence, name, words, orders)
            if memory is not None:
                found.append({**memory, "turn": int(seq), **replaces(memory, known)})
    return json.dumps({"memories": found})

