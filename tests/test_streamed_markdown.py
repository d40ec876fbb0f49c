"""A reply's Markdown is rendered while it streams: finished blocks once, the open block with its
markers closed, never raw syntax, always through the same sanitizer as the final answer."""
import re

from webapp.chat.streamed_markdown import StreamedMarkdown, balanced, finished_until

REPLY = ("Here are your orders:\n\n- **#1044** Wool socks, shipped\n- **#1045** Rain jacket, "
         "paid\n\nUse `flask orders` to list them, or see [the help center](https://example.com)."
         "\n\n```python\nprint('hi')\n```\n\nThanks!")
RAW = re.compile(r"\*\*|`|\]\(|^\s*[-*] |^#{1,6} ", re.M)


def visible(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def word_by_word(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text)


def test_no_streamed_state_shows_raw_markdown_syntax():
    stream = StreamedMarkdown(clock=iter(range(10_000)).__next__)  # never throttled
    shown = ""
    for words in word_by_word(REPLY):
        block, open_block = stream.add(words)
        shown += block or ""
        for html in (shown, open_block or ""):
            text = visible(html)
            assert not RAW.search(text.replace("print('hi')", "")), (words, text)
    assert "<strong>#1045</strong>" in shown and '<a href="https://example.com"' in shown
    assert "<code>flask orders</code>" in shown


def test_finished_blocks_end_at_a_blank_line_outside_a_code_fence():
    text = "One.\n\n```\na\n\nb\n"
    assert finished_until(text, 0) == len("One.\n\n")
    assert finished_until(text + "```\n\nTwo", 0) == len(text + "```\n\n")


def test_the_open_block_closes_what_is_open_and_holds_back_what_is_not_whole():
    assert balanced("- **#1044") == "- **#1044**"
    assert balanced("Run `flask") == "Run `flask`"
    assert balanced("See [the help") == "See "
    assert balanced("See [the help](https://exa") == "See "
    assert balanced("```python\nprint(1)") == "```python\nprint(1)\n```"
    assert balanced("Orders:\n- ").strip() == "Orders:"


def test_streamed_html_is_sanitized_like_the_answer():
    stream = StreamedMarkdown(clock=iter(range(100)).__next__)
    _, html = stream.add("<script>alert(1)</script> [x](javascript:alert(1)) **hi**")
    assert "<script>" not in html and "javascript:" not in html and "<strong>hi</strong>" in html


def test_the_open_block_is_rendered_at_most_every_throttle_seconds():
    now = [0.0]
    stream = StreamedMarkdown(clock=lambda: now[0])
    renders = 0
    for i in range(200):
        now[0] += 0.001  # 200 words in 0.2 s
        renders += stream.add("word ")[1] is not None
    assert renders <= 5
