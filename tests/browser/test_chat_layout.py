"""The chat page at 1280×800 and 390×844: nothing scrolls sideways or away, the drawer, long chats."""
import re

import pytest
from playwright.sync_api import expect

from tests.fakes.history import fill_conversation
from tests.fakes.paced_model import PacedModel
from webapp.extensions import db
from webapp.models import Conversation

from tests.browser.test_chat_page import SEED, choose, reply_with, send  # noqa: F401  (reply_with: a fixture)

DESKTOP, PHONE, SMALL = (1280, 800), (390, 844), (360, 740)


def conversation_id(page) -> str:
    return re.search(r"/c/([0-9a-f]{32})", page.url).group(1)


def seeded(page) -> str:
    """Play the refund scenario (tool steps and all); return the conversation's id."""
    page.goto("/")
    for seq, message in enumerate(SEED):
        send(page, message, seq)
    return conversation_id(page)


def lengthen(live_app, conversation, turns):
    """Add answered turns after the ones the browser sent."""
    with live_app.app_context():
        row = db.session.get(Conversation, conversation)
        fill_conversation(row, turns, start=row.turn_count)
        db.session.remove()


def page_scroll(page) -> dict:
    return page.evaluate("""() => ({x: scrollX, y: scrollY, width: innerWidth,
        scrollWidth: document.documentElement.scrollWidth,
        top: document.querySelector('.topbar').getBoundingClientRect().top})""")


@pytest.mark.parametrize("size", [DESKTOP, PHONE, SMALL], ids=["desktop", "phone", "360px"])
def test_no_page_scrolls_sideways(new_page, size):
    page = new_page(*size)
    conversation = seeded(page)
    for path in ["/", f"/c/{conversation}", f"/c/{conversation}/viewer", "/memories",
                 "/search?q=refund", "/login", "/signup", "/account", "/c/" + "0" * 32]:
        page.goto(path)
        scroll = page_scroll(page)
        assert scroll["scrollWidth"] <= scroll["width"], path


def test_wheel_over_the_sidebar_never_moves_the_page(page):
    seeded(page)
    page.locator(".tool-steps summary").first.click()
    page.mouse.move(130, 400)
    for _ in range(6):
        page.mouse.wheel(0, 800)
    page.wait_for_timeout(200)
    scroll = page_scroll(page)
    assert scroll["y"] == 0 and scroll["top"] == 0
    assert page.evaluate("document.documentElement.scrollHeight <= innerHeight")


def test_a_deep_link_to_an_older_turn_opens_around_it_and_keeps_the_top_bar(page, live_app):
    conversation = seeded(page)
    lengthen(live_app, conversation, 60)
    page.goto(f"/c/{conversation}#turn-6-question")
    expect(page).to_have_url(re.compile(r"\?at=6#turn-6-question$"))
    target = page.locator("#turn-6-question")
    expect(target).to_be_in_viewport()
    assert target.evaluate("e => e.matches(':target')")
    scroll = page_scroll(page)
    assert scroll["y"] == 0 and scroll["top"] == 0
    expect(page.get_by_role("link", name="Viewer")).to_be_in_viewport()


def test_older_turns_load_on_scrolling_up_and_keep_the_readers_place(page, live_app):
    conversation = seeded(page)
    lengthen(live_app, conversation, 40)  # 43 turns: the newest 30 are shown
    page.goto(f"/c/{conversation}")
    expect(page.locator(".message--user")).to_have_count(30)
    page.locator("#scroller").evaluate("s => { s.scrollTop = 0; }")
    expect(page.locator(".message--user")).to_have_count(43)
    expect(page.locator("#turn-14-question")).to_be_in_viewport()  # the turn that was on top
    page.locator("#scroller").evaluate("s => { s.scrollTop = 0; }")
    expect(page.locator("#turn-1-question")).to_be_in_viewport()
    expect(page.locator(".load-more")).to_have_count(0)


