"""Answers as sanitized markdown, and tool steps in words."""
from html.parser import HTMLParser

from webapp.chat.rendering import render_markdown, sanitize_html
from webapp.chat.tool_steps import ToolStep, steps_of


class Elements(HTMLParser):
    """Every (tag, attributes) in a piece of HTML."""

    def __init__(self, html):
        super().__init__()
        self.found = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


def tags(html):
    return [tag for tag, _ in Elements(html).found]


def test_markdown_keeps_code_blocks_highlighted():
    html = render_markdown("Run this:\n\n```python\nif a < b:\n    print('<b>')\n```\n\nand `x<y`.")
    assert '<div class="codehilite"><span class="code-language" data-language="Python"></span><pre>' in html
    assert '<span class="k">if</span>' in html and '<span class="o">&lt;</span>' in html
    assert '<span class="s1">\'&lt;b&gt;\'</span>' in html and "<code>x&lt;y</code>" in html


def test_a_code_block_without_a_language_is_kept_plain():
    html = render_markdown("```\nrm -rf <dir>\n```")
    assert '<div class="codehilite"><pre><span></span><code>rm -rf &lt;dir&gt;' in html


def test_only_the_highlighters_classes_pass_the_sanitizer():
    html = sanitize_html('<div class="codehilite evil"><span class="k evil">if</span></div>'
                         '<span class="banner">hi</span><p class="k">p</p>')
    assert html == '<div class="codehilite"><span class="k">if</span></div><span class="">hi</span><p>p</p>'


def test_markdown_shows_raw_html_as_text_and_runs_nothing():
    html = render_markdown("Hi <script>alert(1)</script> <img src=x onerror=alert(2)> **bold**")
    assert "script" not in tags(html) and "img" not in tags(html)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<strong>bold</strong>" in html


def test_markdown_drops_javascript_links_and_keeps_real_ones():
    html = render_markdown("[evil](javascript:alert(1)) [data](data:text/html,x) [ok](https://example.com)")
    hrefs = [attrs.get("href") for tag, attrs in Elements(html).found if tag == "a"]
    assert hrefs == [None, None, "https://example.com"]


def test_sanitizer_removes_scripts_and_event_handlers():
    html = sanitize_html('<p onclick="x()">hi</p><script>bad()</script>'
                         '<a href="javascript:bad()" onmouseover="bad()">l</a><iframe src="x"></iframe>')
    assert tags(html) == ["p", "a"]
    assert all(not name.startswith("on") and name != "href"
               for _, attrs in Elements(html).found for name in attrs)
    assert "bad()" not in html


def test_tool_steps_read_as_sentences():
    running = ToolStep("check_refund_eligibility", {"order_id": 1043})
    assert running.running and running.label == "Checking order #1043…"
    running.result = {"eligible": False, "reason": "Purchased 20 days ago."}
    assert running.label == "Checked order #1043" and running.detail == "Purchased 20 days ago."
    failed = ToolStep("lookup_order", {"order_id": 9}, {"error": "No order #9."})
    assert failed.failed and failed.label == "Looked up order #9: No order #9."
    assert ToolStep("make_coffee", {}, {}).label == "Ran make coffee"
    assert ToolStep("create_support_ticket", {}, {}).label == "Opened a support ticket"


def test_steps_of_a_stored_turn_pair_calls_with_results():
    messages = [{"role": "user", "content": "Yes please."},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "c1", "name": "create_support_ticket", "arguments": {"category": "refund"}}]},
                {"role": "tool", "tool_call_id": "c1", "name": "create_support_ticket",
                 "content": '{"ticket_id": 5001, "status": "open"}'},
                {"role": "assistant", "content": "Done!"}]
    [step] = steps_of(messages)
    assert step.label == "Opened ticket #5001" and step.detail == "Status: open"
