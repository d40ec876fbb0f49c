"""Memories are written about a person, not in their voice: "I prefer email" → "Alex prefers email".

Read back in another conversation, "I" would be ambiguous (the assistant? the customer?), so first
person is rewritten in the third person with the person's name; "we" stays, it names their side.
Only verbs it knows are conjugated (past tenses, modals and contractions keep their form: "knew",
"doesn't"); a sentence it cannot rewrite safely keeps the customer's own words, quoted.
"""
import re

PRESENT = {"am": "is", "have": "has", "do": "does", "go": "goes"}
CONTRACTED = {"don't": "doesn't", "haven't": "hasn't", "do not": "does not"}
KEEP = set("""would will can could should must might may shall can't won't didn't wasn't couldn't
wouldn't shouldn't was did had""".split())
PAST = set("""was were had did went got bought made said told paid sent left took came found
thought felt lost knew met ran ate drank saw gave kept brought began wrote spoke drove sold held
stood understood heard meant put set cut let hit read forgot moved""".split())
BASE = set("""prefer like love hate want need live work use pay have do go get buy order own drive
run read play eat drink cook take make keep call email text ship shop wear speak study teach
travel visit walk cycle commute collect expect plan hope think believe feel know mean enjoy
dislike avoid rent share sell send receive bring choose check come leave start stop try wait
watch write sleep stay move look listen mind bake grow usually agree am rely sign pick book
subscribe return""".split())
ADVERB = set("""always never usually often really also only sometimes mostly rarely generally
still just normally typically actually""".split())
FIRST_PERSON = re.compile(r"\b(?:I|me|my|mine|myself)\b|\bI'", re.I)


class CannotRephrase(ValueError):
    """A first-person verb this module does not know how to put in the third person."""


def third_person_verb(verb: str) -> str:
    lowered = verb.lower()
    if lowered in CONTRACTED:
        return CONTRACTED[lowered]
    if lowered in KEEP or lowered in PAST or lowered.endswith("ed") or lowered.endswith("n't"):
        return verb
    if lowered in PRESENT:
        return PRESENT[lowered]
    if lowered not in BASE:
        raise CannotRephrase(verb)
    if re.search(r"(s|sh|ch|x|z|o)$", lowered):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lowered):
        return verb[:-1] + "ies"
    return verb + "s"


def subject_and_verb(match: re.Match, name: str) -> str:
    adverbs, verb = match.group(1) or "", match.group(2)
    return f"{name} {adverbs}{third_person_verb(verb)}"


def rewrite(text: str, name: str) -> str:
    out = re.sub(r"\bI'm\b|\bI am\b", f"{name} is", text)
    out = re.sub(r"\bI've\b", f"{name} has", out)
    out = re.sub(r"\bI'll\b", f"{name} will", out)
    out = re.sub(r"\bI'd\b", f"{name} would", out)
    adverbs = "|".join(sorted(ADVERB))
    out = re.sub(rf"\bI ((?:(?:{adverbs}|\w+ly) )*)(do not|\w+(?:'t)?)",
                 lambda m: subject_and_verb(m, name), out)
    if re.search(r"\bI\b", out):
        raise CannotRephrase(text)
    owner = "their" if name in out else f"{name}'s"  # "Alex likes their mug", not "Alex's mug"
    out = re.sub(r"\b[Mm]y\b", owner, out)
    out = re.sub(r"\b[Mm]ine\b", f"{name}'s", out)
    return re.sub(r"\b(?:me|myself)\b", name, out)


def in_third_person(text: str, name: str) -> str:
    """Rewrite a first-person statement about `name`; what it cannot rewrite is quoted as said."""
    name = (name or "").strip() or "The customer"
    out = re.sub(r"^(?:please\s+)?remember(?: that|:)?\s+", "", text.strip().replace("’", "'"),
                 flags=re.I)
    out = re.sub(r"\bi\b", "I", out)
    out = out[:1].upper() + out[1:] if out else out
    if not FIRST_PERSON.search(out):
        return out
    try:
        rewritten = rewrite(out, name)
    except CannotRephrase:
        return f'{name} said: "{out}"'
    return rewritten[:1].upper() + rewritten[1:]


def fact_key(text: str, name: str = "") -> str:
    """What a memory says, whoever wrote it down: 'Alex says: "We pay by invoice."' and
    'We pay by invoice.' are one fact (stemmed words, without the speaker's name and quotes)."""
    from .ranking import terms
    body = re.sub(r'^[^"]*\bsa(?:ys|id):\s*', "", (text or "").strip())
    ignored = set(terms(name))
    return " ".join(t for t in terms(body) if t not in ignored)
