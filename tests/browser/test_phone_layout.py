"""Phones as a phone user expects: the title stays in sight, nothing lies off screen, every tap
target is 44×44 px on a touch screen, and a conversation's actions sit behind one "…" menu."""
import re

import pytest
from playwright.sync_api import expect

from tests.browser.test_chat_layout import PHONE, SMALL, seeded
from tests.browser.test_chat_page import SEED, send

LONG_TITLE = "Where is the rain jacket I ordered last week, and can I still change its size"

# Buttons, links and fields a finger taps; links inside running text are WCAG 2.5.5's "inline"
# exception (an answer's link, a sentence's link).
TARGETS = """() => [...document.querySelectorAll(
    'button, a[href], input:not([type=hidden]), textarea, select, summary')]
  .filter(e => e.checkVisibility({visibilityProperty: true}) && !e.closest('.visually-hidden'))
  .filter(e => !e.closest('.markdown, p, dd'))
  .filter(e => e.className !== 'skip-link')
  .map(e => { const box = /^(checkbox|radio)$/.test(e.type) && e.closest('label') || e;
    const r = box.getBoundingClientRect();  // a box's label is its target
    return {what: e.outerHTML.slice(0, 90), width: r.width, height: r.height, left: r.left,
            right: r.right}; })
  .filter(t => t.width > 0 && t.height > 0)"""


def renamed(page, conversation, title):
    """Give the open conversation a long title through the sidebar's menu."""
    item = page.locator(f"#conversation-{conversation}")
    if page.locator("#sidebar").is_hidden():
        page.get_by_role("button", name="Your conversations").click()
    item.get_by_role("button", name=re.compile("^Actions for")).click()
    item.get_by_role("menuitem", name="Rename").click()
    page.get_by_label(re.compile("^New name for")).fill(title)
    page.get_by_label(re.compile("^New name for")).press("Enter")
    expect(page.locator("#conversation-title")).to_have_text(title)
    page.keyboard.press("Escape")  # closes the drawer on a phone


def touch_phone(browser, live_server, width=PHONE[0], height=PHONE[1]):
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": height},
                                  has_touch=True, is_mobile=True)
    context.set_default_timeout(10_000)
    return context, context.new_page()


def too_small(page) -> str:
    """The tap targets under 44×44 px, one a line (an empty string when there is none)."""
    return "\n".join(f"{t['width']:.0f}×{t['height']:.0f} {t['what']}" for t in page.evaluate(TARGETS)
                     if t["width"] < 43.5 or t["height"] < 43.5)


def off_screen(page) -> list[dict]:
    width = page.evaluate("innerWidth")
    return [t for t in page.evaluate(TARGETS) if t["left"] < -0.5 or t["right"] > width + 0.5]


@pytest.mark.parametrize("size", [PHONE, SMALL], ids=["390px", "360px"])
def test_the_title_stays_in_sight_and_nothing_lies_off_screen(new_page, size):
    page = new_page(*size)
    conversation = seeded(page)
    renamed(page, conversation, LONG_TITLE)
    title = page.locator("#conversation-title")
    assert title.bounding_box()["width"] >= 120
    assert title.evaluate("e => getComputedStyle(e).textOverflow") == "ellipsis"
    assert title.evaluate("e => e.scrollWidth > e.clientWidth")  # cut, with the ellipsis showing
    expect(title).to_have_attribute("title", LONG_TITLE)
    for path in [f"/c/{conversation}", f"/c/{conversation}/viewer", "/memories"]:
        page.goto(path)
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth"), path
        assert off_screen(page) == [], path
    page.goto(f"/c/{conversation}")
    page.get_by_role("button", name="Conversation actions").click()
    menu = page.get_by_role("menu", name="Conversation actions")
    box = menu.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= size[0]
    assert off_screen(page) == []


