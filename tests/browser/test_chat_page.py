"""The chat page in a real browser: streamed replies, reload, other visitors, HTML that runs nothing."""
import os
import re
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect
from sqlalchemy import func, select

from tests.fakes.paced_model import PacedModel
from tests.fakes.scripted_model import ScriptedModel
from webapp.extensions import db
from webapp.models import Conversation, Turn

SEED = ["Can I get a refund for order #1043?", "OK. What about my other order, 1042?", "Yes please."]


def send(page, message, seq):
    """Type a message, press Enter, and wait for its reply to finish streaming."""
    page.get_by_label("Message Nimbus").fill(message)
    page.get_by_label("Message Nimbus").press("Enter")
    expect(page.locator(f"#turn-{seq + 1}-answer:not(.is-streaming)")).to_be_visible()


def choose(page, title, action):
    """Open a sidebar item's "…" menu and choose one of its actions."""
    page.get_by_role("button", name=f"Actions for “{title}”").click()
    page.get_by_role("menu").get_by_role("menuitem", name=action).click()


def stream_requests(page) -> list[str]:
    urls = []
    page.on("request", lambda request: urls.append(request.url) if "/stream" in request.url else None)
    return urls


def stored(live_app, model) -> int:
    with live_app.app_context():
        return db.session.scalar(select(func.count()).select_from(model))


@pytest.fixture
def reply_with(live_app, monkeypatch):
    """Make the live app's model say something else for the rest of a test."""
    def use(provider):
        monkeypatch.setitem(live_app.extensions, "provider_factory", lambda config: provider)
        return provider
    return use


def test_refund_conversation_streams_and_reloads_whole(page, artifacts):
    streams = stream_requests(page)
    page.goto("/")
    expect(page.get_by_role("status").filter(has_text="Offline demo model")).to_be_visible()
    for seq, message in enumerate(SEED):
        send(page, message, seq)
    answers = page.locator(".message--assistant")
    expect(answers.nth(0)).to_contain_text("refunds are only possible within 14 days")
    expect(answers.nth(1)).to_contain_text("order #1042 is eligible for a refund")
    expect(answers.nth(2).locator(".tool-steps summary")).to_contain_text("Opened ticket #")
    ticket = re.search(r"ticket #(\d+)", answers.nth(2).locator(".markdown").inner_text()).group(1)
    expect(page.locator(".conversation-item.is-open")).to_contain_text("Refund for order #1043")
    expect(page).to_have_title("Refund for order #1043 · Nimbus")
    expect(page.get_by_role("link", name="Viewer")).to_have_attribute(
        "href", re.compile(r"^/c/[0-9a-f]{32}/viewer$"))
    page.locator(".tool-steps summary").nth(1).click()
    page.screenshot(path=os.path.join(artifacts, "chat-page.png"))

    page.wait_for_timeout(1500)  # a stream that reconnected would do so after its 1 s retry
    assert len(streams) == 3 and len(set(streams)) == 3

    page.reload()
    expect(page.locator(".message--user .message-text")).to_have_text(SEED)
    expect(page.locator(".message--assistant").nth(2)).to_contain_text(f"ticket #{ticket}")
    expect(page.locator(".message--assistant .tool-steps")).to_have_count(3)
    page.set_viewport_size({"width": 1024, "height": 640})
    page.screenshot(path=os.path.join(artifacts, "chat-page-laptop.png"))
    assert len(streams) == 3  # the finished replies are rendered, not streamed again


def test_another_visitor_is_offered_sign_in_and_shown_nothing_of_the_conversation(page, new_page):
    page.goto("/")
    send(page, "Where is my order #1041?", 0)
    stranger = new_page()
    stranger.goto(page.url)  # a guest: the page may be someone's who signs in
    assert "/login?next=" in stranger.url
    expect(stranger.locator("body")).not_to_contain_text("Where is my order")
    assert stranger.request.get(page.url + "/turns/0/stream").status == 404
    assert page.reload().status == 200


