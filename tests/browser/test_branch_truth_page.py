"""Branches against the outside truth, desktop and phone: after regenerate, switch, reload and
edit-to-fork, the viewer's next request (the turns it lists as sent, their count) and the chat's
gauge are read first, then a question is sent, and the request the recording model received
must carry exactly those turns and that many tokens. Were the viewer or the gauge to show
another branch than the one sent, the texts, the count or the figure would not match."""
import os
import re

import pytest
from playwright.sync_api import expect

from webapp.llm.tokens import estimate_messages

from tests.browser.test_branches_page import IDS, SIZES, finished
from tests.browser.test_chat_page import reply_with, send  # noqa: F401  (reply_with: a fixture)
from tests.fakes.scripted_model import ScriptedModel

ROLES = {"msg-user": "user", "msg-assistant": "assistant"}


@pytest.fixture
def quiet(live_app, monkeypatch):
    """Only replies reach the model: no titles, no memory tools, no distilling on the side."""
    for key in ("NIMBUS_MEMORY_TOOLS", "NIMBUS_MODEL_TITLES", "NIMBUS_MEMORY_DISTIL_ON_COMPRESS"):
        monkeypatch.setitem(live_app.config, key, False)


def shown_by_viewer(viewer, url) -> tuple[list[tuple[str, str]], int, int]:
    """The viewer's next request: the turns' messages it lists as sent, in order, how many
    earlier turns it says the model will read, and its token figure."""
    viewer.goto(url)
    messages = []
    for article in viewer.locator("article.turn").all():
        for item in article.locator(".sent .msg").all():
            kind = next(c for c in item.get_attribute("class").split() if c in ROLES)
            messages.append((ROLES[kind], item.locator(".text").inner_text().strip()))
    words = viewer.locator(".gauge-words").inner_text()
    turns = re.search(r"(\d+) earlier turns?", words)
    tokens = re.search(r"about ([\d,]+) tokens", words).group(1)
    return messages, int(turns.group(1)) if turns else 0, int(tokens.replace(",", ""))


def gauge_tokens(page) -> int:
    """The gauge's figure for the next request (read from its popover, left closed: open, it
    covers its own toggle on a phone)."""
    text = page.locator("#context-gauge .gauge-next-request").text_content()
    return int(re.search(r"about ([\d,]+) tokens", text).group(1).replace(",", ""))


def check_next_request(page, viewer, model, question, seq):
    """Read what the viewer and the gauge say the next request holds, send `question`, and hold
    them to what the model received."""
    conversation = re.search(r"/c/([0-9a-f]{32})", page.url).group(1)
    listed, turn_count, viewer_tokens = shown_by_viewer(viewer, f"/c/{conversation}/viewer")
    gauged = gauge_tokens(page)
    send(page, question, seq)
    received = model.requests[-1]
    assert received[-1] == {"role": "user", "content": question}
    history = [(m["role"], m["content"]) for m in received[:-1] if m["role"] != "system"]
    assert listed == history  # the turns the viewer lists as sent, word for word
    assert turn_count == sum(1 for role, _ in history if role == "user")
    before_question = estimate_messages(received[:-1])
    assert abs(gauged - before_question) <= 4, (gauged, before_question)
    assert abs(viewer_tokens - before_question) <= 4, (viewer_tokens, before_question)
    return history


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_viewer_and_gauge_say_what_the_model_receives_after_each_branch_change(
        new_page, reply_with, quiet, size):
    page = new_page(*size)
    page.goto("/")
    model = reply_with(ScriptedModel("First answer.", "Second answer.", "Porto too.",
                                     "After the switch.", "After the reload.", "Lisbon, yes.",
                                     "Both ways."))
    send(page, "Do you ship abroad?", 0)
    viewer = page.context.new_page()  # the same visitor, beside the chat

    finished(page, 0).hover()
    finished(page, 0).get_by_role("button", name="Ask again for a new answer").click()
    expect(finished(page, 0)).to_contain_text("Second answer.")
    assert check_next_request(page, viewer, model, "And to Porto?", 1) == [
        ("user", "Do you ship abroad?"), ("assistant", "Second answer.")]

    page.get_by_role("button", name="Previous answer, 1 of 2").click()
    expect(finished(page, 0)).to_contain_text("First answer.")
    expect(page.locator("#turn-2-question")).to_have_count(0)
    assert check_next_request(page, viewer, model, "What about returns?", 1) == [
        ("user", "Do you ship abroad?"), ("assistant", "First answer.")]

    page.reload()
    expect(page.get_by_role("group", name="Answer 1 of 2")).to_be_visible()
    assert check_next_request(page, viewer, model, "And refunds?", 2) == [
        ("user", "Do you ship abroad?"), ("assistant", "First answer."),
        ("user", "What about returns?"), ("assistant", "After the switch.")]

    page.locator("#turn-2-question").hover()
    page.get_by_role("button", name="Edit question 2").click()
    page.get_by_label("New wording of question 2").fill("Do you ship to Lisbon?")
    page.get_by_role("button", name="Send as a new version").click()
    expect(finished(page, 1)).to_contain_text("Lisbon, yes.")
    expect(page.locator("#turn-3-question")).to_have_count(0)  # refunds stay on the old branch
    assert check_next_request(page, viewer, model, "Both ways?", 2) == [
        ("user", "Do you ship abroad?"), ("assistant", "First answer."),
        ("user", "Do you ship to Lisbon?"), ("assistant", "Lisbon, yes.")]


