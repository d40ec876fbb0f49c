"""Conventions people expect from a chat, at 1280 and 390 px: a quiet console, dark mode, code
blocks, scroll-to-newest, answer feedback and keyboard shortcuts."""
import pytest
from playwright.sync_api import expect

from tests.browser.test_chat_page import SEED, reply_with, send  # noqa: F401  (reply_with: a fixture)
from tests.fakes.paced_model import PacedModel

SIZES = pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["desktop", "phone"])


def console_errors(page) -> list[str]:
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    return errors


@SIZES
def test_a_chat_with_stop_logs_no_console_error(new_page, reply_with, size):
    page = new_page(*size)
    errors = console_errors(page)
    page.goto("/")
    for seq, message in enumerate(SEED[:2]):
        send(page, message, seq)
    reply_with(PacedModel(" ".join(["Let me think about that carefully."] * 60), delay=0.05))
    page.get_by_label("Message Nimbus").fill("And the shipping?")
    page.get_by_label("Message Nimbus").press("Enter")
    expect(page.locator("#turn-3-answer .streamed-text")).to_contain_text("Let me think")
    page.get_by_role("button", name="Stop").click()
    expect(page.locator("#turn-3-answer .tag")).to_have_text("Stopped")
    page.reload()
    expect(page.locator("#turn-3-answer .tag")).to_have_text("Stopped")
    assert errors == []
