"""Memories are noted the way a person jots them down: "I prefer email" → "Prefers email.".

Read back in another conversation, "I" would be ambiguous (the assistant? the customer?), so a
first-person statement becomes a note without a subject, whose subject the memory row already
holds; "we" stays, it names their side. Only verbs it knows are conjugated (past tenses, modals and
contractions keep their form: "knew", "doesn't"); a sentence it cannot rewrite safely keeps the
customer's own words, quoted. A note is rendered for whoever reads it: "You prefer email." to the
customer (`to_you`), "Alex Rivera prefers email." to staff (`about`).
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


NOTE = "\x00"  # stands for the subject while a note is written; never in a stored memory


def in_note_form(text: str) -> str:
    """A first-person statement as a subjectless note ("Prefers email over phone."); anything else
    as said, capitalised; what it cannot rewrite, quoted ('Said: "I fix bikes for a living"')."""
    out = in_third_person(text, NOTE)
    if out.startswith(f'{NOTE} said: '):
        return "Said: " + out[len(NOTE) + 7:]
    out = re.sub(rf"{NOTE}'s\b", "their", out)
    out = re.sub(rf"^{NOTE} ", "", out)
    out = out.replace(NOTE, "them")
    out = out[:1].upper() + out[1:]
    return out if out[-1:] in ".!?\"" else out + "."


YOU = [(r"\btheirs\b", "yours"), (r"\btheir\b", "your"), (r"\bTheir\b", "Your"),
       (r"\bthemselves\b", "yourself"), (r"\bthem\b", "you")]
UNCONJUGATED = {"said:": "said:", "is": "are", "has": "have", "does": "do", "goes": "go", "doesn't": "don't",
                "hasn't": "haven't", "isn't": "aren't", "was": "were", "wasn't": "weren't"}
VERB_OF = {third_person_verb(v): v for v in BASE - {"am"}} | UNCONJUGATED


def note_body(content: str, name: str | None = None) -> tuple[str, int | None]:
    """(the note without its subject, the index of its verb or None): older memories written in
    the third person with the person's name ("Alex prefers email.") read as notes too."""
    body = (content or "").strip()
    if name and body.lower().startswith(name.lower() + " "):
        body = body[len(name) + 1:]
        body = body[:1].upper() + body[1:]
    words = body.split(" ")
    i = 0
    while i < len(words) - 1 and (words[i].lower() in ADVERB or words[i].lower().endswith("ly")):
        i += 1
    verb = words[i].lower() if words else ""
    known = verb in VERB_OF or verb in KEEP or verb in PAST or verb == "said:"
    return body, i if known and body[:1].isupper() else None


def to_you(content: str, name: str | None = None) -> str:
    """A note about the reader, addressed to them: "Prefers email." → "You prefer email."."""
    body, verb = note_body(content, name)
    if verb is not None:
        words = body.split(" ")
        words[verb] = VERB_OF.get(words[verb].lower(), words[verb].lower())
        body = " ".join(["You", words[0][:1].lower() + words[0][1:], *words[1:]])
    for pattern, replacement in YOU:
        body = re.sub(pattern, replacement, body)
    return re.sub(r"^Your\b|^your\b", "Your", body)


def about(content: str, name: str | None) -> str:
    """A note about a person, with their name, for staff: "Prefers email." → "Alex prefers email."."""
    body, verb = note_body(content, name)
    if not name:
        return body
    if verb is not None:
        return f"{name} {body[:1].lower() + body[1:]}"
    return re.sub(r"^Their\b", f"{name}'s", body)


def fact_key(text: str, name: str = "") -> str:
    """What a memory says, whoever wrote it down: 'Alex says: "We pay by invoice."' and
    'We pay by invoice.' are one fact (stemmed words, without the speaker's name and quotes)."""
    from ..search.bm25 import terms
    body = re.sub(r'^[^"]*\bsa(?:ys|id):\s*', "", (text or "").strip(), flags=re.I)
    ignored = set(terms(name))
    return " ".join(t for t in terms(body) if t not in ignored)
