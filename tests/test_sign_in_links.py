"""`flask ask` prints a one-time sign-in link that opens the conversation as its owner: single
use, minutes long, spent only by the confirmation page's CSRF-protected POST, never for staff."""
import re
from datetime import timedelta

import pytest
from sqlalchemy import select

from webapp.accounts.sign_in_links import SignInLink
from webapp.extensions import db

from .accounts_support import fresh_request_globals, make_account, refused
from .support import run


@pytest.fixture
def printed(runner):
    output = run(runner, "ask", "Can I get a refund for order #1043?")
    link = re.search(r"open in the browser: (http://127\.0\.0\.1:5000(/signin/\S+)) \(signs you "
                     r"in as alex@example\.com; works once, for 10 minutes\)", output)
    conversation = re.search(r"^conversation: (\w{32})$", output, re.M).group(1)
    return link.group(2), conversation


def page_token(html: str) -> str:
    return re.search(r'name="csrf-token" content="([^"]+)"', html).group(1)


def redeem(client, path):
    fresh_request_globals()
    page = client.get(path)
    fresh_request_globals()
    return client.post(path, data={"csrf_token": page_token(page.text)})


def test_the_link_asks_first_then_opens_the_conversation_as_its_owner(client, printed):
    path, conversation = printed
    page = client.get(path)
    assert page.status_code == 200 and "Sign in as Alex Rivera?" in page.text
    fresh_request_globals()
    response = client.post(path, data={"csrf_token": page_token(page.text)})
    assert response.status_code == 303 and response.headers["Location"] == f"/c/{conversation}"
    fresh_request_globals()
    chat = client.get(f"/c/{conversation}").text
    assert "Can I get a refund for order #1043?" in chat and "Alex Rivera" in chat


def test_the_link_works_once(app, printed):
    path, _ = printed
    assert redeem(app.test_client(), path).status_code == 303
    again = redeem(app.test_client(), path)
    assert again.status_code == 410 and "no longer works" in again.text


def test_the_link_expires_in_minutes(client, printed):
    path, _ = printed
    link = db.session.scalar(select(SignInLink))
    link.expires_at -= timedelta(minutes=10)
    db.session.commit()
    assert client.get(path).status_code == 410


def test_opening_the_link_signs_nobody_in_and_a_post_needs_the_csrf_token(client, printed):
    path, conversation = printed
    client.get(path)
    fresh_request_globals()
    assert refused(client.get(f"/c/{conversation}"))  # still nobody (a new guest)
    fresh_request_globals()
    assert client.post(path).status_code == 400
    assert db.session.scalar(select(SignInLink.used_at)) is None  # not spent by the refusal


def test_only_a_hash_of_the_token_is_stored(printed):
    token = printed[0].rsplit("/", 1)[1]
    assert token not in db.session.scalar(select(SignInLink.token_hash))


def test_a_made_up_token_is_refused(client):
    assert client.get("/signin/" + "x" * 43).status_code == 410
    assert client.get("/signin/" + "x" * 500).status_code == 410


def test_staff_get_the_address_and_no_link(runner):
    make_account("pat@example.com", role="staff")
    output = run(runner, "ask", "Hello", "--user", "pat@example.com")
    assert "/signin/" not in output and "(sign in as pat@example.com)" in output
    assert db.session.scalar(select(SignInLink)) is None


def test_chat_prints_the_link_when_it_ends(runner):
    output = runner.invoke(args=["chat"], input="Hello\nexit\n").output
    assert re.search(r"open in the browser: \S+/signin/\S+ \(signs you in as alex@example\.com", output)
