"""The viewer's side of branches: a version not sent shows its own request as it was sent, and
compare sets the version sent beside a kept one, each with what the model received."""
import pytest

from webapp import branches

from .support import use_provider
from .test_branch_views import chat, finish  # noqa: F401  (chat: a fixture)
from tests.fakes.scripted_model import ScriptedModel


@pytest.fixture
def model(app):
    return use_provider(app, ScriptedModel("Rome answer.", "Paris answer.", "Lisbon answer."))


@pytest.fixture
def edited(guest, chat, model):
    """Turn 1 asked twice: version 1 "How long does shipping take?", version 2 an edit."""
    guest.post(f"/c/{chat.id}/turns/0/edit", data={"message": "Do you ship to Lisbon?"},
               headers={"HX-Request": "true"})
    finish(guest, chat, 0)
    return chat


def test_a_kept_version_shows_its_own_request_as_sent(guest, edited, model):
    page = guest.get(f"/c/{edited.id}/viewer").text
    assert "alternative 1 of 2 — not sent" in page
    assert f"/c/{edited.id}/viewer/turns/1/sent?version=1" in page
    kept = guest.get(f"/c/{edited.id}/viewer/turns/1/sent?version=1").text
    assert "alternative 1 of 2 — not sent now" in kept
    assert "How long does shipping take?" in kept and "Do you ship to Lisbon?" not in kept
    shown = guest.get(f"/c/{edited.id}/viewer/turns/1/sent").text
    assert "Do you ship to Lisbon?" in shown and "not sent now" not in shown


def test_a_kept_versions_json_is_the_request_it_received(guest, edited, model):
    kept = guest.get(f"/c/{edited.id}/viewer/turns/1/sent.json?version=1").get_json()
    assert kept["version"] == 1 and kept["active"] is False
    assert kept["calls"][0]["messages"][-1] == {"role": "user",
                                                "content": "How long does shipping take?"}
    shown = guest.get(f"/c/{edited.id}/viewer/turns/1/sent.json?version=2").get_json()
    assert shown["active"] is True
    assert shown["calls"][0]["messages"] == model.requests[-1]  # what the model received


@pytest.mark.parametrize("query", ["version=7", "version=0", f"version={2**40}"])
def test_a_missing_version_is_a_404_not_a_500(guest, edited, query):
    assert guest.get(f"/c/{edited.id}/viewer/turns/1/sent?{query}").status_code == 404


def test_compare_sets_the_sent_branch_beside_a_kept_one(guest, edited, model):
    page = guest.get(f"/c/{edited.id}/viewer/compare/branches?turn=1&version=1")
    assert page.status_code == 200
    assert "Version 2 of 2 — shown, and sent from now on" in page.text
    assert "Version 1 of 2 — not sent" in page.text
    assert "The two requests differ from message" in page.text
    data = guest.get(f"/c/{edited.id}/viewer/compare/branches?format=json").get_json()
    assert data["shown"]["request"] == model.requests[-1]
    assert data["kept"]["request"][-1]["content"] == "How long does shipping take?"
    assert data["same_request"] is False


def test_a_regenerated_answer_received_the_same_request(guest, chat, model):
    guest.post(f"/c/{chat.id}/turns/0/regenerate", headers={"HX-Request": "true"})
    finish(guest, chat, 0)
    data = guest.get(f"/c/{chat.id}/viewer/compare/branches?format=json").get_json()
    assert data["same_request"] is True and data["shown"]["answer"] != data["kept"]["answer"]
    page = guest.get(f"/c/{chat.id}/viewer/compare/branches").text
    assert "received the same request" in page


@pytest.mark.parametrize("query", ["turn=5", "turn=x", "turn=1&version=2", "turn=1&version=9"])
def test_compare_refuses_a_turn_or_version_it_cannot_show_in_words(guest, edited, query):
    response = guest.get(f"/c/{edited.id}/viewer/compare/branches?{query}")
    assert response.status_code == 400 and "Can't compare" in response.text


