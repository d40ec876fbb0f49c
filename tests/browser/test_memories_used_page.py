"""'Used N memories' in a real browser: the line arrives with the streamed answer and opens the
memories of that request; a changed memory shows its history in the panel."""
import pytest
from playwright.sync_api import expect

from tests.browser.test_chat_page import send


@pytest.mark.parametrize("width, height", [(1280, 800), (390, 844)])
def test_the_line_under_a_streamed_answer_opens_its_memories(new_page, width, height):
    page = new_page(width, height)
    page.goto("/")
    send(page, "Remember that I prefer email over phone.", 0)
    expect(page.locator("#turn-1-answer .memories-used")).to_have_count(0)
    send(page, "How do I prefer to be contacted?", 1)
    used = page.locator("#turn-2-answer .memories-used")
    expect(used.locator("summary")).to_have_text("Used 1 memory")
    used.locator("summary").click()
    item = used.locator(".memory-used")
    expect(item).to_contain_text("You prefer email over phone.")
    expect(item).to_contain_text("applies to only you")
    expect(used).not_to_contain_text("rank")
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_an_edit_keeps_the_old_text_in_the_history(page):
    page.goto("/")
    send(page, "Remember that I prefer email over phone.", 0)
    page.goto("/memories")
    memory = page.locator(".memory").filter(has_text="email over phone")
    memory.locator(".memory-edit summary").click()
    memory.get_by_label("Memory text").fill("Prefers phone calls.")
    memory.get_by_role("button", name="Save").click()
    changed = page.locator(".memory").filter(has_text="phone calls")
    changed.locator(".memory-history summary").click()
    expect(changed.locator(".memory-revision")).to_contain_text("email over phone")
    expect(changed.locator(".memory-revision")).to_contain_text("Edited by you")
