"""The summarizer call: fold turns that left the window into the previous summary, with the model.

The model gets the summary so far, the topics so far and the new turns; it replies with the new
summary and a last `Topics:` line. Any provider works; the offline model has an extractive handler.
"""
import re
from dataclasses import dataclass, replace

from ...llm import ProviderError, Reply, estimate_messages, estimate_text

PROMPT_OPENING = "You keep the rolling summary of a support conversation"
STYLES = {
    "concise": "one short line per fact, oldest first",
    "detailed": "the facts, plus one line per earlier request and how it was resolved",
    "bullets": "one '- ' bullet point per fact, oldest first",
}
MAX_TOPICS = 12
SUMMARY_PROMPT = PROMPT_OPENING + """ between a customer (User) and Nimbus, the shop's support agent.
You get the summary so far and the turns that just left the model's context window. Write the
new summary: the summary so far with the new turns folded in.
- Keep every name, contact detail, number, order number, ticket number, date and stated
  preference exactly as written; quote the customer's statements of fact verbatim as "User: …".
- Keep what was decided or done (refunds checked, tickets opened) as "Nimbus: …" lines.
- Leave out greetings and small talk.
Style: {style} ({description}).
Stay under {max_tokens} tokens (about {max_words} words).
Reply with the summary only, then one last line: "Topics: " and up to 8 short topics,
comma-separated."""


@dataclass(frozen=True)
class Said:
    """A turn as a fold reads it: plain values, so the model call needs no database session."""
    seq: int
    question: str
    answer: str

    @classmethod
    def of(cls, turn) -> "Said":
        return cls(turn.seq, turn.question or "", turn.answer or "")


def reply_tokens(max_tokens: int) -> int:
    """The fold's output cap: a summary may run a little over its size before it is cut."""
    return max_tokens * 3 // 2


def transcript(turns) -> str:
    """Each turn as its question and final answer, one line each, newlines flattened."""
    lines = []
    for turn in turns:
        lines.append(f"[Turn {turn.seq + 1}]")
        lines.append("User: " + " ".join(turn.question.split()))
        if turn.answer.strip():
            lines.append("Nimbus: " + " ".join(turn.answer.split()))
    return "\n".join(lines)


