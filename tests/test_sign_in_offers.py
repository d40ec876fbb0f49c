"""A signed-out visitor (a guest) of a page that needs an account is sent to the sign-in form with
`next=` back to it, for a made-up id just as for a real one; a signed-in account that may not see
it gets the plain 404, and a guest's own missing things stay 404."""
import secrets
from urllib.parse import parse_qs, urlsplit

import pytest

from webapp.extensions import db

from .accounts_support import fresh_request_globals, make_account, sign_in
from .support import ask, guest_user


@pytest.fixture
def pats_conversation(app):
    pat = make_account("pat@example.com")
    _, conversation, _ = ask(pat, "Where is my order #1041?")
    return conversation.id


def next_of(response) -> str:
    location = urlsplit(response.headers["Location"])
    assert location.path == "/login"
    return parse_qs(location.query)["next"][0]


@pytest.mark.parametrize("page", ["/c/{id}/viewer", "/c/{id}", "/c/{id}?at=2",
                                  "/c/{id}/viewer/turns/1/sent"])
def test_a_guest_is_sent_to_sign_in_and_back_to_the_page(guest, pats_conversation, page):
    path = page.format(id=pats_conversation)
    response = guest.get(path)
    assert response.status_code == 302 and next_of(response) == path


def test_a_made_up_id_gets_the_same_sign_in_offer_as_a_real_one(guest, pats_conversation):
    real = guest.get(f"/c/{pats_conversation}/viewer")
    fresh_request_globals()
    made_up = guest.get(f"/c/{secrets.token_hex(16)}/viewer")
    assert (real.status_code, made_up.status_code) == (302, 302)


def test_signing_in_from_the_offer_opens_the_viewer(client, pats_conversation):
    path = f"/c/{pats_conversation}/viewer"
    offer = client.get(path, follow_redirects=True)
    assert "Sign in to open the page you followed" in offer.text
    assert f'name="next" value="{path}"' in offer.text
    response = sign_in(client, "pat@example.com", next=path)
    assert response.status_code == 303 and response.headers["Location"] == path
    assert client.get(path).status_code == 200


def test_a_signed_in_customer_who_does_not_own_it_gets_not_found(client, pats_conversation):
    make_account("other@example.com")
    sign_in(client, "other@example.com")
    response = client.get(f"/c/{pats_conversation}/viewer")
    assert response.status_code == 404 and "isn't here" in response.text
    assert "another account than other@example.com" in response.text  # the same for any id


def test_a_guest_is_sent_to_sign_in_for_the_staff_console(guest):
    response = guest.get("/staff")
    assert response.status_code == 302 and next_of(response) == "/staff"


def test_a_signed_in_customer_gets_not_found_for_the_staff_console(client):
    make_account("other@example.com")
    sign_in(client, "other@example.com")
    assert client.get("/staff").status_code == 404


@pytest.mark.parametrize("path", ["/c/{id}/viewer.json", "/c/{id}/turns/0/stream"])
def test_a_script_still_gets_a_json_not_found(guest, pats_conversation, path):
    response = guest.get(path.format(id=pats_conversation))
    assert response.status_code == 404 and "error" in response.json


def test_a_post_to_someone_elses_conversation_stays_not_found(guest, pats_conversation):
    response = guest.post(f"/c/{pats_conversation}/messages", data={"message": "hi"})
    assert response.status_code == 404


def test_a_guests_own_deleted_conversation_is_not_found_not_a_sign_in(guest):
    _, conversation, _ = ask(guest_user(guest), "How long does shipping take?")
    conversation.deleted_at = conversation.created_at
    db.session.commit()
    fresh_request_globals()
    assert guest.get(f"/c/{conversation.id}").status_code == 404
