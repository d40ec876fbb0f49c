"""The Markdown export renders as it reads: a tool result of many lines, with headings, lists or
its own ``` fences, is one code block (its fence longer than any inside it), so the page's
headings are the conversation's and nothing else."""
import io
import json
import re

from webapp.chat.rendering import render_markdown
from webapp.extensions import db
from webapp.models import Conversation

from .test_transfer_views import upload

RESULT = ("# Refund policy\n\n## Shoes\n- 30 days, unworn\n\n```python\nrefund(order=1043)\n```\n"
          "````\nfour ticks too\n````\n#### Last updated 2026")
TRANSCRIPT = [
    {"role": "user", "content": "What is the refund policy for shoes?"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function",
     "function": {"name": "search_docs", "arguments": json.dumps({"q": "refund `shoes`"})}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": RESULT},
    {"role": "assistant", "content": "Shoes can be returned within 30 days if unworn."},
]


def exported(guest) -> str:
    upload(guest, (io.BytesIO(json.dumps(TRANSCRIPT).encode()), "policy.json"))
    conversation = db.session.query(Conversation).order_by(Conversation.created_at.desc()).first()
    return guest.get(f"/c/{conversation.id}/export/markdown").text


def blocks(markdown: str) -> list[str]:
    """The fenced code blocks, read as CommonMark does: a block closes at a fence of the same
    character at least as long as the one that opened it."""
    found, lines, opening = [], [], None
    for line in markdown.splitlines():
        if opening is None:
            if fence := re.match(r"^(`{3,})[^`]*$", line):
                opening, lines = fence.group(1), []
        elif re.fullmatch(rf"`{{{len(opening)},}}\s*", line):
            found.append("\n".join(lines))
            opening = None
        else:
            lines.append(line)
    return found


def test_a_tool_result_of_many_lines_is_one_code_block_holding_it_exactly(guest):
    assert blocks(exported(guest)) == [RESULT]


def test_the_rendered_export_has_the_conversations_headings_only(guest):
    html = str(render_markdown(exported(guest)))
    assert html.count("<h1") == 1 and html.count("<h3") == 2  # title, Customer, Nimbus
    assert "<h2" not in html and "<h4" not in html
    assert "refund(order=1043)" in html.split("<pre")[1] and "Last updated 2026" in html


def test_a_call_whose_arguments_hold_backticks_stays_one_inline_code_span(guest):
    line = next(line for line in exported(guest).splitlines() if line.startswith("Called "))
    assert line == 'Called ``search_docs({"q": "refund `shoes`"})``'
