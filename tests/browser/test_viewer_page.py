"""The viewer in a real browser: the seed's refund turns side by side, and a live what-if."""
import os
import re

from playwright.sync_api import expect

from tests.browser.browser_support import open_viewer

from webapp.extensions import db
from webapp.models import Conversation

from tests.support import wait_for_replies
from tests.viewer_support import DROPPING_BUDGET, LONG_QUESTIONS, REFUND_QUESTIONS, SUMMARY_BUDGET


def chat(page, live_app, questions, url="/", first_seq=0):
    """Ask each question in the chat page; wait for the replies and the work after them
    (summary, memory) to finish, as the viewer shows what is stored."""
    page.goto(url)
    box = page.get_by_label("Message Nimbus")
    for seq, question in enumerate(questions, first_seq):
        box.fill(question)
        box.press("Enter")
        expect(page.locator(f"#turn-{seq + 1}-answer:not(.is-streaming)")).to_be_visible()
    wait_for_replies(live_app)


def show_context(live_app, conversation_id):
    """What `flask show ID --context` prints for the conversation, as its owner."""
    with live_app.app_context():
        email = db.session.get(Conversation, conversation_id).user.email
        db.session.remove()
    result = live_app.test_cli_runner().invoke(
        args=["show", conversation_id, "--context", "--user", email])
    assert result.exit_code == 0, result.output
    return result.output


def turn(page, number):
    return page.locator(f"#turn-{number}")


def test_refund_turns_side_by_side_and_a_lower_budget_drops_turn_one(page, live_app, artifacts):
    chat(page, live_app, REFUND_QUESTIONS)
    open_viewer(page)
    expect(page).to_have_url(re.compile(r"/c/[0-9a-f]{32}/viewer$"))
    conversation_id = page.url.split("/")[-2]

    first = turn(page, 1)
    expect(first.locator(".fate")).to_have_text("COMPACTED")
    expect(first.locator(".stored .msg-call")).to_contain_text(
        'check_refund_eligibility({"order_id": 1043})')
    expect(first.locator(".sent .msg-call")).to_have_count(0)
    expect(first.locator(".sent")).to_contain_text("Can I get a refund for order #1043?")
    for number in (2, 3):
        expect(turn(page, number).locator(".fate")).to_have_text("FULL")
        expect(turn(page, number).locator(".stored .msg-call")).to_have_count(1)
        expect(turn(page, number).locator(".sent .msg-call")).to_have_count(1)
    expect(page.get_by_text("How to read this page")).to_be_visible()
    turn(page, 2).locator(".trace summary").click()
    steps = turn(page, 2).locator(".steps li")
    expect(steps).to_have_count(4)
    expect(steps.nth(1)).to_contain_text('tool call check_refund_eligibility({"order_id": 1042})')
    expect(steps.nth(1).locator(".ms")).to_have_text(re.compile(r"^\d+ ms$"))
    turn(page, 2).screenshot(path=os.path.join(artifacts, "viewer-turn-trace.png"))
    page.screenshot(path=os.path.join(artifacts, "viewer-page.png"), full_page=True)

    before = show_context(live_app, conversation_id)
    page.get_by_label("History budget (tokens)").fill(str(DROPPING_BUDGET))
    expect(first.locator(".fate")).to_have_text("DROPPED")
    expect(first.locator(".reason")).to_contain_text(f"over the {DROPPING_BUDGET}-token budget")
    expect(first.locator(".sent")).to_contain_text("the model will not see this turn")
    expect(turn(page, 2).locator(".fate")).to_have_text("FULL")
    expect(page.get_by_role("status").filter(has_text="What-if preview")).to_be_visible()
    expect(page).to_have_url(re.compile(rf"budget={DROPPING_BUDGET}"))
    page.screenshot(path=os.path.join(artifacts, "viewer-what-if.png"), full_page=True)
    assert show_context(live_app, conversation_id) == before

    page.get_by_role("button", name="Apply to this conversation").click()
    saved = page.get_by_role("status").filter(has_text="Saved: this conversation now uses")
    expect(saved).to_be_visible()
    expect(page).to_have_url(re.compile(r"/viewer$"))
    assert show_context(live_app, conversation_id) != before
    page.reload()
    expect(first.locator(".fate")).to_have_text("DROPPED")
    expect(page.get_by_label("History budget (tokens)")).to_have_value(str(DROPPING_BUDGET))


def test_a_stranger_is_offered_sign_in_and_shown_nothing_of_the_viewer(page, new_page, live_app):
    chat(page, live_app, ["Where is my order #1041?"])
    viewer = page.url.rstrip("/") + "/viewer"
    assert page.goto(viewer).status == 200
    stranger = new_page()
    stranger.goto(viewer)  # a guest: the page may be someone's who signs in (docs: Security)
    assert "/login?next=" in stranger.url
    expect(stranger.locator("body")).not_to_contain_text("Where is my order")


def test_memories_show_their_scope_source_and_why(page, live_app, artifacts):
    chat(page, live_app, ["Remember that I prefer email over phone."])
    chat(page, live_app, ["How do I prefer to be contacted?"])
    open_viewer(page)
    memory = page.locator("#section-memory")
    expect(memory).to_contain_text("Long-term memory")
    expect(memory.locator(".memory-text").first).to_contain_text("email")
    expect(memory.locator(".chip-why").first).to_contain_text("recency rank 1")
    expect(memory).to_contain_text("turn 1 of another conversation")
    memory.screenshot(path=os.path.join(artifacts, "viewer-memory.png"))


def summarized_conversation(page, live_app) -> None:
    """A fact, a smaller budget applied in the viewer, then enough questions to fold it into the
    summary; ends on the viewer."""
    chat(page, live_app, ["My name is Dara and I live in Lisbon."])
    chat_url = page.url
    open_viewer(page)
    page.get_by_label("History budget (tokens)").fill(str(SUMMARY_BUDGET))
    page.get_by_role("button", name="Apply to this conversation").click()
    expect(page.get_by_role("status").filter(has_text="Saved")).to_be_visible()
    chat(page, live_app, LONG_QUESTIONS, url=chat_url, first_seq=1)
    open_viewer(page)


def test_a_smaller_budget_applied_folds_old_turns_into_the_summary(page, live_app, artifacts):
    summarized_conversation(page, live_app)
    expect(page.locator(".section h3")).to_have_text(
        ["System prompt", "Long-term memory", "Rolling summary", "Conversation history"])
    for number in range(1, 6):
        expect(turn(page, number).locator(".fate")).to_have_text("SUMMARIZED")
    expect(turn(page, 6).locator(".fate")).to_have_text("FULL")
    expect(page.locator("#section-summary")).to_contain_text("Dara")
    page.screenshot(path=os.path.join(artifacts, "viewer-summary.png"), full_page=True)


def test_a_what_if_out_of_range_is_explained(page, live_app, artifacts):
    chat(page, live_app, ["Where is my order #1041?"])
    page.goto(page.url.rstrip("/") + "/viewer")
    page.get_by_label("History budget (tokens)").fill("0")
    expect(page.get_by_role("alert")).to_have_text(
        "Can't preview that: budget must be between 1 and 1,000,000. Showing the saved settings.")
    expect(turn(page, 1).locator(".fate")).to_have_text("FULL")
    page.set_viewport_size({"width": 600, "height": 900})  # a phone: one column, sent below stored
    expect(turn(page, 1).locator(".sent")).to_be_visible()
    page.screenshot(path=os.path.join(artifacts, "viewer-narrow.png"), full_page=True)
