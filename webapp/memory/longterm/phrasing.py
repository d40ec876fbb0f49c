"""Memories are written about a person, not in their voice: "I prefer email" → "Alex prefers email".

Read back in another conversation, "I" would be ambiguous (the assistant? the customer?), so first
person is rewritten in the third person with the person's name; "we" stays, it names their side.
"""
import re

IRREGULAR = {"am": "is", "have": "has", "do": "does", "go": "goes", "was": "was"}
MODALS = {"would", "will", "can", "could", "should", "must", "might", "may", "shall"}


def third_person_verb(verb: str) -> str:
    lowered = verb.lower()
    if lowered in IRREGULAR:
        return IRREGULAR[lowered]
    if lowered in MODALS:
        return verb
    if re.search(r"(s|sh|ch|x|z|o)$", lowered):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lowered):
        return verb[:-1] + "ies"
    return verb + "s"


def in_third_person(text: str, name: str) -> str:
    """Rewrite a first-person statement about `name`; anything else is returned as it was."""
    name = (name or "").strip() or "The customer"
    out = re.sub(r"^(?:please\s+)?remember(?: that|:)?\s+", "", text.strip(), flags=re.I)
    out = re.sub(r"\bI'm\b|\bI am\b", f"{name} is", out)
    out = re.sub(r"\bI'd rather\b", f"{name} would rather", out, flags=re.I)
    out = re.sub(r"\bI (always|never|usually|often|really|also|only) (\w+)",
                 lambda m: f"{name} {m.group(1)} {third_person_verb(m.group(2))}", out)
    out = re.sub(r"\bI (\w+)", lambda m: f"{name} {third_person_verb(m.group(1))}", out)
    out = re.sub(r"\b[Mm]y\b", f"{name}'s", out)
    out = re.sub(r"\b(?:me|myself)\b", name, out)
    out = out.strip()
    return (out[:1].upper() + out[1:]) if out else out