def test_the_phone_drawer_opens_and_closes(new_page):
    page = new_page(*PHONE)
    conversation = seeded(page)
    sidebar, menu = page.locator("#sidebar"), page.get_by_role("button", name="Your conversations")
    expect(sidebar).to_be_hidden()
    expect(page.get_by_role("button", name="Send")).to_be_in_viewport()
    menu.click()
    expect(sidebar).to_be_visible()
    expect(menu).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("Escape")
    expect(sidebar).to_be_hidden()
    expect(menu).to_be_focused()
    menu.click()
    page.mouse.click(370, 500)  # the dimmed page beside the drawer
    expect(sidebar).to_be_hidden()
    menu.click()
    page.locator(f"#conversation-{conversation} .conversation-link").click()
    expect(page).to_have_url(re.compile(f"/c/{conversation}$"))


def test_typed_text_survives_an_unreachable_server(page):
    page.goto("/")
    page.route("**/messages", lambda route: route.abort("connectionrefused"))
    box = page.get_by_label("Message Nimbus")
    box.fill("Where is my order #1041?")
    box.press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("Nimbus can't be reached")
    expect(box).to_have_value("Where is my order #1041?")
    page.unroute("**/messages")
    box.press("Enter")
    expect(page.locator("#turn-1-answer:not(.is-streaming)")).to_contain_text("Order #1041")
    expect(box).to_have_value("")


def test_send_is_disabled_while_the_box_is_empty_and_the_skip_link_leads_to_it(page):
    page.goto("/")
    send_button = page.get_by_role("button", name="Send")
    expect(send_button).to_be_disabled()
    page.get_by_label("Message Nimbus").fill("  ")
    expect(send_button).to_be_disabled()
    page.get_by_label("Message Nimbus").fill("Hello")
    expect(send_button).to_be_enabled()
    skip = page.get_by_role("link", name="Skip to the message box")
    expect(skip).not_to_be_in_viewport()  # off screen until focused
    skip.focus()
    expect(skip).to_be_in_viewport()
    page.keyboard.press("Enter")
    expect(page.get_by_label("Message Nimbus")).to_be_focused()


