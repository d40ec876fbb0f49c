"""The offline model's memory distiller: conservative patterns over what the customer said.

It answers only requests carrying the distiller's output format, keeps names, stated preferences,
"remember that…" and "we always / we bill…" arrangements, and writes nothing for small talk or
advice ("remember to…" asks for something once; it is not a fact about anybody). A new way to be
contacted ("please call me instead") supersedes the one already remembered.
"""
import json
import re

from ..llm.offline_recall import SENTENCE_END
from ..shop.order_numbers import order_numbers
from .distiller import MARKER
from .phrasing import in_note_form

LINE = re.compile(r"^\[turn (\d+)\] Customer: (.*)$", re.M)
NAME = re.compile(r"(?i:\bmy name is|\bcall me|\bi'm called)\s+([A-Z][\w'-]+)")
PREFERENCE = re.compile(r"^(?:I (?:prefer|always|never|would rather|'d rather|like to be|"
                        r"want to be|don't want)\b|please (?:always|never)\b)", re.I)
ARRANGEMENT = re.compile(r"^we (?:always|never|usually|bill|pay|prefer|use|order|ship|"
                         r"only)\b", re.I)
REMEMBER = re.compile(r"^(?:please\s+)?remember(?: that|:)?\s+(.+)", re.I)
ADVICE = re.compile(r"^(?:to|when|how|if|why|what|where)\b", re.I)  # "remember to bring…"
KNOWN = re.compile(r"^\[memory (\d+)\] (.*)$", re.M)
CONTACT = re.compile(r"\b(e-?mail|phone|call|calls|called|ring|text messages?|sms|letters?)\b", re.I)
ASK_CONTACT = re.compile(r"^(?:actually,?\s+|no,?\s+)?please (call|phone|ring|e-?mail|text|write to) me\b",
                         re.I)
CHANNELS = {"call": "phone calls", "phone": "phone calls", "ring": "phone calls",
            "email": "email", "e-mail": "email", "text": "text messages", "write to": "letters"}


def sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(text) if s.strip()]


def offered(prompt: str) -> tuple[list[str], list[int]]:
    """The scope words and order numbers the prompt's schema allows: nothing else is written."""
    schema = json.loads(prompt.split(MARKER, 1)[1].splitlines()[1])
    item = schema["properties"]["memories"]["items"]["properties"]
    return item["scope"]["enum"], item.get("order_number", {}).get("enum", [])


def memory_of(sentence: str, name: str, words: list[str], orders: list[int]) -> dict | None:
    remembered = REMEMBER.match(sentence)
    fact = remembered.group(1) if remembered else sentence
    if sentence.endswith("?") or (remembered and ADVICE.match(fact)):
        return None
    if (asked := ASK_CONTACT.match(fact)) and "workspace" in words:
        channel = CHANNELS[asked.group(1).lower()]
        return {"content": f"Prefers {channel}.", "scope": "workspace", "personal": True}
    if (found := NAME.search(fact)) and "workspace" in words:
        return {"content": f"Name: {found.group(1)}.", "scope": "workspace", "personal": True}
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
    """{"supersedes": id} when a new way to be contacted replaces a remembered one."""
    content = memory["content"]
    if memory["scope"] != "workspace" or not content.startswith("Prefers ") \
            or not CONTACT.search(content):
        return {}
    for id_, text in known:  # newest first: the preference in force
        if text.startswith("Prefers ") and CONTACT.search(text) and text.lower() != content.lower():
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

