"""The viewer on turns that made no request here (imported) and memories whose source is gone."""

from webapp.extensions import db
from webapp.models import Conversation, utcnow

from .support import ask, guest_user
from .test_transfer_views import DATA, upload


def imported(guest) -> Conversation:
    assert upload(guest, DATA / "openai_messages.json").status_code == 200
    return db.session.query(Conversation).filter_by(user_id=guest_user(guest).id).one()


def test_an_imported_turn_says_it_made_no_request(guest):
    conversation = imported(guest)
    html = guest.get(f"/c/{conversation.id}/viewer").text
    assert "imported · no request" in html
    assert "0 prompt tokens over" not in html and "1 model call (estimated)" not in html


def test_imported_turns_are_left_out_of_the_cost_chart(guest):
    conversation = imported(guest)
    html = guest.get(f"/c/{conversation.id}/viewer").text
    assert "left out of the chart" in html and 'class="dot-sent"' not in html
    ask(guest_user(guest), "How long does shipping take?", conversation)
    data = guest.get(f"/c/{conversation.id}/viewer").text
    assert data.count('class="dot-sent"') == 2  # one dot per panel: the only turn asked here
    assert "turn 1: 0 tokens sent" not in data


def remembered_from(guest, monkeypatch, source) -> str:
    from webapp.context import assemble
    _, conversation, _ = ask(guest_user(guest), "How long does shipping take?")
    memory = {"content": "Prefers email.", "scope": "account · personal", "turn_seq": 4,
              "conversation_id": source, "source": "distiller"}

    def memory_source(conversation_, policy, history):
        return assemble.Section("memory", [{"role": "system", "content": "Prefers email."}], 4,
                                {"mode": "recency", "memories": [memory]})

    monkeypatch.setattr(assemble, "SECTION_SOURCES", [memory_source])
    return guest.get(f"/c/{conversation.id}/viewer").text


def test_a_memory_from_a_deleted_conversation_says_so(guest, monkeypatch):
    _, other, _ = ask(guest_user(guest), "Hello")
    other.deleted_at = utcnow()
    db.session.commit()
    html = remembered_from(guest, monkeypatch, other.id)
    assert "a deleted conversation" in html and "of another conversation" not in html


def test_a_memory_whose_source_link_was_cleared_says_deleted(guest, monkeypatch):
    html = remembered_from(guest, monkeypatch, None)
    assert "a deleted conversation" in html and "turn 5" not in html


def test_a_memory_from_a_live_conversation_names_its_turn(guest, monkeypatch):
    _, other, _ = ask(guest_user(guest), "Hello")
    assert "turn 5 of another conversation" in remembered_from(guest, monkeypatch, other.id)
