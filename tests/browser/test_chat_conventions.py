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


# Contrast of each element's colour (or an SVG shape's fill) against the background behind it.
CONTRAST = """selectors => {
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map(c => (c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4)
    .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0);
  const behind = el => {
    for (; el; el = el.parentElement) {
      const c = rgb(getComputedStyle(el).backgroundColor);
      if (c.length === 3 || c[3] > 0.5) return c;
    }
    return rgb(getComputedStyle(document.documentElement).backgroundColor);
  };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + .05) / (y + .05); };
  const out = {};
  for (const selector of selectors) {
    const els = [...document.querySelectorAll(selector)];
    if (!els.length) { out[selector] = null; continue; }
    out[selector] = Math.min(...els.map(el => {
      const style = getComputedStyle(el);
      const ink = el instanceof SVGElement && !(el instanceof SVGTextElement) ? style.fill : style.color;
      return ratio(rgb(ink), behind(el instanceof SVGElement ? el.ownerSVGElement.parentElement : el));
    }));
  }
  return out;
}"""


def contrast(page, selectors) -> dict:
    return page.evaluate(CONTRAST, selectors)


def background(page) -> str:
    return page.evaluate("getComputedStyle(document.documentElement).backgroundColor")


DARK_BACKGROUND, LIGHT_BACKGROUND = "rgb(15, 20, 32)", "rgb(255, 255, 255)"


@SIZES
def test_dark_mode_follows_the_system_on_every_page(new_page, live_app, size):
    from tests.browser.test_staff_pages import accounts, customer_conversation, sign_in
    page = new_page(*size)
    page.emulate_media(color_scheme="dark")
    page.goto("/")
    send(page, SEED[0], 0)
    conversation = page.url.rsplit("/", 1)[-1]
    for path in ["/", f"/c/{conversation}", f"/c/{conversation}/viewer", "/memories", "/account", "/login"]:
        page.goto(path)
        assert background(page) == DARK_BACKGROUND, path
        expect(page.locator(".theme-toggle")).to_have_attribute("aria-pressed", "true")
    staff, customer = accounts(live_app, ("staff", "staff", "demo"), ("cust", "customer", "demo"))
    customer_conversation(live_app, customer)
    sign_in(page, staff)
    page.goto("/staff")
    assert background(page) == DARK_BACKGROUND
    page.emulate_media(color_scheme="light")
    assert background(page) == LIGHT_BACKGROUND
    expect(page.locator(".theme-toggle")).to_have_attribute("aria-pressed", "false")


@SIZES
def test_the_toggle_is_remembered_in_this_browser(new_page, size):
    page = new_page(*size)
    page.emulate_media(color_scheme="light")
    page.goto("/")
    assert background(page) == LIGHT_BACKGROUND
    toggle = page.get_by_role("button", name="Dark mode")
    expect(toggle).to_be_visible()
    toggle.click()
    assert background(page) == DARK_BACKGROUND
    expect(toggle).to_have_attribute("aria-pressed", "true")
    for path in ["/memories", "/login", "/"]:
        page.goto(path)
        assert background(page) == DARK_BACKGROUND, path
    page.get_by_role("button", name="Dark mode").click()
    page.emulate_media(color_scheme="dark")  # a choice of light outlasts a dark system
    page.reload()
    assert background(page) == LIGHT_BACKGROUND
    box = page.locator(".theme-toggle").bounding_box()
    assert box["width"] >= (44 if size[0] < 800 else 36) and box["height"] >= (44 if size[0] < 800 else 36)


