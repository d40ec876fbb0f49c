"""Issue 24's demo pages in a real browser at 1280 and 390 px: pin and archive in the sidebar, the
chat's "…" menu (share and export), a terminal's one-time sign-in link, imported turns in the viewer and
the seeded long conversation's six fates."""
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from webapp.accounts import find_user
from webapp.accounts.sign_in_links import create_link
from webapp.extensions import db
from webapp.shop.demo_conversation import seed_long_conversation, seeded_conversation

from tests.browser.test_chat_page import send

SIZES = pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
DATA = Path(__file__).resolve().parent.parent / "data"


def start(page, message) -> str:
    page.goto("/")
    send(page, message, 0)
    return re.search(r"/c/([0-9a-f]{32})", page.url).group(1)


def open_sidebar(page, size):
    if size[0] < 800:
        page.get_by_role("button", name="Your conversations").click()
    expect(page.locator("#sidebar")).to_be_visible()


def act_on(page, conversation, action):
    """Choose an item's action as a person does: pointing at the item shows its "…" menu."""
    item = page.locator(f"#conversation-{conversation}")
    item.hover()
    item.get_by_role("button", name=re.compile("^Actions for ")).click()
    item.get_by_role("menuitem", name=action).click()


def fits_sideways(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= innerWidth")


@SIZES
def test_pin_and_archive_and_undo_in_the_sidebar(new_page, size):
    page = new_page(*size)
    first = start(page, "Where is my order #1041?")
    second = start(page, "How long does shipping take?")
    open_sidebar(page, size)
    items = page.locator("#sidebar .conversation-item")
    expect(items.first).to_have_id(f"conversation-{second}")
    # The hidden actions of an item not open lie over its title: the title keeps its width.
    assert page.locator(f"#conversation-{first} .conversation-link").bounding_box()["width"] > 200
    act_on(page, first, "Pin to the top")
    expect(page.locator("#sidebar .sidebar-heading").first).to_have_text("Pinned")
    expect(items.first).to_have_id(f"conversation-{first}")
    expect(page.locator("#sidebar .undo-note")).to_contain_text("Pinned “")
    page.locator("#sidebar .undo-note").get_by_role("button", name="Undo").click()
    expect(page.locator("#sidebar .sidebar-heading", has_text="Pinned")).to_have_count(0)
    expect(items.first).to_have_id(f"conversation-{second}")

    act_on(page, first, "Archive")
    archived = page.locator("#sidebar .archived-section")
    expect(archived.locator("summary")).to_have_text("Archived (1)")
    expect(page.locator(f"#conversation-{first}")).to_be_hidden()  # under the closed section
    archived.locator("summary").click()
    expect(page.locator(f"#conversation-{first}")).to_be_visible()
    act_on(page, first, "Unarchive")
    expect(archived).to_have_count(0)
    expect(page.locator(f"#conversation-{first}")).to_be_visible()
    assert fits_sideways(page)


@SIZES
def test_share_and_export_from_the_chat_menu(new_page, size):
    page = new_page(*size)
    conversation = start(page, "Where is my order #1041?")
    page.get_by_role("button", name="Conversation actions").click()
    actions = page.get_by_role("menu", name="Conversation actions")
    expect(actions.get_by_role("menuitem", name="Export as Markdown")).to_have_attribute(
        "href", f"/c/{conversation}/export/markdown")
    expect(actions.get_by_role("menuitem", name=re.compile("JSON"))).to_have_count(2)
    actions.get_by_role("menuitem", name="Share a read-only link…").click()
    expect(actions).to_be_hidden()
    menu = page.get_by_role("region", name="Share read-only")
    menu.get_by_role("button", name="Share a read-only link").click()
    address = menu.get_by_label("Read-only link to this conversation")
    expect(address).to_have_value(re.compile(r"/s/\S+$"))
    box = menu.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= size[0]
    path = re.sub(r"^https?://[^/]+", "", address.input_value())

    stranger = new_page(*size)
    stranger.goto(path)
    expect(stranger.get_by_text("Where is my order #1041?").first).to_be_visible()
    menu.get_by_role("button", name="Revoke").click()
    expect(menu.get_by_role("button", name="Share a read-only link")).to_be_visible()
    assert stranger.goto(path).status == 404


@SIZES
def test_the_terminals_sign_in_link_opens_the_conversation_as_its_owner(new_page, live_app, size):
    output = live_app.test_cli_runner().invoke(args=["ask", "How long does shipping take?"]).output
    path = re.search(r"open in the browser: https?://[^/]+(/signin/\S+)", output).group(1)
    conversation = re.search(r"conversation: (\w{32})", output).group(1)
    page = new_page(*size)
    page.goto(path)
    expect(page.get_by_role("heading", name="Sign in as Alex Rivera?")).to_be_visible()
    page.get_by_role("button", name="Sign in and open the conversation").click()
    expect(page).to_have_url(re.compile(f"/c/{conversation}$"))
    expect(page.locator(".message--user").first).to_contain_text("How long does shipping take?")
    expect(page.locator(".whoami")).to_contain_text("Alex")
    again = new_page(*size)
    again.goto(path)
    expect(again.get_by_role("heading", name="This sign-in link no longer works")).to_be_visible()


@SIZES
def test_imported_turns_say_they_made_no_request(new_page, size):
    page = new_page(*size)
    page.goto("/import")
    page.locator('input[type="file"]').set_input_files(str(DATA / "openai_messages.json"))
    page.get_by_role("button", name="Import", exact=True).click()
    page.get_by_role("link", name="viewer", exact=True).first.click()
    expect(page.locator(".trace summary").first).to_contain_text("imported · no request")
    expect(page.locator(".cost .saving")).to_contain_text("left out of the chart")
    expect(page.locator(".chart .dot-sent")).to_have_count(0)
    assert fits_sideways(page)


@SIZES
def test_the_seeded_long_conversation_shows_every_fate(new_page, live_app, size):
    with live_app.app_context():
        alex = find_user("alex@example.com")
        conversation = seed_long_conversation(alex, live_app.config) or seeded_conversation(alex)
        link = create_link(alex, f"/c/{conversation.id}/viewer", live_app.config)
        db.session.remove()
    page = new_page(*size)
    page.goto(re.sub(r"^https?://[^/]+", "", link))
    page.get_by_role("button", name="Sign in and open the conversation").click()
    for fate in ("FULL", "COMPACTED", "SUMMARIZED", "DROPPED", "PINNED", "EXCLUDED"):
        expect(page.locator(f'[data-fate="{fate}"]').first).to_be_attached()
    expect(page.locator("#section-summary")).to_be_visible()
    expect(page.get_by_text("not yet in the summary").first).to_be_attached()
    assert fits_sideways(page)
