"""A reply streams as formatted Markdown: no DOM state of the bubble ever shows raw syntax, and the
bubble does not jump when the finished answer replaces it; on a desktop and a phone."""
import pytest
from playwright.sync_api import expect

from tests.browser.test_chat_page import reply_with  # noqa: F401  (a fixture)
from tests.fakes.paced_model import PacedModel

REPLY = ("Here are your orders:\n\n- **#1044** Wool socks, shipped on Monday\n- **#1045** Rain "
         "jacket, paid and waiting\n\nUse the `orders` page to see them all, or read [the help "
         "center](https://example.com/help) for returns.\n\nAnything else?")
WATCH = """() => {
  window.seen = [];
  const record = () => {
    const text = document.querySelector('#turn-1-answer.is-streaming .streamed-text');
    if (text) window.seen.push({text: text.innerText, height: text.getBoundingClientRect().height});
  };
  new MutationObserver(record).observe(document.body,
                                       {childList: true, subtree: true, characterData: true});
}"""
RAW = ["**", "`", "](", "\n- ", "[the help"]


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_a_streamed_reply_never_shows_raw_markdown_and_does_not_jump(new_page, reply_with, size):
    reply_with(PacedModel(REPLY, delay=0.04))
    page = new_page(*size)
    page.goto("/")
    page.evaluate(WATCH)
    page.get_by_label("Message Nimbus").fill("What are my orders?")
    page.get_by_label("Message Nimbus").press("Enter")
    expect(page.locator("#turn-1-answer:not(.is-streaming)")).to_be_visible()
    seen = page.evaluate("window.seen")
    states = [s["text"] for s in seen if s["text"].strip()]
    assert len(states) > 5, "the reply streamed in many steps"
    for text in states:
        assert not any(mark in "\n" + text for mark in RAW), text
    assert "#1045 Rain jacket" in states[-1]
    final = page.locator("#turn-1-answer .markdown").first
    expect(final.locator("strong").first).to_have_text("#1044")
    last = [s["height"] for s in seen if s["text"].strip()][-1]
    assert abs(final.bounding_box()["height"] - last) <= 24, (last, final.bounding_box())