def test_html_in_messages_and_replies_runs_nothing(page, reply_with):
    reply_with(ScriptedModel("Here you go: <script>alert('reply')</script> "
                             "<img src=x onerror=alert('img')> [link](javascript:alert('link'))"))
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto("/")
    send(page, "<img src=x onerror=alert(1)>", 0)
    expect(page.locator(".message--user .message-text")).to_have_text("<img src=x onerror=alert(1)>")
    answer = page.locator("#turn-1-answer .markdown")
    expect(answer).to_contain_text("<script>alert('reply')</script> <img src=x onerror=alert('img')>")
    page.locator("#turn-1-answer a", has_text="link").click()  # no href left: goes nowhere
    page.reload()
    expect(page.locator("#turn-1-answer .markdown")).to_contain_text("<script>alert('reply')</script>")
    assert page.locator("#messages script, #messages img, #messages [onerror]").count() == 0
    assert dialogs == []


def test_too_long_message_shows_the_error_and_stores_nothing(page, live_app):
    page.goto("/")
    conversations, turns = stored(live_app, Conversation), stored(live_app, Turn)
    box = page.get_by_label("Message Nimbus")
    box.fill("x" * 8001)
    box.press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("8,001 characters long; the limit is 8,000")
    expect(box).to_have_value("x" * 8001)  # kept, to be shortened
    expect(page.locator(".message")).to_have_count(0)
    assert (stored(live_app, Conversation), stored(live_app, Turn)) == (conversations, turns)


def test_stop_keeps_the_partial_answer_and_frees_the_message_box(page, reply_with, artifacts):
    reply_with(PacedModel(" ".join(["Let me think about that carefully."] * 60), delay=0.05,
                          tool={"name": "lookup_order", "arguments": {"order_id": 1042}}))
    page.goto("/")
    box = page.get_by_label("Message Nimbus")
    box.fill("Where is order 1042?\nAnd when will it arrive?")
    box.press("Enter")
    expect(page.locator("#turn-1-answer .streamed-text")).to_contain_text("Let me think")
    expect(page.get_by_role("button", name="Send")).to_be_disabled()
    expect(page.locator("#turn-1-answer .tool-step")).to_contain_text("Looked up order #1042")
    page.screenshot(path=os.path.join(artifacts, "chat-page-streaming.png"))
    page.get_by_role("button", name="Stop").click()
    expect(page.locator("#turn-1-answer .tag")).to_have_text("Stopped")
    expect(page.get_by_role("button", name="Stop")).to_have_count(0)
    expect(page.get_by_role("button", name="Send")).to_be_disabled()  # the box is empty
    box.fill("Thanks")
    expect(page.get_by_role("button", name="Send")).to_be_enabled()
    page.reload()
    expect(page.locator("#turn-1-answer .tag")).to_have_text("Stopped")
    expect(page.locator("#turn-1-answer .markdown")).to_contain_text("Let me think")
    expect(page.locator(".message--user .message-text")).to_have_text(
        "Where is order 1042?\nAnd when will it arrive?")


def test_shift_enter_adds_a_line_and_enter_sends(page):
    page.goto("/")
    box = page.get_by_label("Message Nimbus")
    box.type("My name is Dara.")
    box.press("Shift+Enter")
    box.type("Hello!")
    expect(page.locator(".message")).to_have_count(0)
    box.press("Enter")
    expect(page.locator(".message--user .message-text")).to_have_text("My name is Dara.\nHello!")
    expect(box).to_have_value("")


