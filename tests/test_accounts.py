"""Sign-in, sign-out, lock-out, remember me, sign-up that keeps a guest's chats, guests switched off."""
import re

import pytest

from webapp.accounts import find_user
from webapp.accounts.passwords import hasher
from webapp.extensions import db
from webapp.storage import create_conversation, list_conversations

from .accounts_support import PASSWORD, csrf_token, make_account, sign_in
from .support import guest_user, make_app


def test_passwords_are_stored_as_argon2id_hashes(app):
    user = make_account("kim@example.com")
    assert user.password_hash.startswith("$argon2id$") and PASSWORD not in user.password_hash
    hasher.verify(user.password_hash, PASSWORD)


def test_a_customer_signs_in_and_lands_on_the_chat(client):
    make_account("kim@example.com")
    response = sign_in(client, "kim@example.com")
    assert response.status_code == 303 and response.headers["Location"] == "/"
    assert "kim" in client.get("/").text
    assert guest_user(client).email == "kim@example.com"


def test_staff_land_on_the_console(client):
    make_account("pat@example.com", role="staff")
    assert sign_in(client, "pat@example.com").headers["Location"] == "/staff"


def test_a_wrong_password_is_refused_without_saying_which_part_was_wrong(client):
    make_account("kim@example.com")
    wrong = sign_in(client, "kim@example.com", "not the password")
    unknown = sign_in(client, "nobody@example.com", PASSWORD)
    assert wrong.status_code == unknown.status_code == 401
    assert "do not match an account" in wrong.text and "do not match an account" in unknown.text


def test_repeated_failures_lock_the_account_even_for_the_right_password(client, app):
    make_account("kim@example.com")
    for _ in range(app.config["NIMBUS_LOGIN_MAX_FAILURES"]):
        sign_in(client, "kim@example.com", "guess guess guess")
    locked = sign_in(client, "kim@example.com")
    assert locked.status_code == 401 and "do not match an account" in locked.text


def test_a_locked_account_answers_exactly_like_a_wrong_password(client, app):
    make_account("kim@example.com")
    make_account("lee@example.com")
    for _ in range(app.config["NIMBUS_LOGIN_MAX_FAILURES"]):
        sign_in(client, "kim@example.com", "guess guess guess")
    locked = sign_in(client, "kim@example.com", "guess guess guess")
    wrong = sign_in(client, "lee@example.com", "guess guess guess")
    assert locked.status_code == wrong.status_code == 401
    assert locked.text.replace("kim@", "lee@") == wrong.text.replace(
        re.search(r'csrf-token" content="([^"]+)"', wrong.text).group(1),
        re.search(r'csrf-token" content="([^"]+)"', locked.text).group(1))


def test_a_lock_expires(client, app):
    from datetime import timedelta

    from webapp.models import utcnow
    user = make_account("kim@example.com")
    user.locked_until = utcnow() - timedelta(seconds=1)
    db.session.commit()
    assert sign_in(client, "kim@example.com").status_code == 303


def test_sign_out_ends_the_session(client):
    make_account("kim@example.com")
    sign_in(client, "kim@example.com")
    assert client.post("/logout").status_code == 303
    page = client.get("/").text  # a guest's page again, not kim's
    assert re.search(r"Guest [0-9a-f]{4}", page) and "kim@example.com" not in page


@pytest.mark.parametrize("remember", [False, True])
def test_cookies_saved_before_signing_out_no_longer_open_the_account(client, remember):
    make_account("kim@example.com")
    sign_in(client, "kim@example.com", remember=remember)
    saved = {name: client.get_cookie(name).value for name in ("session", "remember_token")
             if client.get_cookie(name) is not None}
    assert client.post("/logout").status_code == 303
    replay = client.application.test_client()
    for name, value in saved.items():
        replay.set_cookie(name, value)
    assert "kim@example.com" not in replay.get("/account").text


def test_remember_me_sets_a_long_lived_cookie_and_a_plain_sign_in_does_not(client, app):
    make_account("kim@example.com")
    make_account("lee@example.com")
    sign_in(client, "kim@example.com", remember=True)
    assert client.get_cookie("remember_token") is not None
    other = app.test_client()
    sign_in(other, "lee@example.com")
    assert other.get_cookie("remember_token") is None


def test_changing_the_password_signs_every_browser_out(client):
    from webapp.accounts.passwords import set_password
    user = make_account("kim@example.com")
    sign_in(client, "kim@example.com")
    set_password(user, "another long password")
    db.session.commit()
    page = client.get("/account").text
    assert "kim@example.com" not in page and re.search(r"Guest [0-9a-f]{4}", page)


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/", "/\\evil.example"])
def test_next_never_leaves_the_site(client, target):
    make_account("kim@example.com")
    assert sign_in(client, "kim@example.com", next=target).headers["Location"] == "/"


def test_next_brings_people_back_where_they_were(client):
    make_account("kim@example.com")
    assert sign_in(client, "kim@example.com", next="/memories").headers["Location"] == "/memories"


