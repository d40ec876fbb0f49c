"""Regenerate, edit and switch in the chat: the old version is kept and offered as "< 1/2 >",
the page shows the chosen branch after a reload, and only the owner may do any of it."""
import re

import pytest

from webapp import branches
from webapp.extensions import db
from webapp.models import Conversation

from .support import guest_user, sse_events, wait_for_replies
from .test_chat import start


def conversation_of(guest) -> Conversation:
    return db.session.scalar(db.select(Conversation).where(
        Conversation.user_id == guest_user(guest).id))


def finish(guest, conversation, seq):
    body = guest.get(f"/c/{conversation.id}/turns/{seq}/stream").text
    assert sse_events(body)[-1][0] == "done"
    return body


@pytest.fixture
def chat(guest):
    start(guest, "How long does shipping take?")
    conversation = conversation_of(guest)
    finish(guest, conversation, 0)
    return conversation


def test_regenerate_keeps_the_old_answer_as_one_of_two(guest, chat):
    old = chat.turns[0].answer
    response = guest.post(f"/c/{chat.id}/turns/0/regenerate", headers={"HX-Request": "true"})
    assert response.status_code == 200 and 'id="conversation"' in response.text
    assert "sse-connect" in response.text  # the new answer streams into the same turn
    done = finish(guest, chat, 0)
    assert 'aria-label="Previous answer, 1 of 2"' in done
    page = guest.get(f"/c/{chat.id}").text  # after a reload
    assert ">2/2<" in page and 'aria-label="Previous answer, 1 of 2"' in page
    assert len(re.findall(r'id="turn-\d+-answer"', page)) == 1
    guest.post(f"/c/{chat.id}/turns/0/versions/1", headers={"HX-Request": "true"})
    page = guest.get(f"/c/{chat.id}").text
    assert ">1/2<" in page and 'aria-label="Next answer, 2 of 2"' in page and old in page


def test_edit_forks_and_the_old_question_is_a_version(guest, chat):
    response = guest.post(f"/c/{chat.id}/turns/0/edit", data={"message": "Do you ship to Lisbon?"},
                          headers={"HX-Request": "true"})
    assert response.status_code == 200 and "Do you ship to Lisbon?" in response.text
    finish(guest, chat, 0)
    page = guest.get(f"/c/{chat.id}").text
    assert "Do you ship to Lisbon?" in page and "How long does shipping take?" not in page
    assert 'aria-label="Previous version, 1 of 2"' in page


def test_a_plain_form_switch_comes_back_to_the_turn(guest, chat):
    guest.post(f"/c/{chat.id}/turns/0/regenerate", headers={"HX-Request": "true"})
    finish(guest, chat, 0)
    response = guest.post(f"/c/{chat.id}/turns/0/versions/1")
    assert response.status_code == 303 and response.location.endswith("#turn-1-question")


def test_switching_while_a_reply_is_written_is_refused_in_words(app, guest, chat):
    guest.post(f"/c/{chat.id}/turns/0/regenerate", headers={"HX-Request": "true"})
    finish(guest, chat, 0)
    guest.post(f"/c/{chat.id}/messages", data={"message": "And to Porto?"},
               headers={"HX-Request": "true"})
    response = guest.post(f"/c/{chat.id}/turns/0/versions/1", headers={"HX-Request": "true"})
    assert response.status_code == 409 and "still answering" in response.text
    wait_for_replies(app)


@pytest.mark.parametrize("path", ["turns/0/regenerate", "turns/0/edit", "turns/0/versions/1"])
def test_someone_elses_turn_cannot_be_branched(app, guest, sam, path):
    from .support import ask
    _, conversation, _ = ask(sam, "Hello")
    response = guest.post(f"/c/{conversation.id}/{path}", data={"message": "Hi"})
    assert response.status_code == 404


@pytest.mark.parametrize("path", ["turns/9/regenerate", "turns/0/versions/7",
                                  f"turns/{2**40}/versions/1"])
def test_a_missing_turn_or_version_is_refused_not_a_500(guest, chat, path):
    response = guest.post(f"/c/{chat.id}/{path}", headers={"HX-Request": "true"})
    assert response.status_code == 404


def test_branching_needs_the_csrf_token(app, guest, chat):
    app.config["WTF_CSRF_ENABLED"] = True
    del guest.environ_base["HTTP_X_CSRFTOKEN"]
    response = guest.post(f"/c/{chat.id}/turns/0/regenerate")
    assert response.status_code == 400
    assert not branches.versions(chat.id)



def test_the_viewer_shows_kept_versions_as_not_sent(guest, chat):
    old = chat.turns[0].answer
    guest.post(f"/c/{chat.id}/turns/0/regenerate", headers={"HX-Request": "true"})
    finish(guest, chat, 0)
    page = guest.get(f"/c/{chat.id}/viewer").text
    assert "alternative 1 of 2 — not sent" in page and "1 other version of this turn" in page
    shown = page[page.index('class="alternatives"'):]
    assert "Shipping times" in old and "Shipping times" in shown


def test_turns_that_come_back_get_their_search_vectors_again(app, guest, chat):
    from webapp.memories.models import TurnVector
    from webapp.models import Turn
    app.config["NIMBUS_MEMORY_SEARCH"] = True
    guest.post(f"/c/{chat.id}/turns/0/regenerate", headers={"HX-Request": "true"})
    finish(guest, chat, 0)
    guest.post(f"/c/{chat.id}/turns/0/versions/1", headers={"HX-Request": "true"})
    turn = db.session.scalar(db.select(Turn).where(Turn.conversation_id == chat.id))
    assert db.session.get(TurnVector, turn.id) is not None