def fold_request(previous: str, topics: list[str], turns, style: str, max_tokens: int) -> list[dict]:
    prompt = SUMMARY_PROMPT.format(style=style, description=STYLES[style], max_tokens=max_tokens,
                                   max_words=max_tokens * 3 // 4)
    body = (f"Summary so far:\n{previous.strip() or '(none yet)'}\n\n"
            f"Topics so far: {', '.join(topics) or '(none yet)'}\n\n"
            f"Turns {turns[0].seq + 1}–{turns[-1].seq + 1}, to fold in:\n{transcript(turns)}")
    return [{"role": "system", "content": prompt}, {"role": "user", "content": body}]


CUT = " […cut to fit the model's window]"


def fitting(previous: str, topics: list[str], turns, style: str, max_tokens: int,
            room: int | None, ratio: float = 1.0) -> list:
    """The oldest of `turns` whose fold request fits `room` tokens (None: no window known); the
    oldest alone, shortened, when even it does not fit, so a long turn never stalls the folds."""
    if room is None or not turns:
        return list(turns)

    def size(window) -> float:
        return estimate_messages(fold_request(previous, topics, window, style, max_tokens)) * ratio

    count = 1
    while count < len(turns) and size(turns[:count + 1]) <= room:
        count += 1
    first = turns[0]
    if count > 1 or size([first]) <= room:
        return list(turns[:count])
    bare = size([replace(first, question="", answer="")])
    chars = max(int((room - bare) / ratio * 4) - 2 * len(CUT), 200)
    while True:  # the question first, the answer with what is left of the room
        question = first.question if len(first.question) <= chars * 2 // 3 else \
            first.question[:chars * 2 // 3].rstrip() + CUT
        left = max(chars - len(question), chars // 3)
        answer = first.answer if len(first.answer) <= left else first.answer[:left].rstrip() + CUT
        shortened = replace(first, question=question, answer=answer)
        if size([shortened]) <= room or chars <= 200:
            return [shortened]
        chars = max(chars * 3 // 4, 200)


def parse_reply(text: str, max_tokens: int) -> tuple[str, list[str]]:
    """Split off the Topics line; a summary far over its size is cut at a line boundary (a
    first line over it alone, as a paragraph of prose is, at a word)."""
    lines = [line.rstrip() for line in text.strip().splitlines()]
    topics: list[str] = []
    if lines and re.match(r"^\W*topics\W*:", lines[-1], re.I):
        topics = [t.strip(" .*") for t in lines.pop().split(":", 1)[1].split(",") if t.strip(" .*")]
    kept, used, most = [], 0, max_tokens * 5 // 4
    for line in lines:
        used += estimate_text(line) + 1
        if used > most:
            if not kept:
                kept.append(line[:most * 4].rsplit(" ", 1)[0])
            kept.append("…")
            break
        kept.append(line)
    return "\n".join(kept).strip(), topics[-MAX_TOPICS:]


class SummaryRejected(ValueError):
    """The model's summary failed the check: the summary before it is kept."""


MARKERS = re.compile(r"\[turn \d+\]|\bsummary\b|\btopics\b|\(none yet\)|\bnone\b", re.I)
EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
NUMBER = re.compile(r"(?<![\w.])#?\d{3,}(?![\w.])")
# A capitalised word after a lower-case one: a name in mid-sentence ("call Alex", "via PayPal").
PROPER = re.compile(r"(?<=[a-z,] )([A-Z][a-z]+(?:[A-Z][a-z]+)?)\b")
NOT_NAMES = {"User", "Nimbus", "Turn", "Turns", "Summary", "Topics", "I", "The", "Thanks"}


def named_facts(text: str) -> set[str]:
    """Emails, numbers (orders, tickets, phones) and names: what a summary must not lose."""
    found = {m.lower() for m in EMAIL.findall(text)}
    found |= {m.lstrip("#") for m in NUMBER.findall(text)}
    found |= {m.lower() for m in PROPER.findall(text) if m not in NOT_NAMES}
    return found


def check(previous: str, turns, text: str, max_tokens: int) -> None:
    """Refuse a summary that is empty, only a marker ("Summary:\n[Turn 7]"), far over its size,
    or that kept none of the named facts (emails, numbers, names) it was given."""
    words = re.findall(r"\w+", MARKERS.sub(" ", text))
    if not text.strip():
        raise SummaryRejected("the model returned an empty summary")
    if len(words) < 3:
        raise SummaryRejected(f"the model returned only a marker: {text.strip()[:60]!r}")
    if estimate_text(text) > max_tokens * 3 // 2:
        raise SummaryRejected(f"about {estimate_text(text)} tokens, over the {max_tokens} allowed")
    given = named_facts(previous + "\n" + transcript(turns))
    kept = named_facts(text) | {w.lower() for w in words}
    if given and not given & kept:
        raise SummaryRejected("it lost every named fact it was given ("
                              + ", ".join(sorted(given)[:4]) + ")")


def fold(provider, previous: str, topics: list[str], turns, style: str,
         max_tokens: int) -> tuple[str, list[str]]:
    """One model call: the previous summary plus these turns, as (new summary, topics); the
    summary is checked (`check`) before it may replace the previous one."""
    if style not in STYLES:
        raise ValueError(f"unknown summary style {style!r}; choose from {', '.join(STYLES)}")
    reply = None
    options = {"purpose": "background", "max_tokens": reply_tokens(max_tokens)} \
        if provider.takes_options else {}
    for chunk in provider.stream(fold_request(previous, topics, turns, style, max_tokens), [],
                                 **options):
        if isinstance(chunk, Reply):
            reply = chunk
    if reply is None or not reply.text.strip():
        raise ProviderError("the summarizer returned no summary")
    text, new_topics = parse_reply(reply.text, max_tokens)
    check(previous, turns, text, max_tokens)
    merged: dict[str, str] = {}
    for topic in [*topics, *new_topics]:
        merged.setdefault(topic.lower(), topic)
    return text, list(merged.values())[-MAX_TOPICS:]