CODE_ANSWER = "Try this:\n\n```python\ndef refund(order):\n    return order.total  # in euros\n```\n\nand `x`."


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_text_code_and_tool_steps_keep_their_contrast(new_page, reply_with, scheme):
    from tests.fakes.scripted_model import ScriptedModel
    page = new_page()
    page.emulate_media(color_scheme=scheme)
    page.goto("/")
    send(page, "Where is my order #1041?", 0)
    reply_with(ScriptedModel(CODE_ANSWER))
    send(page, "Show me code", 1)
    ratios = contrast(page, [".markdown p", ".message--user .message-text", ".tool-steps summary",
                             ".message-time", ".codehilite .k", ".codehilite .nf", ".codehilite .c1",
                             ".codehilite .n", ".conversation-link", ".button--new", ".composer textarea"])
    assert all(ratios.values()) and min(ratios.values()) >= 4.5, ratios


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_viewers_fates_and_the_gauge_stand_out_in_either_scheme(new_page, scheme):
    page = new_page()
    page.emulate_media(color_scheme=scheme)
    page.goto("/")
    for seq, message in enumerate(SEED):
        send(page, message, seq)
    ratios = contrast(page, [".gauge-seg--system", ".gauge-seg--history"])
    page.get_by_role("link", name="Viewer").click()
    page.wait_for_load_state("load")
    ratios.update(contrast(page, [".viewer .fate", ".viewer h1", ".viewer .muted", ".viewer .fate-full-text"]))
    shapes = contrast(page, [".viewer .strip-svg .cell", ".viewer .gauge .seg-history"])
    assert min(ratios.values()) >= 4.5, ratios
    assert min(v for v in shapes.values() if v) >= 3, shapes  # graphics: 3:1 (WCAG 1.4.11)


@SIZES
def test_code_blocks_are_highlighted_with_a_copy_button(new_page, reply_with, size):
    from tests.fakes.scripted_model import ScriptedModel
    page = new_page(*size)
    errors = console_errors(page)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    reply_with(ScriptedModel(CODE_ANSWER, CODE_ANSWER))
    page.goto("/")
    send(page, "Show me code", 0)
    block = page.locator("#turn-1-answer .codehilite")
    expect(block.locator("span.k")).to_have_text(["def", "return"])
    expect(block.locator("span.c1")).to_have_text("# in euros")
    copy = block.get_by_role("button", name="Copy code")
    copy.focus()
    page.keyboard.press("Enter")
    expect(block.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == "def refund(order):\n    return order.total  # in euros"
    expect(block.get_by_role("button", name="Copy code")).to_be_visible(timeout=4000)
    page.locator("#turn-1-answer .action-copy").click()  # the whole answer's Copy leaves the button's label out
    assert "Copy" not in page.evaluate("navigator.clipboard.readText()")
    page.reload()
    expect(page.locator("#turn-1-answer .codehilite").get_by_role("button", name="Copy code")).to_be_visible()
    assert errors == []


@SIZES
def test_thumbs_under_an_answer_are_kept_and_staff_read_them(new_page, live_app, size):
    from tests.browser.test_staff_pages import accounts, sign_in
    page = new_page(*size)
    errors = console_errors(page)
    page.goto("/")
    send(page, SEED[0], 0)
    answer = page.locator("#turn-1-answer")
    answer.hover()
    answer.get_by_role("button", name="Bad answer").click()
    comment = answer.get_by_label("What was wrong with this answer? (optional)")
    expect(comment).to_be_focused()
    comment.fill("The refund window is wrong")
    comment.press("Enter")
    expect(answer.get_by_role("status")).to_contain_text("The refund window is wrong")
    expect(answer.get_by_role("button", name="Bad answer")).to_have_attribute("aria-pressed", "true")
    for button in answer.locator(".feedback .icon-button").all():
        box = button.bounding_box()
        assert box["width"] >= (44 if size[0] < 800 else 28), box
    page.reload()
    expect(page.locator("#turn-1-answer").get_by_role("button", name="Bad answer")).to_have_attribute(
        "aria-pressed", "true")
    assert errors == []
    [staff] = accounts(live_app, ("staff", "staff", "demo"))
    console = new_page(*size)
    sign_in(console, staff)
    console.goto("/staff/feedback")
    expect(console.locator("#feedback")).to_contain_text("The refund window is wrong")
    console.locator("#feedback a").first.click()
    expect(console.locator(".feedback-note")).to_contain_text("Bad answer")
    assert console.evaluate("document.documentElement.scrollWidth <= innerWidth")


def scroll_state(page) -> dict:
    return page.evaluate("""() => { const s = document.getElementById('scroller');
        return {top: s.scrollTop, fromBottom: s.scrollHeight - s.scrollTop - s.clientHeight}; }""")


@SIZES
def test_scroll_to_newest_appears_when_reading_older_turns_and_never_pulls_the_reader(
        new_page, live_app, reply_with, size):
    from tests.browser.test_chat_layout import conversation_id, lengthen
    page = new_page(*size)
    page.goto("/")
    send(page, SEED[0], 0)
    lengthen(live_app, conversation_id(page), 12)
    page.reload()
    newest = page.get_by_role("button", name="Scroll to the newest message")
    expect(newest).to_be_hidden()
    reply_with(PacedModel(" ".join(["A long and careful answer."] * 60), delay=0.03))
    page.get_by_label("Message Nimbus").fill("Tell me everything")
    page.get_by_label("Message Nimbus").press("Enter")
    expect(page.locator("#turn-14-answer .streamed-text")).to_contain_text("careful")
    box = page.locator("#scroller").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -900)
    expect(newest).to_be_visible()
    page.wait_for_timeout(300)  # the wheel's scroll lands
    reading = scroll_state(page)["top"]
    page.wait_for_timeout(600)  # words keep arriving below
    assert scroll_state(page)["top"] == reading  # the reader stays where they read
    expect(newest).to_have_class("button scroll-newest has-new")
    expect(page.locator("#turn-14-answer:not(.is-streaming)")).to_be_attached(timeout=30_000)
    assert scroll_state(page)["top"] == reading
    newest.click()
    expect(newest).to_be_hidden()
    assert scroll_state(page)["fromBottom"] < 80
    expect(page.locator("#turn-14-answer .message-actions")).to_be_in_viewport()


