"""What the offline model knows: facts stated in the messages it was sent, and nothing else."""
import re

FACT_PATTERNS = re.compile(
    r"\bmy \w+|\bi(?:'m| am)\b|\bi (?:prefer|like|love|hate|live|work|use|always|never|want|"
    r"need|speak|have|wear|own)\b|\bcall me\b|\bremember\b|"
    r"\bwe (?:always|never|bill|use|ship|prefer|pay|are)\b|\bprefer", re.I)
STOPWORDS = set("""a an the is are was were be been am i me my we our you your it its to of in on
for and or but with what which who whom how when where why do does did can could would should will
please tell know remember about that this there here any some have has had again said say
""".split())
SYNONYMS = {
    "contact": {"email", "phone", "call", "text", "sms", "mail", "contact", "reach"},
    "reach": {"email", "phone", "call", "contact"},
    "name": {"name", "called", "call"},
    "live": {"live", "address", "city", "from"},
    "bill": {"bill", "billing", "invoice", "pay", "fortnightly", "monthly"},
    "pay": {"pay", "payment", "bill", "card"},
}
PERSONAL_QUESTION = re.compile(
    r"what(?:'s| is| was) my|do you (?:know|remember)|what did (?:i|we) (?:say|tell)|who am i|"
    r"\bmy name\b|how do (?:i|we) prefer|what do (?:i|we) prefer|where do i live|"
    r"how do we (?:bill|pay)|what(?:'s| is) our", re.I)
# A memory is a note without a subject ("Prefers email over phone."): its verb, put back for "you".
NOTE_VERBS = {"is": "are", "has": "have", "does": "do", "doesn't": "don't", "goes": "go",
              "was": "were", "wasn't": "weren't"} | {f"{v}s": v for v in """prefer like love
hate want need live work use pay order own drive speak wear call email text expect plan enjoy
avoid rent share sell send bring choose keep take make buy get eat drink cook ship shop""".split()}
NOTE_ADVERBS = {"always", "never", "usually", "often", "really", "also", "only", "sometimes",
                "mostly", "rarely", "generally", "still", "normally", "typically"}
SECOND_PERSON = [(r"\bI'm\b", "you're"), (r"\bI am\b", "you are"), (r"\bI\b", "you"),
                 (r"\bmy\b", "your"), (r"\bme\b", "you"), (r"\bmine\b", "yours"),
                 (r"\bwe\b", "you"), (r"\bour\b", "your"), (r"\bus\b", "you")]


def stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    return {stem(w) for w in re.findall(r"[a-z0-9']+", text.lower()) if w not in STOPWORDS}


# Where a sentence ends: after . ! or ?, but not the "no." or "nr." of "order no. 1041".
SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\b[Nn][Oo]\.)(?<!\b[Nn][Rr]\.)\s+|\n+")


def sentences(text: str) -> list[str]:
    return [s.strip(" -*•\t") for s in SENTENCE_END.split(text or "") if s.strip(" -*•\t")]


# A request typed without its question mark ("can i get my money back for the headphones") is
# not a fact about the person.
ASKING = re.compile(r"^\s*(?:can|could|would|will|do|does|did|is|are|how|what|where|when|why|which|"
                    r"please|pls)\b", re.I)
# "my name is Alex and I live in Porto" is two facts: a question about one gets that one alone.
CLAUSE = re.compile(r",?\s+and\s+(?=(?:i|i'm|my|we|our)\b)|,\s+(?=(?:i|i'm|my)\b)", re.I)


def clauses(sentence: str) -> list[str]:
    parts = [p.strip() for p in CLAUSE.split(sentence) if p.strip()]
    # "Hi, my name is Alex": the greeting is no clause of its own.
    return [p for p in parts if not re.fullmatch(r"(?i)(?:hi|hello|hey)\W*", p)]


def said_clauses(line: str) -> list[str]:
    """A summary's "User: my name is Dara and I live in Lisbon" as one line per clause, each
    still the customer's words."""
    if not line.startswith("User: "):
        return [line]
    return ["User: " + c for c in clauses(line[len("User: "):])]


def known_facts(messages: list[dict]) -> list[tuple[str, str]]:
    """(source, sentence) for every fact in the context: user statements and memory/summary lines."""
    facts = []
    system_seen = False
    for m in messages[:-1]:
        if m["role"] == "system":
            if system_seen:  # the first system message is the prompt; later ones are memory/summary
                # A summary's "Nimbus: …" lines are what was answered, not facts about the customer.
                facts += [("notes", c) for s in sentences(m["content"])
                          if not s.endswith(":") and not s.startswith("Nimbus: ")
                          for c in said_clauses(s)]
            system_seen = True
        elif m["role"] == "user":
            facts += [("user", c) for s in sentences(m["content"]) for c in clauses(s)
                      if FACT_PATTERNS.search(c) and not s.endswith("?") and not ASKING.match(s)]
    return facts


def recall(question: str, messages: list[dict]) -> tuple[str, str] | None:
    """The fact that best matches the question, the most recent one on a tie; None if nothing does."""
    asked = content_words(question)
    wanted = set(asked)
    for word in asked:
        wanted |= {stem(w) for w in SYNONYMS.get(word, {word})}
    best, best_score = None, 0
    for source, fact in known_facts(messages):
        words = content_words(fact)
        score = len(wanted & words) + len(asked & words)  # the question's own words count double
        if score and "name" in wanted and name_in(fact):
            score += 2  # "my name is Dara" answers a name question better than "call me by email"
        if score and score >= best_score:
            best, best_score = (source, fact), score
    return best


def second_person(sentence: str) -> str:
    sentence = re.sub(r"^(?:please\s+)?remember(?: that|:)?\s*", "", sentence.strip(), flags=re.I)
    for pattern, replacement in SECOND_PERSON:
        sentence = re.sub(pattern, replacement, sentence, flags=re.I)
    sentence = sentence.rstrip(".!")
    return sentence[:1].upper() + sentence[1:] + "."


def addressed(note: str) -> str:
    """A note about the customer told to them: "Prefers email over phone." → "you prefer email
    over phone."; any other note as written."""
    words = note.strip().rstrip(".!").split(" ")
    i = 0
    while i < len(words) - 1 and words[i].lower() in NOTE_ADVERBS:
        i += 1
    if words[i].lower() not in NOTE_VERBS:
        return note.strip().rstrip(".") + "."
    words[i] = NOTE_VERBS[words[i].lower()]
    words = ["you", words[0][:1].lower() + words[0][1:], *words[1:]]
    return re.sub(r"\btheir\b", "your", " ".join(words)) + "."


def name_in(fact: str) -> str | None:
    # The phrase in any case, the name capitalised: "call me after 6" names nobody.
    match = re.search(r"\b(?i:my name is|call me|i'm called|name:)\s+([A-Z][\w'-]+)", fact)
    return match.group(1) if match else None


def answer_from_fact(question: str, source: str, fact: str) -> str:
    name = name_in(fact)
    if name and "name" in question.lower():
        return f"Your name is {name}."
    if source == "notes" and fact.startswith("User: "):  # the customer's words, kept in a summary
        return second_person(fact[len("User: "):])
    if source == "notes":
        return f"From my notes: {addressed(fact)}"
    return second_person(fact)
