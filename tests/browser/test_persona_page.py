"""A shop's persona on the chat page: its assistant's name wherever the assistant is named, and
the offline model following the sign-off and tone of the shop's extra instructions."""
import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from webapp.extensions import db
from webapp.models import Tenant

INSTRUCTIONS = 'Be formal. Sign off every answer with "— Pip, at your service".'


@pytest.fixture
def pip(live_app):
    """The demo shop's assistant is called Pip for one test."""
    def settings(value):
        with live_app.app_context():
            tenant = db.session.scalar(select(Tenant).where(Tenant.slug == "demo"))
            before, tenant.settings = tenant.settings, value
            db.session.commit()
            db.session.remove()
            return before
    before = settings({**settings({}), "assistant_name": "Pip", "instructions": INSTRUCTIONS})
    yield
    settings(before)


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_the_assistants_name_and_instructions_reach_the_page(new_page, pip, size):
    page = new_page(*size)
    page.goto("/")
    expect(page.locator(".welcome h2")).to_have_text("Hi, I'm Pip.")
    box = page.get_by_label("Message Pip")
    expect(box).to_have_attribute("placeholder", "Message Pip…")
    expect(page).to_have_title("New conversation · Pip")
    box.fill("Hello")
    box.press("Enter")
    answer = page.locator("#turn-1-answer:not(.is-streaming)")
    expect(answer.locator(".author")).to_have_text("Pip")
    expect(answer.locator(".avatar")).to_have_text("P")
    expect(answer.locator(".markdown")).to_contain_text("Good day. I am Pip.")
    expect(answer.locator(".markdown")).to_contain_text("— Pip, at your service")
    expect(page).to_have_title("Hello · Pip")
    assert "Nimbus" not in page.locator("#conversation").inner_text()
