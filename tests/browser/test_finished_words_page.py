"""The words finished, as a visitor sees them at 1280 px: a code block names its language (and
copying the answer leaves the label out), the summary editor is sized to the page."""
import re

from playwright.sync_api import expect

from tests.browser.test_chat_page import reply_with, send  # noqa: F401  (reply_with: a fixture)
from tests.fakes.scripted_model import ScriptedModel


def test_a_code_block_shows_its_language(page, reply_with):
    reply_with(ScriptedModel("Run this:\n\n```bash\nflask --app webapp init-db\n```"))
    page.goto("/")
    send(page, "How do I start it?", 0)
    label = page.locator("#turn-1-answer .codehilite .code-language")
    expect(label).to_be_visible()
    assert label.evaluate("e => getComputedStyle(e, '::before').content") == '"Bash"'
    assert "Bash" not in page.locator("#turn-1-answer .markdown").inner_text()


def test_the_summary_editor_is_sized_to_the_page(page):
    page.goto("/")
    for seq, question in enumerate(["Where is my order #1041?", "And #1042?"]):
        send(page, question, seq)
    page.locator("#turn-1-answer").hover()
    with page.expect_navigation():
        page.get_by_role("button", name="Summarize up to turn 1").click()
    expect(page.locator("#summary-panel")).to_contain_text("Covers turns 1–1")
    width = page.locator("#summary-text").bounding_box()["width"]
    assert width >= 600, width
    assert re.search(r"/c/[0-9a-f]{32}/summary", page.url)
