"""Long conversations on the chat page: newest page first, older ones on scrolling up, deep links,
search hits that lead to their turn, a second tab, the not-found page."""
import re

import pytest

from webapp.chat.rendering import snippet
from webapp.extensions import db
from webapp.models import Conversation
from webapp.storage import create_conversation, start_turn

from .accounts_support import make_account, sign_in
from .support import ask, guest_user, sse_events
from .fakes.history import fill_conversation
from .test_chat import start


@pytest.fixture
def long_chat(app, guest):
    """A guest's conversation of 12 answered turns, shown 5 to a page."""
    app.config["NIMBUS_CHAT_PAGE_TURNS"] = 5
    conversation = create_conversation(guest_user(guest), "Long chat")
    fill_conversation(conversation, 12)
    return conversation.id


def shown(html: str) -> list[int]:
    """The turns a page shows, as seq (its anchors count turns from 1, as people do)."""
    return [int(n) - 1 for n in re.findall(r'id="turn-(\d+)-question"', html)]


def test_a_long_conversation_opens_on_its_newest_page(guest, long_chat):
    page = guest.get(f"/c/{long_chat}").text
    assert shown(page) == [7, 8, 9, 10, 11]
    assert f'hx-get="/c/{long_chat}/turns?before=7"' in page and "intersect once" in page


def test_older_turns_load_a_page_at_a_time_until_the_first(guest, long_chat):
    older = guest.get(f"/c/{long_chat}/turns?before=7").text
    assert shown(older) == [2, 3, 4, 5, 6] and "turns?before=2" in older
    first = guest.get(f"/c/{long_chat}/turns?before=2").text
    assert shown(first) == [0, 1] and "load-more" not in first


def test_a_deep_link_opens_the_page_around_its_turn(guest, long_chat):
    page = guest.get(f"/c/{long_chat}?at=4").text  # turn 4, the anchor #turn-4-question
    assert shown(page) == [1, 2, 3, 4, 5]
    assert "turns?before=1" in page and "turns?after=5" in page
    newer = guest.get(f"/c/{long_chat}/turns?after=5").text
    assert shown(newer) == [6, 7, 8, 9, 10] and "turns?after=10" in newer


@pytest.mark.parametrize("query", ["before=-1", "before=x", f"before={2**63}", "after=-2",
                                   "before=1&after=1", ""])
def test_turn_numbers_out_of_range_are_refused_in_words(guest, long_chat, query):
    response = guest.get(f"/c/{long_chat}/turns?{query}")
    assert response.status_code == 400 and "error-message" in response.text


@pytest.mark.parametrize("at", ["-4", "0", "abc", str(2**64)])
def test_a_bad_deep_link_number_opens_the_newest_page(guest, long_chat, at):
    response = guest.get(f"/c/{long_chat}?at={at}")
    assert response.status_code == 200 and shown(response.text) == [7, 8, 9, 10, 11]


def test_another_tabs_new_turns_load_after_the_last_one_shown(guest, long_chat):
    conversation = db.session.get(Conversation, long_chat)
    start_turn(conversation, "Sent from another tab")
    newer = guest.get(f"/c/{long_chat}/turns?after=11").text
    assert shown(newer) == [12] and "Sent from another tab" in newer
    assert 'sse-connect="/c/%s/turns/12/stream"' % long_chat in newer and "button--stop" in newer
    assert guest.get(f"/c/{long_chat}/turns?after=12").text.strip() == ""


def test_a_send_refused_while_another_tab_waits_shows_that_reply_and_stop(guest):
    conversation_id, _ = start(guest, "Hello")  # its reply was never streamed: still pending
    response = guest.post(f"/c/{conversation_id}/messages",
                          data={"message": "Are you there?", "last_seen": "-1"})
    assert response.status_code == 409 and "still answering" in response.text
    assert 'hx-swap-oob="beforeend:#messages"' in response.text
    assert 'id="turn-1-question"' in response.text and "button--stop" in response.text


def test_a_tab_that_missed_turns_reloads_the_conversation_when_it_sends(app, guest, long_chat):
    response = guest.post(f"/c/{long_chat}/messages", data={"message": "Hi", "last_seen": "9"})
    assert response.headers["HX-Redirect"] == f"/c/{long_chat}"
    current = guest.post(f"/c/{long_chat}/turns/12/stop")  # the turn was stored all the same
    assert current.status_code == 200


@pytest.mark.parametrize("path, heading", [("/c/" + "0" * 32, "This conversation isn't here"),
                                           ("/no-such-page", "This page doesn't exist")])
def test_a_missing_page_says_so_and_leads_back(client, path, heading):
    make_account("pat@example.com")
    sign_in(client, "pat@example.com")  # a guest is asked to sign in: tests/test_sign_in_offers.py
    response = client.get(path)
    assert response.status_code == 404 and heading in response.text
    assert '<a class="button button--primary" href="/">Back to your conversations</a>' in response.text


def test_a_missing_conversation_asked_by_htmx_is_a_short_answer(guest):
    response = guest.get("/c/" + "0" * 32, headers={"HX-Request": "true"})
    assert response.status_code == 404 and "<html" not in response.text


def test_the_first_message_names_the_conversation_and_the_tab_briefly(guest):
    conversation_id, response = start(guest, "Can I get a refund for order #1043?")
    assert "<title>Refund for order #1043 · Nimbus</title>" in response.text
    assert "<title>Refund for order #1043 · Nimbus</title>" in guest.get(f"/c/{conversation_id}").text


def test_answers_offer_copy_regenerate_and_questions_edit_with_times(guest):
    conversation_id, _ = start(guest, "Hello")
    assert "event: done" in guest.get(f"/c/{conversation_id}/turns/0/stream").text
    db.session.rollback()  # the reply was saved through the run's session
    page = guest.get(f"/c/{conversation_id}").text
    assert "action-copy" in page and "action-edit" in page
    assert f'hx-post="/c/{conversation_id}/turns/0/regenerate"' in page  # the old answer is kept
    assert f'action="/c/{conversation_id}/turns/0/edit"' in page  # an edit forks the turn
    assert re.search(r'<time class="message-time" datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00"', page)


def test_a_finished_answer_is_announced(guest):
    conversation_id, _ = start(guest, "Hello")
    done = sse_events(guest.get(f"/c/{conversation_id}/turns/0/stream").text)[-1][1]
    assert 'hx-swap-oob="innerHTML:#announcer">Nimbus answered: Hi!' in done


def test_search_results_show_a_snippet_with_the_match_marked_and_link_to_the_turn(guest):
    _, conversation, _ = ask(guest_user(guest), "Where is my order #1041?")
    results = guest.get("/search?q=rain+jacket", headers={"HX-Request": "true"}).text
    assert "<mark>Rain</mark> <mark>jacket</mark>" in results
    assert f'href="/c/{conversation.id}?at=1#turn-1-question"' in results


def test_a_snippet_escapes_what_it_shows():
    assert str(snippet(["<b>refund</b> please"], "refund")) == "&lt;b&gt;<mark>refund</mark>&lt;/b&gt; please"