def test_rename_inline_and_delete_with_undo_from_the_sidebar(page):
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto("/")
    send(page, "How long does shipping take?", 0)
    send(page, "Thanks!", 1)
    choose(page, "How long does shipping take", "Rename")
    name = page.get_by_label("New name for “How long does shipping take”")
    expect(name).to_be_focused()
    name.fill("Never mind")
    name.press("Escape")
    expect(page.locator(".conversation-item.is-open .conversation-link")).to_have_text("How long does shipping take")
    expect(page.get_by_role("button", name="Actions for “How long does shipping take”")).to_be_focused()
    choose(page, "How long does shipping take", "Rename")
    expect(name).to_be_focused()  # htmx has taken the form over
    name.fill("Shipping ☁ questions")
    name.press("Enter")
    expect(page.locator(".conversation-item.is-open")).to_contain_text("Shipping ☁ questions")
    expect(page.locator("#conversation-title")).to_have_text("Shipping ☁ questions")
    expect(page).to_have_title("Shipping ☁ questions · Nimbus")
    choose(page, "Shipping ☁ questions", "Delete")
    expect(page).to_have_url(re.compile(r"/\?deleted=[0-9a-f]{32}$"))
    expect(page.locator(".conversation-item")).to_have_count(0)
    undo = page.get_by_role("button", name="Undo")
    expect(undo).to_be_focused()
    undo.click()
    expect(page.locator("#conversation-title")).to_have_text("Shipping ☁ questions")
    expect(page.locator(".message--user")).to_have_count(2)
    assert dialogs == []  # no prompt(), no confirm()


def test_enter_saves_a_new_name_before_htmx_has_settled_the_form(page):
    """Enter pressed the moment the rename form appears saves it; it never reloads the page as a GET."""
    page.goto("/")
    send(page, "How long does shipping take?", 0)
    page.evaluate("htmx.config.defaultSettleDelay = 5000")  # a busy phone: swaps settle late
    choose(page, "How long does shipping take", "Rename")
    name = page.get_by_label("New name for “How long does shipping take”")
    name.fill("Shipping, quickly")
    name.press("Enter")
    expect(page.locator("#conversation-title")).to_have_text("Shipping, quickly")
    assert "title=" not in page.url


def test_the_sidebars_days_are_the_browsers_own(browser, live_server, live_app):
    """A conversation last used a minute before midnight in Auckland is yesterday's there."""
    context = browser.new_context(base_url=live_server.url, timezone_id="Pacific/Auckland")
    context.set_default_timeout(10_000)
    page = context.new_page()
    try:
        page.goto("/")
        send(page, "Where is my order #1041?", 0)
        midnight = datetime.now(ZoneInfo("Pacific/Auckland")).replace(hour=0, minute=0, second=0,
                                                                       microsecond=0)
        with live_app.app_context():
            conversation = db.session.get(Conversation, page.url.rsplit("/", 1)[1])
            conversation.updated_at = (midnight - timedelta(minutes=1)).astimezone(
                timezone.utc).replace(tzinfo=None)
            db.session.commit()
        page.reload()
        expect(page.locator("#sidebar")).to_contain_text("Yesterday")
        assert any(c["name"] == "nimbus_tz" and c["value"] == "Pacific/Auckland"
                   for c in context.cookies())
    finally:
        context.close()


def test_a_second_conversation_comes_first_in_the_sidebar_without_redrawing_it(page):
    """A send's answer puts the new conversation first under Today (one item, not the whole list)
    and leaves the list alone while the person chats on; its menu works like the others'."""
    page.goto("/")
    send(page, "Where is my order #1041?", 0)
    page.get_by_role("link", name="New conversation").click()
    page.wait_for_url(re.compile(r"/$"))
    send(page, "How long does shipping take?", 0)
    today = page.locator("#conversations-today .conversation-link")
    expect(today).to_have_text(["How long does shipping take", "Where is my order #1041"])
    expect(page.locator(".conversation-item.is-open .conversation-link")).to_have_attribute(
        "aria-current", "page")
    expect(page.locator(".conversation-item.is-open")).to_have_count(1)
    send(page, "Thanks!", 1)
    expect(today).to_have_text(["How long does shipping take", "Where is my order #1041"])
    choose(page, "How long does shipping take", "Rename")
    expect(page.get_by_label("New name for “How long does shipping take”")).to_be_focused()
