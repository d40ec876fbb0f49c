"""Under the Content-Security-Policy, in a real browser: htmx and SSE still work, nothing is
refused by the policy, and a refused request says why in the page."""
import pytest
from playwright.sync_api import expect

WATCH_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__violations.push(e.violatedDirective + " " + (e.blockedURI || "inline") + " " + e.sourceFile + ":" + e.lineNumber + " " + e.sample);
});
"""


@pytest.fixture
def watched(page):
    page.add_init_script(WATCH_VIOLATIONS)
    errors = []
    page.on("console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None)
    yield page
    assert page.evaluate("window.__violations") == [] and errors == []


def test_a_reply_streams_with_its_tool_steps_under_the_policy(watched):
    response = watched.goto("/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    watched.get_by_label("Message Nimbus").fill("Can I get a refund for order #1043?")
    watched.get_by_label("Message Nimbus").press("Enter")
    answer = watched.locator("#turn-1-answer:not(.is-streaming)")
    expect(answer).to_contain_text("purchased 20 days ago")
    expect(answer).to_contain_text("Checked order #1043")


def test_the_memory_panel_swaps_in_place_under_the_policy(watched):
    watched.goto("/memories")
    watched.get_by_label("What should Nimbus remember?").fill("I prefer email over phone.")
    watched.get_by_role("button", name="Add").click()
    expect(watched.locator(".memory-content")).to_have_text("I prefer email over phone.")
    watched.get_by_role("button", name="Stop remembering new things").click()
    expect(watched.locator(".sharing-state")).to_contain_text("off")


def test_the_viewer_and_its_what_if_work_under_the_policy(watched):
    watched.goto("/")
    watched.get_by_label("Message Nimbus").fill("Where is my order #1041?")
    watched.get_by_label("Message Nimbus").press("Enter")
    expect(watched.locator("#turn-1-answer:not(.is-streaming)")).to_be_visible()
    watched.get_by_role("link", name="Viewer").click()
    expect(watched.locator(".gauge")).to_be_visible()
    # The page is drawn before its deferred scripts run: typing then previews nothing (Preview
    # still submits the form). A loaded page has htmx listening to the form.
    watched.wait_for_load_state()
    watched.get_by_label("History budget (tokens)").fill("300")
    expect(watched.get_by_role("button", name="Apply to this conversation")).to_be_visible()


def test_a_refused_message_says_why_under_the_message_box_and_keeps_the_text(watched):
    watched.goto("/")
    box = watched.get_by_label("Message Nimbus")
    box.fill("Hello\x00there")
    box.press("Enter")
    expect(watched.locator("#composer-error")).to_contain_text("NUL character")
    assert box.input_value() == "Hello\x00there"
    assert "/c/" not in watched.url  # no conversation was started


def test_a_refusal_on_a_page_without_a_message_box_shows_in_the_page_alert(watched):
    watched.goto("/memories")
    watched.get_by_label("What should Nimbus remember?").fill("I like\x00 tea")
    watched.get_by_role("button", name="Add").click()
    expect(watched.locator("#page-alert")).to_contain_text("NUL character")