def test_copy_regenerate_and_edit(page):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto("/")
    send(page, "Where is my order #1041?", 0)
    answer = page.locator("#turn-1-answer")
    answer.hover()
    answer.get_by_role("button", name="Copy this answer").click()
    expect(answer.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()").startswith("Order #1041 (Rain jacket")

    answer.get_by_role("button", name="Ask again for a new answer").click()  # the same turn, again
    expect(page.locator("#turn-1-answer:not(.is-streaming)")).to_contain_text("Order #1041")
    expect(page.get_by_role("group", name="Answer 2 of 2")).to_be_visible()
    expect(page.locator(".message--user .message-text")).to_have_text(["Where is my order #1041?"])

    page.locator("#turn-1-question").hover()
    page.locator("#turn-1-question").get_by_role("button", name="Edit question 1").click()
    box = page.get_by_label("New wording of question 1")
    expect(box).to_have_value("Where is my order #1041?")
    expect(box).to_be_focused()
    box.fill("Where is my order #1042?")
    page.get_by_role("button", name="Send as a new version").click()
    expect(page.locator("#turn-1-answer:not(.is-streaming)")).to_contain_text("Order #1042")
    expect(page.get_by_role("group", name="Version 3 of 3")).to_be_visible()  # the old ones kept


def test_a_second_tab_sees_the_first_tabs_reply_and_can_stop_it(page, reply_with):  # noqa: F811
    page.goto("/")
    send(page, "Hello", 0)
    other = page.context.new_page()
    other.goto(page.url)
    reply_with(PacedModel(" ".join(["Still writing this for you."] * 80), delay=0.05))
    box = page.get_by_label("Message Nimbus")
    box.fill("Tell me a long story")
    box.press("Enter")
    expect(page.locator("#turn-2-answer .streamed-text")).to_contain_text("Still writing")

    other.get_by_label("Message Nimbus").fill("Are you there?")
    other.get_by_label("Message Nimbus").press("Enter")
    expect(other.get_by_role("alert")).to_contain_text("still answering")
    expect(other.locator("#turn-2-question .message-text")).to_have_text("Tell me a long story")
    expect(other.locator("#turn-2-answer .streamed-text")).to_contain_text("Still writing")
    other.get_by_role("button", name="Stop").click()
    expect(other.locator("#turn-2-answer .tag")).to_have_text("Stopped")
    expect(page.locator("#turn-2-answer .tag")).to_have_text("Stopped")
    expect(other.get_by_label("Message Nimbus")).to_have_value("Are you there?")


def test_a_tab_coming_back_shows_what_another_tab_sent(page):
    page.goto("/")
    send(page, "Hello", 0)
    other = page.context.new_page()
    other.goto(page.url)
    send(page, "Where is my order #1041?", 1)
    other.evaluate("window.dispatchEvent(new Event('focus'))")
    expect(other.locator("#turn-2-answer")).to_contain_text("Order #1041")


def test_stop_mid_reply_with_the_paced_offline_model_saves_a_partial_answer(page, live_app, monkeypatch):
    monkeypatch.setitem(live_app.config, "NIMBUS_OFFLINE_WORDS_PER_SECOND", 8)
    page.goto("/")
    page.get_by_label("Message Nimbus").fill("How do I reset my password?")
    page.get_by_label("Message Nimbus").press("Enter")
    expect(page.locator("#turn-1-answer .streamed-text")).to_contain_text("Here's how")
    page.get_by_role("button", name="Stop").click()
    expect(page.locator("#turn-1-answer .tag")).to_have_text("Stopped")
    page.reload()
    saved = page.locator("#turn-1-answer .markdown").inner_text()
    assert saved.startswith("Here's how") and "sign in with it" not in saved
    expect(page.locator("#turn-1-answer .tag")).to_have_text("Stopped")


def luminance(rgb) -> float:
    def channel(c):
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(foreground, background) -> float:
    high, low = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (high + 0.05) / (low + 0.05)


COLOURS = """e => {
  const rgb = c => c.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number);
  let node = e, bg = 'rgba(0, 0, 0, 0)';
  while (node && (bg === 'rgba(0, 0, 0, 0)' || bg === 'transparent')) {
    bg = getComputedStyle(node).backgroundColor; node = node.parentElement;
  }
  return [rgb(getComputedStyle(e).color), rgb(bg === 'rgba(0, 0, 0, 0)' ? 'rgb(255, 255, 255)' : bg)];
}"""


def test_tool_step_text_has_enough_contrast_and_answers_are_announced(page):
    seeded(page)
    expect(page.locator("#announcer")).to_contain_text("Nimbus answered: Done! I've opened ticket")
    page.locator(".tool-steps summary").first.click()
    for selector in [".tool-steps summary", ".tool-step span", ".tool-step-detail", ".message-time"]:
        foreground, background = page.locator(selector).first.evaluate(COLOURS)
        assert contrast(foreground, background) >= 4.5, selector


def test_after_stop_the_message_box_has_the_focus(page, reply_with):  # noqa: F811
    reply_with(PacedModel(" ".join(["Writing slowly."] * 100), delay=0.05))
    page.goto("/")
    page.get_by_label("Message Nimbus").fill("Hello")
    page.get_by_label("Message Nimbus").press("Enter")
    expect(page.locator("#turn-1-answer .streamed-text")).to_contain_text("Writing")
    page.get_by_role("button", name="Stop").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#turn-1-answer .tag")).to_have_text("Stopped")
    expect(page.get_by_label("Message Nimbus")).to_be_focused()


def test_the_undo_note_leaves_when_its_window_has_passed(page, live_app, monkeypatch):
    monkeypatch.setitem(live_app.config, "NIMBUS_DELETE_UNDO_SECONDS", 1)
    page.goto("/")
    send(page, "Hello", 0)
    choose(page, "Hello", "Delete")
    expect(page.get_by_role("button", name="Undo")).to_be_visible()
    expect(page.get_by_role("button", name="Undo")).to_have_count(0, timeout=5000)
    page.reload()
    expect(page.locator(".conversation-item")).to_have_count(0)
