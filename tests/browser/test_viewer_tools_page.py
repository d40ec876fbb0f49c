"""The viewer's newer controls in a real browser: Back/Forward keep the what-if controls and the
preview in step, the fate strip jumps to a turn, view as sent, compare, and a phone's width."""
import os
import re

from playwright.sync_api import expect

from tests.browser.browser_support import open_viewer

from tests.browser.test_viewer_page import chat, summarized_conversation, turn
from tests.viewer_support import REFUND_QUESTIONS


def preview(page, strategy, recent):
    page.get_by_label("Strategy").select_option(strategy)
    page.get_by_label("Newest turns in full").fill(str(recent))
    expect(page).to_have_url(re.compile(rf"strategy={strategy}.*recent_turns={recent}"))
    expect(page.get_by_role("status").filter(has_text="What-if preview")).to_contain_text(
        f"the {strategy} strategy")


def expect_controls(page, strategy, recent):
    expect(page.get_by_label("Strategy")).to_have_value(strategy)
    expect(page.get_by_label("Newest turns in full")).to_have_value(str(recent))
    expect(page.get_by_role("status").filter(has_text="What-if preview")).to_contain_text(
        f"the {strategy} strategy, a")
    expect(page.get_by_role("status").filter(has_text="What-if preview")).to_contain_text(
        f"the {recent} newest turns in full")


def test_back_and_forward_keep_the_controls_and_the_preview_in_step(page, live_app):
    chat(page, live_app, REFUND_QUESTIONS)
    open_viewer(page)
    preview(page, "window", 5)
    preview(page, "budget", 4)
    page.go_back()
    expect(page).to_have_url(re.compile(r"strategy=window.*recent_turns=5"))
    expect_controls(page, "window", 5)
    page.go_forward()
    expect(page).to_have_url(re.compile(r"strategy=budget.*recent_turns=4"))
    expect_controls(page, "budget", 4)


def test_strip_as_sent_and_comparison(page, live_app, artifacts):
    summarized_conversation(page, live_app)

    strip = page.locator(".strip")
    expect(strip).to_contain_text("the summary covers turns 1–")
    expect(page.get_by_text("How to read this page")).to_be_visible()
    expect(page.locator(".help")).not_to_have_attribute("open", "")
    strip.screenshot(path=os.path.join(artifacts, "viewer-fate-strip.png"))
    strip.locator("a").last.click()
    expect(page).to_have_url(re.compile(r"#turn-6$"))

    turn(page, 6).get_by_role("link", name="view as sent").click()
    sent = turn(page, 6).locator(".as-sent")
    expect(sent).to_contain_text("Turn 6 as it was sent")
    # The memory of the name was distilled after turn 6 went out: today's request has it, turn 6's did not.
    expect(page.locator("#section-memory")).to_be_visible()
    expect(sent.locator(".section h4")).to_have_text(
        ["System prompt", "Rolling summary", "Conversation history"])
    expect(sent).to_contain_text("Model call 1")
    sent.screenshot(path=os.path.join(artifacts, "viewer-as-sent.png"))

    page.get_by_label("Find a fact").fill("Dara")
    page.get_by_role("button", name="Find").click()
    expect(page.locator("#find-results")).to_contain_text("The next request still carries “Dara”")

    page.get_by_role("link", name="compare with another strategy").click()
    expect(page.get_by_role("heading", name="Turns whose fate differs")).to_be_visible()
    expect(page.locator(".compare-side")).to_have_count(2)
    page.screenshot(path=os.path.join(artifacts, "viewer-compare.png"), full_page=True)


def test_on_a_phone_columns_stack_and_the_chart_fits(new_page, live_app, artifacts):
    page = new_page(width=390, height=844)
    chat(page, live_app, REFUND_QUESTIONS)
    open_viewer(page)
    wide = page.evaluate("""[...document.querySelectorAll('.viewer *')]
        .filter(e => e.getBoundingClientRect().right > 391 && !e.closest('details:not([open])'))
        .map(e => e.tagName + '.' + e.className)""")
    assert wide == [], f"these stick out of the phone's width: {wide}"
    chart = page.locator("svg.chart").bounding_box()
    assert chart["width"] <= 390
    stored, sent = (turn(page, 2).locator(f".{side}").bounding_box() for side in ("stored", "sent"))
    assert sent["y"] >= stored["y"] + stored["height"] - 1  # sent below stored, not beside it
    page.screenshot(path=os.path.join(artifacts, "viewer-phone.png"), full_page=True)
