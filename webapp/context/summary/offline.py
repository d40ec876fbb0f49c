"""The offline model's summarizer: extractive, so names, numbers, dates and preferences survive
word for word ("User: My name is Dara."), and the offline recall still finds them in the summary.

It lives with the summarizer whose requests it answers; context's init_app hands it to the
offline model, as memories' does the distiller, so the provider layer (llm/) imports nothing above it.
"""
import re

from ...llm import FACT_PATTERNS, sentences, estimate_text
from ...shop.order_numbers import order_numbers
from .fold import PROMPT_OPENING

DETAIL = re.compile(
    r"\d|@|\b(jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?|sep(tember)?|"
    r"oct(ober)?|nov(ember)?|dec(ember)?|monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday|tomorrow|yesterday)\b", re.I)
FIRST_PERSON = re.compile(r"(i|i'm|i've|i'd|my|we|we're|we've|our)\b", re.I)
QUOTING = re.compile(r"\b(User|Nimbus): |^From my notes")  # an answer read back from notes
OUTCOME = re.compile(r"#\d")  # Nimbus's sentences about a particular order or ticket
TOPIC_WORDS = [(re.compile(p, re.I), topic) for p, topic in [
    (r"refund|money back", "refunds"), (r"\breturn", "returns"),
    (r"ship|deliver|arriv|track", "shipping"), (r"\bpay|card|invoice|bill", "payment"),
    (r"ticket", "support tickets"), (r"password|account|log ?in|sign in", "account"),
    (r"my name|call me", "introductions"), (r"e-?mail|phone|address", "contact details"),
    (r"prefer|always|never|\bi like|\bi love", "preferences"),
    (r"discount|coupon|voucher|promo", "discounts"), (r"warranty|broken|faulty|repair", "warranty"),
    (r"\bgift", "gifts"), (r"\bsize|\bfit\b", "sizing")]]
NOTHING = "Nothing from the earlier turns needed keeping."
PERSONAL, DETAILS, OUTCOMES, REQUESTS = 3, 2, 1, 0


def priority(line: str) -> int:
    """What goes last when the summary is over its size: the customer's own facts."""
    text = line.removeprefix("- ")
    if text.startswith("User: "):
        return PERSONAL if FACT_PATTERNS.search(text) else DETAILS
    return OUTCOMES if text.startswith("Nimbus: ") else REQUESTS


def kept_from_user(sentence: str) -> bool:
    """Statements about the customer (first person), or holding a number, date or address."""
    return not sentence.endswith("?") and bool(
        FACT_PATTERNS.search(sentence) or FIRST_PERSON.match(sentence) or DETAIL.search(sentence))


def turn_lines(number: str, user: str, nimbus: str, style: str) -> list[str]:
    lines = [f"User: {s}" for s in sentences(user) if kept_from_user(s)]
    outcomes = [f"Nimbus: {s}" for s in sentences(nimbus)
                if OUTCOME.search(s) and not s.endswith("?") and not QUOTING.search(s)]
    if style == "detailed" and user.rstrip().endswith("?"):
        answer = "" if outcomes else "; " + next(iter(sentences(nimbus)), "no answer")
        lines.append(f"Turn {number}: asked “{user.strip()[:120]}”{answer}")
    return lines + outcomes


def topics_of(user: str) -> list[str]:
    found = [topic for pattern, topic in TOPIC_WORDS if pattern.search(user)]
    return found + [f"order #{n}" for n in order_numbers(user, marked=True)]


def parse_request(body: str) -> tuple[list[str], list[str], list[tuple[str, str, str]]]:
    """(previous summary lines, topics so far, new turns as (number, user, nimbus))."""
    previous = re.search(r"Summary so far:\n(.*?)\n\nTopics so far:", body, re.S).group(1)
    topics = re.search(r"Topics so far: (.*)", body).group(1)
    lines = [] if previous.strip() == "(none yet)" else [
        line.strip().removeprefix("- ") for line in previous.splitlines()
        if line.strip() and line.strip() != NOTHING]
    turns: list[tuple[str, str, str]] = []
    for line in body.split("to fold in:\n", 1)[1].splitlines():
        if line.startswith("[Turn "):
            turns.append((line[6:-1], "", ""))
        elif turns and line.startswith("User: "):
            turns[-1] = (turns[-1][0], line[6:], turns[-1][2])
        elif turns and line.startswith("Nimbus: "):
            turns[-1] = (turns[-1][0], turns[-1][1], line[8:])
    return lines, [] if topics == "(none yet)" else topics.split(", "), turns


def within(lines: list[str], max_tokens: int) -> list[str]:
    """Drop the least important, oldest lines first until the summary fits."""
    lines = list(lines)
    while lines and sum(estimate_text(line) + 1 for line in lines) > max_tokens:
        lines.pop(min(range(len(lines)), key=lambda i: (priority(lines[i]), i)))
    return lines


def summarize(messages: list[dict]) -> str | None:
    """Handle the summarizer's request, or return None when the request is not one."""
    if not messages or not messages[0].get("content", "").startswith(PROMPT_OPENING):
        return None
    prompt = messages[0]["content"]
    style = re.search(r"^Style: (\w+)", prompt, re.M).group(1)
    max_tokens = int(re.search(r"Stay under (\d+) tokens", prompt).group(1))
    lines, topics, turns = parse_request(messages[-1]["content"])
    for number, user, nimbus in turns:
        lines += turn_lines(number, user, nimbus, style)
        topics += topics_of(user)
    lines = within(list(dict.fromkeys(lines)), max_tokens) or [NOTHING]
    if style == "bullets":
        lines = [f"- {line}" for line in lines]
    return "\n".join(lines) + "\nTopics: " + ", ".join(dict.fromkeys(topics))

