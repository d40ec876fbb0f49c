"""Thumbs up or down on an answer: kept with the turn, the owner's only, listed for the shop's staff."""
import pytest

from webapp.extensions import db
from webapp.models import Turn
from webapp.storage import get_turn
from webapp.transfer import export_conversation
from webapp.transfer.formats import import_conversation

from .accounts_support import make_account, refused, sign_in
from .support import ask, guest_user
from .viewer_support import refund_conversation

HTMX = {"HX-Request": "true"}


@pytest.fixture
def conversation(guest):
    return refund_conversation(guest_user(guest))


def rate(client, conversation, seq, rating, comment=None, headers=HTMX):
    data = {"rating": rating} if comment is None else {"rating": rating, "comment": comment}
    return client.post(f"/c/{conversation.id}/turns/{seq}/feedback", data=data, headers=headers)


def stored(conversation, seq) -> Turn:
    db.session.expire_all()
    return get_turn(conversation, seq)


def test_a_thumbs_up_is_kept_with_the_turn_and_can_be_taken_back(guest, conversation):
    response = rate(guest, conversation, 1, "up")
    assert response.status_code == 200 and 'aria-pressed="true"' in response.text
    assert stored(conversation, 1).feedback == "up" and stored(conversation, 1).feedback_at
    assert 'data-feedback="up"' in guest.get(f"/c/{conversation.id}").text
    rate(guest, conversation, 1, "none")
    assert stored(conversation, 1).feedback is None and stored(conversation, 1).feedback_at is None


def test_a_thumbs_down_asks_once_for_an_optional_comment(guest, conversation):
    response = rate(guest, conversation, 0, "down")
    assert 'name="comment"' in response.text and stored(conversation, 0).feedback == "down"
    response = rate(guest, conversation, 0, "down", "  The refund   window is wrong ")
    assert 'name="comment"' not in response.text and "Thanks" in response.text
    assert stored(conversation, 0).feedback_comment == "The refund window is wrong"
    rate(guest, conversation, 0, "up")
    assert stored(conversation, 0).feedback_comment == ""  # a comment belongs to a down


@pytest.mark.parametrize("rating, comment, status", [("great", None, 422), ("", None, 422),
                                                     ("down", "x" * 501, 422)])
def test_odd_feedback_is_refused_and_stores_nothing(guest, conversation, rating, comment, status):
    assert rate(guest, conversation, 0, rating, comment).status_code == status
    assert stored(conversation, 0).feedback is None


def test_feedback_on_a_missing_turn_or_someone_elses_conversation_is_404(client, guest, conversation):
    assert rate(guest, conversation, 99, "up").status_code == 404
    assert rate(guest, conversation, 2**40, "up").status_code == 404
    other = make_account("other@example.com")
    _, theirs, _ = ask(other, "Where is my order #1041?")
    assert rate(guest, theirs, 0, "up").status_code == 404
    assert stored(theirs, 0).feedback is None


def test_without_csrf_feedback_is_refused(guest, conversation):
    del guest.environ_base["HTTP_X_CSRFTOKEN"]
    assert rate(guest, conversation, 0, "up").status_code == 400
    assert stored(conversation, 0).feedback is None


def test_a_plain_form_post_comes_back_to_the_answer(guest, conversation):
    response = rate(guest, conversation, 2, "up", headers={})
    assert response.status_code == 303 and response.location.endswith(f"/c/{conversation.id}#turn-3-answer")


def test_a_comment_sent_before_htmx_takes_the_form_over_still_arrives(guest, conversation):
    form = rate(guest, conversation, 0, "down").text
    assert 'method="post"' in form and 'name="csrf_token"' in form
    response = rate(guest, conversation, 0, "down", "Too short", headers={})
    assert response.status_code == 303 and stored(conversation, 0).feedback_comment == "Too short"


def test_staff_see_the_tenants_feedback_and_nobody_elses(app, guest, conversation):
    rate(guest, conversation, 0, "down")
    rate(guest, conversation, 0, "down", "Wrong window")
    make_account("staff@example.com", "staff")
    make_account("rival@example.com", "staff", tenant="rival")
    staff = app.test_client()
    sign_in(staff, "staff@example.com")
    listed = staff.get("/staff/feedback").text
    assert "Bad answer" in listed and "Wrong window" in listed and conversation.title in listed
    assert "Wrong window" in staff.get(f"/staff/c/{conversation.id}").text
    rival = app.test_client()
    sign_in(rival, "rival@example.com")
    assert "Wrong window" not in rival.get("/staff/feedback").text
    assert refused(guest.get("/staff/feedback"))


def test_feedback_travels_in_the_json_export_and_back(guest, conversation):
    rate(guest, conversation, 0, "down")
    rate(guest, conversation, 0, "down", "Wrong window")
    rate(guest, conversation, 1, "up")
    exported = guest.get(f"/c/{conversation.id}/export/nimbus").json
    assert [t["feedback"] for t in exported["turns"]] == ["down", "up", None]
    assert exported["turns"][0]["feedback_comment"] == "Wrong window" and exported["version"] == 5
    copy = import_conversation(export_conversation(conversation), guest_user(guest))
    assert (get_turn(copy, 0).feedback, get_turn(copy, 0).feedback_comment) == ("down", "Wrong window")
    assert get_turn(copy, 1).feedback == "up" and get_turn(copy, 2).feedback is None


def test_feedback_cannot_be_given_in_a_flood(app, guest, conversation):
    app.config["NIMBUS_RATE_LIMIT_ENABLED"] = True
    answers = [rate(guest, conversation, 0, "up" if i % 2 else "down").status_code
               for i in range(32)]
    assert set(answers[:30]) == {200} and answers[30] == 429
