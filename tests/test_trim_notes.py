"""The chat's quiet notes where a reply's request started sending less: once, at that reply,
the same facts as the viewer's fates, and off with a setting."""
import re

import pytest

from webapp.chat.trim_notes import note_between, turns_named
from webapp.extensions import db

from .support import ask, guest_user, sse_events
from .viewer_support import summarized_conversation

NOTE = re.compile(r'<aside class="trim-note" id="trim-note-(\d+)" data-turn="(\d+)">\s*'
                  r'<span class="trim-note-text">(.*?)</span>', re.S)
TAG = re.compile(r"<[^>]+>")


def notes(html: str) -> list[tuple[str, str]]:
    """(turn number, the note as a reader sees it) of every trimming note on the page."""
    return [(number, TAG.sub("", text)) for _, number, text in NOTE.findall(html)]


@pytest.fixture
def conversation(guest):
    return summarized_conversation(guest_user(guest))


def test_the_note_appears_once_where_turns_fell_into_the_summary(guest, conversation):
    page = guest.get(f"/c/{conversation.id}").text
    assert notes(page) == [("6", "Turns 1–4 are now summarized")]
    assert page.index('id="trim-note-5"') < page.index('id="turn-6-question"')
    assert f'href="/c/{conversation.id}/viewer/turns/6/sent"' in page
    assert notes(guest.get(f"/c/{conversation.id}").text) == notes(page)  # the same on reload


def test_the_note_says_what_the_viewer_says(guest, conversation):
    sent = guest.get(f"/c/{conversation.id}/viewer/turns/6/sent.json").json["manifest"]
    summary = next(s for s in sent["sections"] if s["name"] == "summary")
    assert summary["through_seq"] == 3  # turns 1–4
    assert sent["older"][0] == "SUMMARIZED"


def test_a_note_can_be_turned_off(guest, conversation):
    assert guest.post("/account/trim-notes", data={"show": "0"}).status_code == 303
    assert notes(guest.get(f"/c/{conversation.id}").text) == []
    guest.post("/account/trim-notes", data={"show": "1"})
    assert len(notes(guest.get(f"/c/{conversation.id}").text)) == 1


def test_dropped_turns_are_named(guest):
    user = guest_user(guest)
    _, conversation, _ = ask(user, "Can I get a refund for order #1043?")
    conversation.strategy, conversation.settings = "window", {"recent_turns": 2}
    db.session.commit()
    for question in ("What about 1042?", "Yes please.", "Thanks", "Bye"):
        ask(user, question, conversation)
    assert notes(guest.get(f"/c/{conversation.id}").text) == [("4", "Turn 1 dropped"),
                                                              ("5", "Turn 2 dropped")]


def test_each_turn_a_note_names_links_to_that_turn_in_the_chat(guest):
    user = guest_user(guest)
    _, conversation, _ = ask(user, "Can I get a refund for order #1043?")
    conversation.strategy, conversation.settings = "window", {"recent_turns": 2}
    db.session.commit()
    for question in ("What about 1042?", "Yes please.", "Thanks"):
        ask(user, question, conversation)
    page = guest.get(f"/c/{conversation.id}").text
    link = f'<a class="trim-note-turn" href="/c/{conversation.id}?at=1#turn-1-question">1</a>'
    assert f"Turn {link} dropped" in page


def test_turn_numbers_are_written_as_a_person_writes_them():
    assert turns_named([4]) == "Turn 5"
    assert turns_named([0, 1, 2, 3]) == "Turns 1–4"
    assert turns_named([2, 6]) == "Turns 3 and 7"
    assert turns_named([2, 4, 6, 7, 8]) == "Turns 3, 5 and 7–9"


def test_a_later_fold_names_only_the_turns_it_added(guest, conversation):
    user = guest_user(guest)
    for question in ("Where is my order #1041?", "What is your returns policy?",
                     "Thanks, and order #1045?", "How long does shipping take?"):
        ask(user, question, conversation)
    texts = [text for _, text in notes(guest.get(f"/c/{conversation.id}").text)]
    summarized = [t for t in texts if "summarized" in t]
    assert summarized[0] == "Turns 1–4 are now summarized"
    assert len(summarized) == len(set(summarized)), "a change is noted once, where it happened"
    assert all(not t.startswith("Turns 1–") for t in summarized[1:]), summarized


def test_a_pin_that_no_longer_fits_is_named(guest):
    user = guest_user(guest)
    _, conversation, _ = ask(user, "Can I get a refund for order #1043?")
    ask(user, "What about 1042?", conversation)
    guest.post(f"/c/{conversation.id}/turns/0/mark", data={"mark": "pinned"})
    ask(user, "Yes please.", conversation)
    conversation.settings = {"budget": 10}
    db.session.commit()
    ask(user, "Thanks", conversation)
    texts = [text for _, text in notes(guest.get(f"/c/{conversation.id}").text)]
    assert any("pinned turn 1 no longer fits" in t for t in texts)


def test_a_left_out_turn_makes_no_note(guest):
    user = guest_user(guest)
    _, conversation, _ = ask(user, "Can I get a refund for order #1043?")
    ask(user, "What about 1042?", conversation)
    guest.post(f"/c/{conversation.id}/turns/0/mark", data={"mark": "excluded"})
    ask(user, "Thanks", conversation)
    assert notes(guest.get(f"/c/{conversation.id}").text) == []


def test_the_done_event_carries_the_note(guest, conversation):
    stream = guest.get(f"/c/{conversation.id}/turns/5/stream").text
    done = dict(sse_events(stream))["done"]
    assert 'hx-swap-oob="beforebegin:#turn-6-question"' in done
    assert "Turns 1–4 are now summarized" in TAG.sub("", done)


def test_no_note_without_a_previous_manifest():
    manifest = {"sections": [{"name": "history", "turns": []}], "fates": [], "older": None}
    assert note_between(None, manifest, 1) is None
    assert note_between(manifest, manifest, 1) is None