def test_every_tap_target_is_44_px_on_a_touch_phone(browser, live_server):
    context, page = touch_phone(browser, live_server)
    try:
        page.goto("/")
        assert too_small(page) == "", "the welcome page"
        conversation = seeded(page)
        send(page, "Remember that I prefer email over phone.", len(SEED))
        page.locator(".tool-steps summary").first.click()
        checks = {"chat": lambda: None,
                  "drawer": lambda: page.get_by_role("button", name="Your conversations").click(),
                  "item menu": lambda: page.locator(f"#conversation-{conversation}").get_by_role(
                      "button", name=re.compile("^Actions for")).click(),
                  "conversation menu": lambda: (page.keyboard.press("Escape"), page.keyboard.press("Escape"),
                                                page.get_by_role("button", name="Conversation actions").click()),
                  "share panel": lambda: (
                      page.get_by_role("menuitem", name="Share a read-only link…").click(),
                      page.get_by_role("button", name="Share a read-only link").click(),
                      expect(page.get_by_role("button", name="Revoke")).to_be_visible()),
                  "viewer": lambda: page.goto(f"/c/{conversation}/viewer"),
                  "memories": lambda: page.goto("/memories"),
                  "memory editor": lambda: page.locator(".memory-edit summary").first.click()}
        for name, step in checks.items():
            step()
            page.wait_for_timeout(250)  # the drawer slides in
            assert too_small(page) == "", name
    finally:
        context.close()


def test_desktop_stays_compact(page):
    seeded(page)
    assert page.get_by_role("button", name="Copy this answer").first.bounding_box()["height"] < 44


def test_the_item_menu_works_from_the_keyboard(page):
    conversation = seeded(page)
    item = page.locator(f"#conversation-{conversation}")
    button = item.get_by_role("button", name=re.compile("^Actions for"))
    expect(button).to_have_attribute("aria-haspopup", "menu")
    expect(button).to_have_attribute("aria-expanded", "false")
    item.locator(".conversation-link").focus()
    page.keyboard.press("Tab")
    expect(button).to_be_focused()
    page.keyboard.press("Enter")
    menu = item.get_by_role("menu")
    expect(menu).to_be_visible()
    expect(button).to_have_attribute("aria-expanded", "true")
    entries = menu.get_by_role("menuitem")
    expect(entries.first).to_be_focused()
    expect(entries).to_have_text(["Rename", "Pin to the top", "Archive", "Export as Markdown", "Delete"])
    page.keyboard.press("ArrowDown")
    expect(entries.nth(1)).to_be_focused()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")  # round to the last
    expect(entries.last).to_be_focused()
    page.keyboard.press("Home")
    expect(entries.first).to_be_focused()
    page.keyboard.press("Escape")
    expect(menu).to_be_hidden()
    expect(button).to_be_focused()
    expect(button).to_have_attribute("aria-expanded", "false")

    page.keyboard.press(" ")
    expect(entries.first).to_be_focused()
    page.keyboard.press("Enter")  # Rename
    name = page.get_by_label(re.compile("^New name for"))
    expect(name).to_be_focused()
    name.fill("Refunds, by keyboard")
    name.press("Enter")
    expect(page.locator("#conversation-title")).to_have_text("Refunds, by keyboard")
    expect(item.get_by_role("menu")).to_be_hidden()  # the menu closed after its action


def test_a_menu_closes_on_a_click_elsewhere_and_after_a_download(page):
    conversation = seeded(page)
    page.get_by_role("button", name="Conversation actions").click()
    menu = page.get_by_role("menu", name="Conversation actions")
    expect(menu).to_be_visible()
    page.locator("#conversation-title").click()
    expect(menu).to_be_hidden()
    page.get_by_role("button", name="Conversation actions").click()
    with page.expect_download() as download:
        menu.get_by_role("menuitem", name="Export as Markdown").click()
    assert download.value.suggested_filename.endswith(".md")
    expect(menu).to_be_hidden()
    item_button = page.locator(f"#conversation-{conversation}").get_by_role(
        "button", name=re.compile("^Actions for"))
    item_button.click()
    page.get_by_role("button", name="Conversation actions").click()  # one menu open at a time
    expect(page.locator(f"#conversation-{conversation}").get_by_role("menu")).to_be_hidden()


def test_the_last_items_menu_shows_whole_and_the_page_stays_put(new_page):
    page = new_page(1280, 380)
    conversation = seeded(page)
    page.locator(f"#conversation-{conversation}").get_by_role("button", name=re.compile("^Actions for")).click()
    menu = page.locator(f"#conversation-{conversation}").get_by_role("menu")
    expect(menu.get_by_role("menuitem", name="Delete")).to_be_in_viewport()
    sidebar = page.locator("#sidebar").bounding_box()
    box = menu.bounding_box()
    assert box["y"] + box["height"] <= sidebar["y"] + sidebar["height"] + 1  # scrolled whole px
    assert page.evaluate("""() => scrollY === 0 && document.querySelector('.chat-layout').scrollTop === 0
        && document.querySelector('.topbar').getBoundingClientRect().top === 0""")
