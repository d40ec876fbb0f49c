"""Context steering in a real browser, desktop and phone: the gauge follows each reply, the
trimming note appears once and matches the viewer, pin and leave-out change the next request,
and leaving out a summarized turn says its words may remain in the summary."""
import re

import pytest
from playwright.sync_api import expect

from webapp.extensions import db
from webapp.models import Conversation, Turn

from tests.browser.test_chat_page import send

DESKTOP, PHONE = (1280, 800), (390, 844)
SIZES = pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])


def conversation_id(page) -> str:
    return re.search(r"/c/([0-9a-f]{32})", page.url).group(1)


def set_settings(live_app, conversation, **settings):
    with live_app.app_context():
        row = db.session.get(Conversation, conversation)
        row.settings = {**(row.settings or {}), **settings}
        db.session.commit()
        db.session.remove()


def manifest(live_app, conversation, seq) -> dict:
    with live_app.app_context():
        turn = db.session.query(Turn).filter_by(conversation_id=conversation, seq=seq).one()
        found = turn.manifest
        db.session.remove()
        return found


def history_seqs(found: dict) -> list[int]:
    history = next(s for s in found["sections"] if s["name"] == "history")
    return [seq for seq, _, _ in history["turns"]]


def gauge_tokens(page, section: str) -> int:
    return int(page.locator(f'#context-gauge dd[data-section="{section}"]').text_content().replace(",", ""))


@SIZES
def test_the_gauge_updates_after_a_reply(new_page, size):
    page = new_page(*size)
    page.goto("/")
    send(page, "Can I get a refund for order #1043?", 0)
    gauge = page.locator("#context-gauge")
    expect(gauge).to_be_visible()
    gauge.locator("summary").click()
    expect(gauge.locator(".gauge-popover")).to_be_in_viewport()
    expect(gauge).to_contain_text("before your question")
    before = gauge_tokens(page, "history")
    send(page, "OK. What about my other order, 1042?", 1)
    expect(page.locator('#context-gauge dd[data-section="history"]')).not_to_have_text(f"{before:,}")
    assert gauge_tokens(page, "history") > before  # no reload: the done event swapped it
    expect(page.locator("#context-gauge")).to_contain_text("the provider counted")
    scroll = page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    assert scroll


@SIZES
def test_the_trimming_note_appears_once_and_matches_the_viewer(new_page, live_app, size):
    page = new_page(*size)
    page.goto("/")
    send(page, "My name is Dara and I live in Lisbon.", 0)
    conversation = conversation_id(page)
    set_settings(live_app, conversation, budget=300)
    questions = ["Can I get a refund for order #1043?", "OK. What about my other order, 1042?",
                 "Yes please.", "How long does shipping take?", "What is my name?"]
    for seq, question in enumerate(questions, 1):
        send(page, question, seq)
    notes = page.locator(".trim-note")
    expect(notes).to_have_count(1)
    text = notes.first.locator(".trim-note-text").inner_text()
    match = re.match(r"Turns 1–(\d+) are now summarized", text)
    assert match, text
    seq = int(notes.first.get_attribute("data-turn")) - 1
    sent = manifest(live_app, conversation, seq)
    summary = next(s for s in sent["sections"] if s["name"] == "summary")
    assert summary["through_seq"] + 1 == int(match.group(1))
    page.reload()
    expect(page.locator(".trim-note")).to_have_count(1)  # not repeated on reload
    with page.expect_navigation():
        page.locator(".trim-note a", has_text="View what was sent").click()
    expect(page.locator("body")).to_contain_text(f"Turn {seq + 1}")
    expect(page.locator("body")).to_contain_text("Rolling summary")


@SIZES
def test_pin_and_leave_out_change_the_next_request(new_page, live_app, size):
    page = new_page(*size)
    page.goto("/")
    for seq, question in enumerate(["Can I get a refund for order #1043?",
                                    "OK. What about my other order, 1042?", "Yes please."]):
        send(page, question, seq)
    conversation = conversation_id(page)
    set_settings(live_app, conversation, budget=250)  # turn 1 no longer fits
    page.locator("#turn-1-answer").hover()
    page.get_by_role("button", name="Keep turn 1 in context").click()
    expect(page.locator("#steer-0")).to_contain_text("Kept in context")
    page.locator("#turn-2-answer").hover()
    page.get_by_role("button", name="Leave out turn 2").click()
    expect(page.locator("#steer-1")).to_contain_text("Left out")

    page.goto(f"/c/{conversation}/viewer")
    expect(page.locator('[data-turn="1"]')).to_have_attribute("data-fate", "PINNED")
    expect(page.locator('[data-turn="2"]')).to_have_attribute("data-fate", "EXCLUDED")
    page.goto(f"/c/{conversation}")
    send(page, "Thanks", 3)
    assert history_seqs(manifest(live_app, conversation, 3))[:1] == [0]
    assert 1 not in history_seqs(manifest(live_app, conversation, 3))
    page.goto(f"/c/{conversation}/viewer/turns/4/sent")
    body = page.locator("body")
    expect(body).to_contain_text("Can I get a refund for order #1043?")
    expect(body).not_to_contain_text("OK. What about my other order, 1042?")


