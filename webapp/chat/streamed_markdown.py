"""A reply's Markdown rendered while it streams, so nobody sees raw `**` or `- ` before `done`.

Finished blocks (up to the last blank line outside a code fence) are rendered once and appended;
the open block is rendered again as it grows, with its unclosed markers closed or held back, and
swapped in place. Both go through the one sanitizer (rendering.render_markdown), so the streamed
HTML is as safe as the final answer. The open block is re-rendered at most every THROTTLE
seconds, so the cost of a long reply grows with its length, not with its length squared.
"""
import re
import time

from .rendering import render_markdown

THROTTLE = 0.05  # seconds between renders of the open block
FENCE = re.compile(r"^ {0,3}(```|~~~)", re.M)
OPEN_LINK = re.compile(r"!?\[[^\]\n]*(\]\([^)\n]*)?$")  # "[text" or "[text](url" not yet closed


def finished_until(text: str, start: int, fences: int | None = None) -> int:
    """Where the finished blocks end: after the last blank line outside a code fence. `fences`
    (the fence lines before `start`) spares rescanning what is already finished."""
    fences = len(FENCE.findall(text, 0, start)) if fences is None else fences
    cut, last = start, start
    for match in re.finditer(r"\n[ \t]*\n", text[start:]):
        end = start + match.end()
        fences, last = fences + len(FENCE.findall(text, last, end)), end
        if fences % 2 == 0:
            cut = end
    return cut


def balanced(block: str) -> str:
    """The open block as it will read once its markers close: a fence or a `code` span closed, a
    `**` closed, a link not yet whole and a list marker without words yet held back."""
    if len(FENCE.findall(block)) % 2:
        return block + "\n```"
    block = OPEN_LINK.sub("", block)
    if block.count("`") % 2:
        block += "`"
    for marker in ("**", "__"):
        if block.count(marker) % 2:
            block = block.rstrip() + marker
    return re.sub(r"(^|\n)\s*[-*+]\s*$|(^|\n)\s*\d+[.)]\s*$|(^|\n)#{1,6}\s*$", r"\1\2\3", block)


class StreamedMarkdown:
    """The words so far as (finished blocks to append, the open block to swap in)."""

    def __init__(self, clock=time.monotonic):
        self.text, self.done, self.clock, self.rendered_at = "", 0, clock, None
        self.fences = 0  # fence lines in the finished blocks
        self.behind = False  # words came that the last render of the open block did not show

    def add(self, words: str) -> tuple[str | None, str | None]:
        """New finished blocks' HTML (or None) and the open block's HTML (None: not due yet)."""
        self.text += words
        cut = finished_until(self.text, self.done, self.fences)
        block = None
        if cut > self.done:
            block = str(render_markdown(self.text[self.done:cut]))
            self.fences += len(FENCE.findall(self.text, self.done, cut))
            self.done = cut
        now = self.clock()
        if block is None and self.rendered_at is not None and now - self.rendered_at < THROTTLE:
            self.behind = True
            return None, None
        self.rendered_at, self.behind = now, False
        return block, str(render_markdown(balanced(self.text[self.done:])))

    def flush(self) -> str | None:
        """The open block with every word so far, if the throttle held some back; else None."""
        if not self.behind:
            return None
        self.behind = False
        return str(render_markdown(balanced(self.text[self.done:])))