def test_compare_without_versions_says_how_to_make_one(guest, chat):
    response = guest.get(f"/c/{chat.id}/viewer/compare/branches")
    assert response.status_code == 200
    assert "No turn of this conversation has another version" in response.text


def test_someone_elses_branches_are_not_compared(guest, sam):
    """A guest asking for another person's page is sent to sign in, as for any unknown id."""
    from .support import ask
    _, conversation, _ = ask(sam, "Hello")
    for path in ("viewer/compare/branches", "viewer/turns/1/sent?version=1"):
        response = guest.get(f"/c/{conversation.id}/{path}")
        assert response.status_code == 302 and response.location.startswith("/login?next=")


def test_a_kept_branch_that_went_on_shows_its_request_over_the_shared_path(guest, chat, model):
    for seq, question in ((1, "And to Porto?"), (2, "Thanks!")):
        guest.post(f"/c/{chat.id}/messages", data={"message": question},
                   headers={"HX-Request": "true"})
        finish(guest, chat, seq)
    guest.post(f"/c/{chat.id}/turns/1/edit", data={"message": "And to Lisbon?"},
               headers={"HX-Request": "true"})
    finish(guest, chat, 1)
    kept = guest.get(f"/c/{chat.id}/viewer/turns/2/sent.json?version=1").get_json()
    assert kept["problems"] == []  # turn 1, the path both share, reads as it was sent
    assert [m["content"] for m in kept["calls"][0]["messages"] if m["role"] == "user"] == [
        "How long does shipping take?", "And to Porto?"]
    data = guest.get(f"/c/{chat.id}/viewer/compare/branches?turn=2&version=1").text
    assert "Its branch goes on for 1 more turn." in data and "Its branch ends here." in data


def test_compare_says_what_the_next_request_would_send_and_a_switch_then_sends_it(
        app, guest, chat, model):
    guest.post(f"/c/{chat.id}/messages", data={"message": "And to Porto?"},
               headers={"HX-Request": "true"})
    finish(guest, chat, 1)
    guest.post(f"/c/{chat.id}/turns/0/edit", data={"message": "Do you ship to Lisbon?"},
               headers={"HX-Request": "true"})
    finish(guest, chat, 0)
    data = guest.get(f"/c/{chat.id}/viewer/compare/branches?format=json").get_json()
    assert branches.versions(chat.id)[0].active == 2  # looking changed nothing
    assert data["kept"]["next_request"] != data["shown"]["next_request"]
    guest.post(f"/c/{chat.id}/turns/0/versions/1", headers={"HX-Request": "true"})
    guest.post(f"/c/{chat.id}/messages", data={"message": "Thanks!"},
               headers={"HX-Request": "true"})
    finish(guest, chat, 2)
    assert model.requests[-1][:-1] == data["kept"]["next_request"]
    assert "And to Porto?" in [m["content"] for m in data["kept"]["next_request"]]


def test_staff_compare_branches_audited_and_changing_nothing(app, guest, edited):
    from webapp.extensions import db
    from webapp.models import AuditEntry
    from .accounts_support import make_account, sign_in
    make_account("staff-a@example.com", "staff")
    staff = app.test_client()
    sign_in(staff, "staff-a@example.com")
    logged = db.session.scalar(db.select(db.func.count()).select_from(AuditEntry))
    data = staff.get(f"/c/{edited.id}/viewer/compare/branches?format=json").get_json()
    asked = [m["content"] for m in data["kept"]["next_request"] if m["role"] == "user"]
    assert asked == ["How long does shipping take?"]
    assert db.session.scalar(db.select(db.func.count()).select_from(AuditEntry)) == logged + 1
    assert branches.versions(edited.id)[0].active == 2
    assert guest.get(f"/c/{edited.id}").text.count("Do you ship to Lisbon?") >= 1
