"""The memory panel in a real browser: remembered in a chat, shown with its source, deleted, searched."""
import os
import re

from playwright.sync_api import expect

from tests.browser.test_chat_page import send


def test_a_remembered_preference_shows_in_the_panel_and_can_be_deleted(page, new_page, artifacts):
    page.goto("/")
    send(page, "Remember that I prefer email over phone.", 0)
    expect(page.locator("#turn-1-answer")).to_contain_text("I'll remember that")
    page.get_by_role("link", name="Memories").click()
    memory = page.locator(".memory").filter(has_text="prefers email over phone")
    expect(memory).to_contain_text("Only you")
    expect(memory.get_by_role("link")).to_have_attribute(
        "href", re.compile(r"^/c/[0-9a-f]{32}#turn-1-question$"))
    page.screenshot(path=os.path.join(artifacts, "memory-panel.png"))

    stranger = new_page()
    stranger.goto("/memories")
    expect(stranger.locator(".memory-empty")).to_be_visible()

    page.get_by_role("button", name="Stop remembering new things").click()
    expect(page.locator(".sharing-state")).to_contain_text("off")
    page.once("dialog", lambda dialog: dialog.accept())
    memory.get_by_role("button", name="Delete").click()
    expect(page.locator(".memory")).to_have_count(0)


def test_the_sidebar_search_finds_an_earlier_question(page):
    page.goto("/")
    send(page, "Where is my order #1041?", 0)
    page.get_by_label("Search your conversations").fill("1041")
    hit = page.locator(".history-hits a").first
    expect(hit).to_contain_text("Where is my order #1041?")
    hit.click()
    expect(page.locator("#turn-1-question")).to_be_visible()
