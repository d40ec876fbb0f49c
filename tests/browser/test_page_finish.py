"""The finish of every page at 1280 and 390 px: the account area is styled wherever it shows, a
phone's texts do not wrap in two, and its buttons are touch targets of 44 px."""
import pytest
from playwright.sync_api import expect

from tests.browser.test_chat_page import send
from webapp.extensions import db
from webapp.models import Conversation
from tests.browser.test_staff_pages import accounts, customer_conversation, sign_in

SIZES = [(1280, 800), (390, 844)]
IDS = ["desktop", "phone"]


def box(locator) -> dict:
    return locator.evaluate("""e => { const r = e.getBoundingClientRect(), s = getComputedStyle(e);
        return {width: r.width, height: r.height, lines: Math.round(r.height / parseFloat(s.lineHeight || 20)),
                background: s.backgroundColor, border: s.borderTopStyle, nowrap: s.whiteSpace}; }""")


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_the_account_area_is_styled_on_chat_memories_and_viewer(new_page, live_app, size):
    (email,) = accounts(live_app, ("kim", "customer", "demo"))
    conversation = customer_conversation(live_app, email)
    page = new_page(*size)
    sign_in(page, email)
    for path in ["/", f"/c/{conversation}", "/memories", f"/c/{conversation}/viewer"]:
        page.goto(path)
        sign_out = page.locator(".whoami-bar").get_by_role("button", name="Sign out")
        expect(sign_out).to_be_visible()
        looks = box(sign_out)
        assert looks["background"] == "rgba(0, 0, 0, 0)" and looks["border"] == "none", path
        bar, name = page.locator(".whoami-bar").bounding_box(), page.locator(".whoami").bounding_box()
        assert abs((bar["y"] + bar["height"] / 2) - (name["y"] + name["height"] / 2)) < 4, path
        assert sign_out.bounding_box()["height"] >= 44


@pytest.mark.parametrize("width", [390, 360])
def test_a_phone_keeps_sign_in_and_times_on_one_line(new_page, width):
    page = new_page(width, 800)
    page.goto("/")
    send(page, "Where is my order #1041?", 0)
    sign_in_link = page.locator(".whoami-bar").get_by_role("link", name="Sign in")
    assert sign_in_link.bounding_box()["height"] < 60 and box(sign_in_link)["nowrap"] == "nowrap"
    for time in page.locator(".message-time").all():
        assert time.bounding_box()["height"] < 24  # one line: "05:06 PM", never "05:06 / PM"


def test_a_phone_s_icon_buttons_are_44_px_touch_targets(new_page):
    page = new_page(390, 844)
    page.goto("/")
    send(page, "Where is my order #1041?", 0)
    for button in [page.locator(".action-edit").first, page.locator(".action-copy").first,
                   page.locator(".menu-button")]:
        size = button.bounding_box()
        assert size["width"] >= 44 and size["height"] >= 44, (button, size)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_search_hits_keep_to_the_sidebar_and_show_customers_no_scores(new_page, live_app, size):
    page = new_page(*size)
    page.goto("/")
    send(page, "Where is my order #1041?", 0)
    with live_app.app_context():  # an imported conversation's own, long title
        conversation = db.session.get(Conversation, page.url.rsplit("/", 1)[1])
        conversation.title = "A present for my grandmother's birthday party, sent in March " * 2
        db.session.commit()
        db.session.remove()
    if size[0] < 800:
        page.locator(".menu-button").click()
    page.get_by_label("Search your conversations").fill("1041")
    hit = page.locator(".history-hits a").first
    expect(hit).to_contain_text("Where is my order #1041?")
    title = hit.locator(".hit-title")
    assert title.evaluate("e => e.scrollWidth > e.clientWidth")  # cut with an ellipsis
    sidebar = page.locator("#sidebar").bounding_box()
    assert title.bounding_box()["x"] + title.bounding_box()["width"] <= sidebar["x"] + sidebar["width"]
    expect(hit.locator(".hit-why")).to_have_count(0)