def test_a_guest_who_signs_up_keeps_their_conversations(guest, app):
    visitor = guest_user(guest)
    conversation = create_conversation(visitor)
    response = guest.post("/signup", data={"email": "New@Example.com", "name": "Noor",
                                           "password": "a long enough secret"})
    assert response.status_code == 303
    account = find_user("new@example.com")
    assert account.id == visitor.id and not account.is_guest and account.role == "customer"
    assert [c.id for c in list_conversations(account)] == [conversation.id]
    assert sign_in(app.test_client(), "new@example.com", "a long enough secret").status_code == 303


@pytest.mark.parametrize("form, message", [
    ({"email": "alex@example.com", "name": "A", "password": "a long enough secret"}, "already"),
    ({"email": "nope", "name": "A", "password": "a long enough secret"}, "email address"),
    ({"email": "n@example.com", "name": "A", "password": "short"}, "10 to 200"),
    ({"email": "n@example.com", "name": " ", "password": "a long enough secret"}, "your name")])
def test_sign_up_says_what_to_fix_and_changes_nothing(guest, form, message):
    response = guest.post("/signup", data=form)
    assert response.status_code == 422 and message in response.text
    assert guest_user(guest).is_guest


def test_without_guests_everybody_signs_in_first(tmp_path, migrated_database):
    import shutil
    shutil.copy(migrated_database, tmp_path / "nimbus.db")
    app = make_app(tmp_path / "nimbus.db")
    app.config["NIMBUS_GUESTS"] = False
    with app.app_context():
        client = app.test_client()
        response = client.get("/memories")
        assert response.status_code == 302 and response.headers["Location"] == "/login?next=/memories"
        htmx = client.post("/messages", headers={"HX-Request": "true"})
        assert htmx.status_code in (400, 401)  # refused either way: no CSRF token, no user
        assert client.get("/search?q=x", headers={"HX-Request": "true"}).headers["HX-Redirect"] \
            == "/login?next=/search?q%3Dx"
        assert client.get("/login").status_code == 200
        make_account("kim@example.com")
        sign_in(client, "kim@example.com")
        assert client.get("/memories").status_code == 200
        db.session.remove()
        db.engine.dispose()


def test_the_login_form_names_its_fields_email_and_password(client):
    page = client.get("/login").text
    assert 'name="email"' in page and 'name="password"' in page and 'name="remember"' in page
    assert csrf_token(client)


@pytest.mark.parametrize("lookalike", ["kim\u200b@example.com", "\uff4bim@example.com",
                                       "KIM@EXAMPLE.COM", "\u212aim@example.com"])
def test_a_lookalike_of_an_existing_email_is_the_same_account(guest, lookalike):
    make_account("kim@example.com")
    answer = guest.post("/signup", data={"email": lookalike, "name": "Kim",
                                         "password": "a long enough secret"})
    assert answer.status_code == 422 and "already" in answer.text


@pytest.mark.parametrize("lookalike", ["\u0441\u043e\u0441\u043e@example.com",  # Cyrillic сосо
                                       "\u010boco@example.com", "co\u0307co@example.com"])
def test_a_whole_word_lookalike_of_an_existing_address_is_refused(guest, lookalike):
    make_account("coco@example.com")
    answer = guest.post("/signup", data={"email": lookalike, "name": "Coco",
                                         "password": "a long enough secret"})
    assert answer.status_code == 422 and "looks like an existing account" in answer.text
    assert find_user(lookalike) is None


def test_an_address_in_another_alphabet_with_no_latin_twin_signs_up(guest):
    answer = guest.post("/signup", data={"email": "\u0441\u043e\u0441\u043e@example.com",
                                         "name": "Coco", "password": "a long enough secret"})
    assert answer.status_code == 303


def test_nfc_and_nfd_spellings_are_one_address(guest, app):
    first = guest.post("/signup", data={"email": "ren\u00e9@example.com", "name": "René",
                                        "password": "a long enough secret"})
    assert first.status_code == 303
    other = app.test_client()
    other.get("/")
    from .accounts_support import fresh_request_globals
    fresh_request_globals()
    token = csrf_token(other, "/signup")
    again = other.post("/signup", data={"email": "rene\u0301@example.com", "name": "René",
                                        "password": "a long enough secret", "csrf_token": token})
    assert again.status_code == 422 and "already" in again.text


@pytest.mark.parametrize("email", ["a@b", "al\u043ex@example.com", "bob@exam\u0440le.com"])
def test_an_address_that_cannot_be_one_or_mixes_alphabets_is_refused_clearly(guest, email):
    answer = guest.post("/signup", data={"email": email, "name": "X",
                                         "password": "a long enough secret"})
    assert answer.status_code == 422 and "Not signed up" in answer.text
    assert find_user(email) is None


def test_the_users_command_unifies_lookalikes_too(runner, app):
    make_account("kim@example.com")
    result = runner.invoke(args=["users", "add", "\uff4bim@example.com", "--password-stdin"],
                           input="a long enough secret\n")
    assert result.exit_code != 0 and "already has an account" in result.output
