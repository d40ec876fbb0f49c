"""Benchmark: the cost of rendering a reply's Markdown while it streams, against its length.

Streams replies of 250 to 2,000 words word by word through chat/streamed_markdown.py at a fast
server's pace (50 words a second, on a simulated clock, so the throttle works as it would) and
times the rendering alone. The baseline, in the same run: re-rendering the whole reply at every
render, which grows with the square of the length. Prints milliseconds per reply and per word.
Run: .venv/bin/python bench/streamed_markdown.py
"""
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from webapp.chat.rendering import render_markdown  # noqa: E402
from webapp.chat.streamed_markdown import THROTTLE, StreamedMarkdown  # noqa: E402

SIZES = [250, 500, 1000, 2000]
PACE = 1 / 50  # seconds a word


def reply(words: int) -> str:
    """Paragraphs of about 40 words with bold, code and a short list, as models write."""
    parts, n = [], 0
    while n < words:
        parts.append("Your order **#1044** shipped on Monday and `tracking` says it is near. " * 3)
        parts.append("- **#1045** Rain jacket, paid\n- **#1046** Wool socks, shipped")
        n += 3 * 12 + 12
    return "\n\n".join(parts)


def tokens(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text)


def streamed(text: str) -> float:
    now = [0.0]
    stream = StreamedMarkdown(clock=lambda: now[0])
    started = time.perf_counter()
    for word in tokens(text):
        now[0] += PACE
        stream.add(word)
    return time.perf_counter() - started


def whole_each_time(text: str) -> float:
    """The baseline: the whole text so far rendered at every render the throttle allows."""
    so_far, last, started = "", None, time.perf_counter()
    now = 0.0
    for word in tokens(text):
        now += PACE
        so_far += word
        if last is None or now - last >= THROTTLE:
            render_markdown(so_far)
            last = now
    return time.perf_counter() - started


def main() -> None:
    render_markdown("warm **up**")
    print(f"{'words':>6} {'streamed ms':>12} {'ms/word':>8} {'whole ms':>10} {'ms/word':>8}")
    per_word = {}
    for size in SIZES:
        text = reply(size)
        count = len(text.split())
        ours, base = streamed(text), whole_each_time(text)
        per_word[size] = ours * 1000 / count
        print(f"{count:>6} {ours * 1000:>12.1f} {per_word[size]:>8.3f} {base * 1000:>10.1f} "
              f"{base * 1000 / count:>8.3f}")
    print(f"\nper-word cost {SIZES[0]}->{SIZES[-1]} words: ×{per_word[SIZES[-1]] / per_word[SIZES[0]]:.2f}"
          f" (1.0 is linear); the baseline's grows with the length")


if __name__ == "__main__":
    main()