@SIZES
def test_summarize_up_to_here_and_an_edited_summary_reach_the_next_request(new_page, live_app,
                                                                            size):
    page = new_page(*size)
    page.goto("/")
    for seq, question in enumerate(["Can I get a refund for order #1043?",
                                    "OK. What about my other order, 1042?", "Yes please."]):
        send(page, question, seq)
    conversation = conversation_id(page)
    page.locator("#turn-2-answer").hover()
    with page.expect_navigation():
        page.get_by_role("button", name="Summarize up to turn 2").click()
    expect(page.locator("#summary-panel")).to_contain_text("Covers turns 1–2")
    page.get_by_label("The summary the model receives").fill("User: order 1043 is too old; 1042 refunded.")
    page.get_by_role("button", name="Save the summary").click()
    expect(page.locator("#summary-panel")).to_contain_text("edited by hand")
    page.goto(f"/c/{conversation}")
    send(page, "Thanks", 3)
    sent = manifest(live_app, conversation, 3)
    assert history_seqs(sent) == [2]
    page.goto(f"/c/{conversation}/viewer/turns/4/sent")
    expect(page.locator("body")).to_contain_text("User: order 1043 is too old; 1042 refunded.")
    page.goto(f"/c/{conversation}/viewer")
    expect(page.locator("body")).to_contain_text("The rolling summary was edited by hand")


def test_a_failed_fold_keeps_the_old_summary_and_says_so(page, live_app, monkeypatch):
    from webapp.llm.base import ProviderError
    from tests.fakes.scripted_model import ScriptedModel
    page.goto("/")
    for seq, question in enumerate(["Can I get a refund for order #1043?",
                                    "OK. What about my other order, 1042?", "Yes please."]):
        send(page, question, seq)
    conversation = conversation_id(page)
    page.locator("#turn-1-answer").hover()
    with page.expect_navigation():
        page.get_by_role("button", name="Summarize up to turn 1").click()
    expect(page.locator("#summary-panel")).to_contain_text("Covers turns 1–1")
    good = page.locator("#summary-text").input_value()
    failing = ScriptedModel(*[ProviderError("provider down")] * 50)
    monkeypatch.setitem(live_app.extensions, "provider_factory", lambda config: failing)
    page.goto(f"/c/{conversation}")
    page.locator("#turn-3-answer").hover()
    with page.expect_navigation():
        page.get_by_role("button", name="Summarize up to turn 3").click()
    expect(page.locator(".summary-failed")).to_contain_text("provider down")
    expect(page.locator("#summary-panel")).to_contain_text("Covers turns 1–1")
    assert page.locator("#summary-text").input_value() == good
    page.goto(f"/c/{conversation}/viewer")
    expect(page.locator(".summary-failed")).to_contain_text("The last summary fold failed")


def test_leaving_out_a_summarized_turn_says_its_words_may_remain_and_leads_to_the_summary(page):
    page.goto("/")
    for seq, question in enumerate(["My name is Dara and I live in Lisbon.",
                                    "Can I get a refund for order #1043?", "Yes please."]):
        send(page, question, seq)
    page.locator("#turn-2-answer").hover()
    with page.expect_navigation():
        page.get_by_role("button", name="Summarize up to turn 2").click()
    expect(page.locator("#summary-panel")).to_contain_text("Covers turns 1–2")
    page.get_by_role("link", name="Back to the conversation").click()
    page.locator("#turn-1-answer").hover()
    page.get_by_role("button", name="Leave out turn 1").click()
    steer = page.locator("#steer-0")
    expect(steer).to_contain_text("Left out")
    expect(steer).to_contain_text("by you — its words may remain in the summary")
    expect(steer.get_by_role("link", name="edit the summary")).to_be_visible()
    steer.get_by_role("link", name="edit the summary").click()
    expect(page.locator("#summary-panel")).to_contain_text("Left out within its reach: turn 1")
    expect(page.get_by_label("The summary the model receives")).to_contain_text("Lisbon")
