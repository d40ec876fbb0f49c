"""Alternatives and forks in a real browser, on a desktop and a phone: regenerate keeps the old
answer as "1 of 2", switching and editing change the branch, a reload keeps the choice, and the
model is sent exactly the branch shown."""
import pytest
from playwright.sync_api import expect

from tests.browser.test_chat_page import reply_with, send  # noqa: F401  (reply_with: a fixture)
from tests.fakes.scripted_model import ScriptedModel

SIZES = [(1280, 800), (390, 844)]
IDS = ["desktop", "phone"]


def sent(model, question):
    """The conversation the model received with `question`: (role, text) without the system."""
    request = next(r for r in reversed(model.requests) if r[-1].get("content") == question)
    return [(m["role"], m["content"]) for m in request if m["role"] != "system"]


def finished(page, seq):
    return page.locator(f"#turn-{seq + 1}-answer:not(.is-streaming)")


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_regenerate_switch_edit_and_reload_send_the_branch_shown(new_page, reply_with, size):
    page = new_page(*size)
    page.goto("/")
    model = reply_with(ScriptedModel("First answer.", "Second answer.", "Porto too.",
                                     "Lisbon, yes.", "Both ways."))
    send(page, "Do you ship abroad?", 0)

    finished(page, 0).hover()
    finished(page, 0).get_by_role("button", name="Ask again for a new answer").click()
    expect(finished(page, 0)).to_contain_text("Second answer.")
    expect(page.get_by_role("group", name="Answer 2 of 2")).to_be_visible()
    send(page, "And to Porto?", 1)
    assert sent(model, "And to Porto?") == [
        ("user", "Do you ship abroad?"), ("assistant", "Second answer."), ("user", "And to Porto?")]

    previous = page.get_by_role("button", name="Previous answer, 1 of 2")
    if size[0] < 800:
        box = previous.bounding_box()
        assert box["width"] >= 44 and box["height"] >= 44
    previous.click()
    expect(finished(page, 0)).to_contain_text("First answer.")
    expect(page.locator("#turn-2-question")).to_have_count(0)  # Porto belongs to the other branch
    page.reload()
    expect(page.get_by_role("group", name="Answer 1 of 2")).to_be_visible()
    expect(finished(page, 0)).to_contain_text("First answer.")

    page.locator("#turn-1-question").hover()
    page.get_by_role("button", name="Edit question 1").click()
    page.get_by_label("New wording of question 1").fill("Do you ship to Lisbon?")
    page.get_by_role("button", name="Send as a new version").click()
    expect(finished(page, 0)).to_contain_text("Lisbon, yes.")
    assert sent(model, "Do you ship to Lisbon?") == [("user", "Do you ship to Lisbon?")]
    page.reload()
    expect(page.get_by_role("group", name="Version 3 of 3")).to_be_visible()

    page.get_by_role("button", name="Previous version, 2 of 3").click()
    expect(page.locator("#turn-2-question")).to_contain_text("And to Porto?")
    send(page, "Thanks!", 2)
    assert sent(model, "Thanks!") == [
        ("user", "Do you ship abroad?"), ("assistant", "Second answer."), ("user", "And to Porto?"),
        ("assistant", "Porto too."), ("user", "Thanks!")]