@SIZES
def test_question_mark_lists_the_shortcuts_in_a_dialog_that_keeps_the_focus(new_page, size):
    page = new_page(*size)
    page.goto("/")
    box = page.get_by_label("Message Nimbus")
    box.press("?")
    expect(box).to_have_value("?")  # typing in the message box is typing
    expect(page.get_by_role("dialog")).to_be_hidden()
    box.fill("")
    page.locator(".brand").focus()
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("New conversation")
    for _ in range(3):
        page.keyboard.press("Tab")
        assert page.evaluate("document.getElementById('shortcuts').contains(document.activeElement)")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.getElementById('shortcuts').contains(document.activeElement)")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(page.locator(".brand")).to_be_focused()


@SIZES
def test_shortcuts_start_a_conversation_search_and_stop_a_reply(new_page, reply_with, size):
    page = new_page(*size)
    page.goto("/")
    send(page, SEED[0], 0)
    conversation = page.url
    page.locator(".brand").focus()
    page.keyboard.press("/")
    expect(page.get_by_label("Search your conversations")).to_be_focused()
    page.keyboard.press("Shift+Escape")
    expect(page.get_by_label("Message Nimbus")).to_be_focused()
    page.keyboard.press("Control+k")
    expect(page.get_by_label("Search your conversations")).to_be_focused()
    page.keyboard.press("Escape")  # on a phone: closes the drawer first
    reply_with(PacedModel(" ".join(["Let me think about that carefully."] * 60), delay=0.05))
    box = page.get_by_label("Message Nimbus")
    box.fill("And the shipping?")
    box.press("Enter")
    expect(page.locator("#turn-2-answer .streamed-text")).to_contain_text("Let me think")
    box.press("Escape")
    expect(page.locator("#turn-2-answer .tag")).to_have_text("Stopped")
    box.press("Control+Shift+O")
    expect(page).to_have_url(conversation.split("/c/")[0] + "/")
    expect(page.get_by_role("heading", name="Hi, I'm Nimbus.")).to_be_visible()