def no_sideways_scroll(page) -> bool:
    return page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_a_kept_version_opens_as_sent_from_the_keyboard_and_compares_side_by_side(
        new_page, reply_with, quiet, artifacts, size):
    page = new_page(*size)
    page.goto("/")
    reply_with(ScriptedModel("Rome answer.", "Lisbon answer."))
    send(page, "Do you ship to Rome?", 0)
    page.locator("#turn-1-question").hover()
    page.get_by_role("button", name="Edit question 1").click()
    page.get_by_label("New wording of question 1").fill("Do you ship to Lisbon?")
    page.get_by_role("button", name="Send as a new version").click()
    expect(finished(page, 0)).to_contain_text("Lisbon answer.")
    conversation = re.search(r"/c/([0-9a-f]{32})", page.url).group(1)

    page.goto(f"/c/{conversation}/viewer")
    kept = page.locator("#turn-1 .alternatives")
    kept.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(kept).to_contain_text("alternative 1 of 2 — not sent")
    page.keyboard.press("Tab")
    expect(kept.get_by_role("link", name="view as sent")).to_be_focused()
    page.keyboard.press("Enter")
    shown = page.locator("#as-sent-1-v1")
    expect(shown).to_contain_text("Turn 1, alternative 1 of 2 — not sent now, as it was sent")
    expect(shown.locator(".sent-call")).to_contain_text("Do you ship to Rome?")
    expect(shown.locator(".sent-call")).not_to_contain_text("Lisbon")
    assert no_sideways_scroll(page)
    shown.screenshot(path=os.path.join(artifacts, f"viewer-kept-version-{size[0]}.png"))

    page.keyboard.press("Shift+Tab")  # back to "view as sent"; the compare link is next
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(kept.get_by_role("link", name="compare with the version sent")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name=re.compile("Compare two branches"))).to_be_visible()
    sent_side = page.get_by_role("region", name="Version 2 of 2 — shown, and sent from now on")
    kept_side = page.get_by_role("region", name="Version 1 of 2 — not sent")
    expect(sent_side.locator(".sent-call")).to_contain_text("Do you ship to Lisbon?")
    expect(kept_side.locator(".sent-call")).to_contain_text("Do you ship to Rome?")
    a, b = sent_side.bounding_box(), kept_side.bounding_box()
    if size[0] < 800:
        assert b["y"] >= a["y"] + a["height"] - 1  # stacked on a phone
    else:
        assert abs(a["y"] - b["y"]) < 2 and b["x"] > a["x"]  # side by side
    assert no_sideways_scroll(page)
    page.screenshot(path=os.path.join(artifacts, f"compare-branches-{size[0]}.png"), full_page=True)
