"""The sidebar's "Show more conversations" in a real browser: loaded by keyboard, focus kept."""
from datetime import timedelta

from playwright.sync_api import expect

from webapp.extensions import db
from webapp.models import Conversation, utcnow
from webapp.storage import create_conversation

from tests.browser.test_chat_page import send


def test_show_more_conversations_loads_by_keyboard_and_focuses_the_next(page, live_app, monkeypatch):
    monkeypatch.setitem(live_app.config, "NIMBUS_SIDEBAR_PAGE", 3)
    page.goto("/")
    send(page, "Where is my order #1041?", 0)
    with live_app.app_context():
        user = db.session.get(Conversation, page.url.rsplit("/", 1)[1]).user
        for n in range(5):
            create_conversation(user, f"Older chat {n}").updated_at = utcnow() - timedelta(hours=n + 1)
        db.session.commit()
        db.session.remove()
    page.reload()
    items = page.locator("#sidebar .conversation-item")
    expect(items).to_have_count(3)
    more = page.get_by_role("button", name="Show more conversations")
    more.focus()
    page.keyboard.press("Enter")
    expect(items).to_have_count(6)
    expect(page.locator("#sidebar .conversation-link").nth(3)).to_be_focused()
    expect(page.get_by_role("button", name="Show more conversations")).to_have_count(0)
