"""A message the model cannot read at once is refused before anything is stored or sent, with the
sizes in words; it never poisons the next turn, and a window too small for any message says so."""
from webapp.models import Turn
from webapp.extensions import db

from .support import ask, guest_user

PASTE = "The parcel arrived damaged and the box was open when it came. " * 110  # ~6,800 chars


def turns(conversation) -> int:
    return db.session.query(Turn).filter_by(conversation_id=conversation.id).count()


def test_a_paste_longer_than_the_window_is_refused_before_it_is_stored(app, guest):
    _, conversation, _ = ask(guest_user(guest), "Where is my order #1041?")
    app.config["NIMBUS_CONTEXT_WINDOW"] = 2048
    response = guest.post(f"/c/{conversation.id}/messages", data={"message": PASTE},
                          headers={"HX-Request": "true"})
    assert response.status_code == 422
    assert "This message is about 1," in response.text and "reads 2,048 at once" in response.text
    assert "shorten it" in response.text
    assert turns(conversation) == 1, "nothing stored, so the next message is not poisoned"
    short = guest.post(f"/c/{conversation.id}/messages", data={"message": "Thanks!"},
                       headers={"HX-Request": "true"})
    assert short.status_code == 200 and turns(conversation) == 2


def test_a_new_conversation_is_checked_too(app, guest):
    app.config["NIMBUS_CONTEXT_WINDOW"] = 2048
    response = guest.post("/messages", data={"message": PASTE}, headers={"HX-Request": "true"})
    assert response.status_code == 422 and "reads 2,048 at once" in response.text


def test_a_window_too_small_for_any_message_names_the_fix(app, guest):
    app.config["NIMBUS_CONTEXT_WINDOW"] = 384  # the system prompt and the reply's room fill it
    response = guest.post("/messages", data={"message": "Hello"}, headers={"HX-Request": "true"})
    assert response.status_code == 422
    assert "so no message fits" in response.text and "-c 4096" in response.text


def test_without_a_known_window_nothing_is_refused_for_size(app, guest):
    response = guest.post("/messages", data={"message": PASTE}, headers={"HX-Request": "true"})
    assert response.status_code == 200
