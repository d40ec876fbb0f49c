"""The summary's room in a request: where the model's window cut the history budget, the summary
takes at most a third of it; one that is longer is shortened for that request, or left out
where there is no room for more than its heading, and never sent over the window.
"""
from ...llm import estimate_messages
from ..plans import Allotment, sized

SHARE = 3  # the summary takes at most 1/SHARE of a budget the window cut
MIN_ROOM = 48  # tokens: with less, a summary would be little more than its heading
MORE = " …"  # ends a summary shortened for one request


def summary_messages(summary, text: str | None = None) -> list[dict]:
    """The summary as one system message, with `text` in place of its own where given."""
    text = summary.text if text is None else text
    return [{"role": "system", "content": f"Summary of the earlier conversation "
                                          f"(turns 1–{summary.through_seq + 1}):\n{text}"}]


def summary_room(policy) -> int | None:
    """Tokens the summary may take in a request planned with `policy`: a share of the budget
    where the model's window cut it; None where no window binds (the summary's own size)."""
    policy = Allotment.of(policy)
    return policy.budget // SHARE if policy.window else None


def has_room(policy) -> bool:
    """Whether a request planned with `policy` could carry a summary at all: a fold for one
    that cannot would read turns and write nothing (section.plan_fold)."""
    room = summary_room(policy)
    return room is None or room >= MIN_ROOM


def fitted(summary, policy, ratio: float) -> tuple[list[dict], int, str]:
    """(messages, tokens, note) of the summary as a request planned with `policy` sends it.
    Over its room it is cut, oldest lines kept (names and order numbers come first), and the
    note says so; where the room holds little more than the heading it is left out (no
    messages), and the note says why."""
    messages = summary_messages(summary)
    tokens, room = sized(messages, ratio), summary_room(policy)
    if room is None or tokens <= room:
        return messages, tokens, ""
    window = f"the model's {Allotment.of(policy).window:,}-token window"
    text = summary.text.strip()
    chars = len(text) * room // tokens
    while room >= MIN_ROOM and chars >= 40:
        kept = text[:chars]
        kept = kept[:kept.rfind("\n")] if "\n" in kept else kept[:kept.rfind(" ")]
        shortened = summary_messages(summary, kept.rstrip() + MORE)
        if sized(shortened, ratio) <= room:
            return (shortened, sized(shortened, ratio),
                    f"cut from {tokens:,} to {sized(shortened, ratio):,} tokens to fit {window}")
        chars = chars * 9 // 10
    return [], 0, f"{window} leaves it {max(room, 0):,} of the {tokens:,} tokens it needs"


def fold_size(room: int | None, ratio: float, configured: int) -> int:
    """The size a fold asks the model for: the configured one, less where the summary's room in
    a request is smaller (its heading set aside, and a fifth for the reply's leeway: the fold
    keeps up to 5/4 of the size, fold.parse_reply)."""
    if room is None:
        return configured
    heading = estimate_messages([{"role": "system", "content": "Summary of the earlier "
                                                               "conversation (turns 1–100):\n"}])
    return max(min(configured, int((room / ratio - heading) * 4 / 5)), 16)
