"""Counts in words, one way everywhere: "1 finished turn", "2 conversations", never "turn(s)"."""

IRREGULAR = {"memory": "memories", "reply": "replies", "entry": "entries", "person": "people",
             "summary": "summaries", "match": "matches", "scope": "scopes"}


def plural(count: int, word: str, many: str | None = None) -> str:
    """The count and the word in the form that count takes (`many` for an irregular plural)."""
    if count == 1:
        return f"{count} {word}"
    head, _, last = word.rpartition(" ")  # "finished turn": only the last word changes
    last = many or IRREGULAR.get(last) or f"{last}s"
    return f"{count} {head + ' ' if head else ''}{last}"


def init_app(app) -> None:
    app.add_template_filter(plural, "plural")
