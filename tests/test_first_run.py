"""The first run of a demo: a fresh database, `init-db --demo`, every printed login signs in, and
the seeded long conversation's viewer shows all four fates, a rolling summary and memories."""
import re

import pytest
from sqlalchemy import select

from webapp.extensions import db
from webapp.memories.models import Memory

from .accounts_support import fresh_request_globals, sign_in
from .test_sign_in_links import redeem
from .support import app_on


@pytest.fixture
def fresh_app(tmp_path):
    """An app on an empty database file: nothing migrated, nothing seeded."""
    with app_on(tmp_path / "fresh.db") as app:
        yield app


@pytest.fixture
def first_run(fresh_app):
    result = fresh_app.test_cli_runner().invoke(args=["init-db", "--demo"])
    assert result.exit_code == 0, result.output
    return result.output


def test_every_printed_login_signs_in(fresh_app, first_run):
    logins = re.findall(r"Demo (\w+) (\S+@\S+), password: (\S+)", first_run)
    assert sorted(role for role, _, _ in logins) == ["admin", "customer", "customer", "staff"]
    for role, email, password in logins:
        client = fresh_app.test_client()
        assert sign_in(client, email, password).status_code == 303, email
        fresh_request_globals()
        assert email in client.get("/account").text


def test_the_seeded_conversation_shows_the_four_fates(fresh_app, first_run):
    viewer = re.search(r"http://127\.0\.0\.1:5000(/c/[0-9a-f]{32}/viewer) \(sign in as "
                       r"alex@example\.com\)", first_run).group(1)
    password = re.search(r"alex@example\.com, password: (\S+)", first_run).group(1)
    client = fresh_app.test_client()
    sign_in(client, "alex@example.com", password)
    html = client.get(viewer).text
    fates = set(re.findall(r'data-fate="(\w+)"', html))
    assert fates >= {"FULL", "COMPACTED", "SUMMARIZED", "DROPPED"}
    assert 'id="section-summary"' in html and "Long-term memory" in html
    assert "not yet in the summary" in html
    memories = db.session.scalars(select(Memory.content)).all()
    assert "Is allergic to wool." in memories


def test_a_second_init_db_keeps_the_one_seeded_conversation(fresh_app, first_run):
    again = fresh_app.test_cli_runner().invoke(args=["init-db", "--demo"]).output
    assert "Kept the demo's long conversation" in again
    assert re.search(r"/c/([0-9a-f]{32})/viewer", again).group(1) == \
        re.search(r"/c/([0-9a-f]{32})/viewer", first_run).group(1)


def printed_viewer(first_run) -> str:
    return re.search(r"http://127\.0\.0\.1:5000(/c/[0-9a-f]{32}/viewer) \(sign in", first_run).group(1)


def test_the_printed_viewer_address_asks_a_signed_out_visitor_to_sign_in_and_comes_back(
        fresh_app, first_run):
    viewer = printed_viewer(first_run)
    password = re.search(r"alex@example\.com, password: (\S+)", first_run).group(1)
    client = fresh_app.test_client()
    offer = client.get(viewer)
    assert offer.status_code == 302 and offer.headers["Location"] == f"/login?next={viewer}"
    fresh_request_globals()
    back = sign_in(client, "alex@example.com", password, next=viewer)
    assert back.status_code == 303 and back.headers["Location"] == viewer
    assert 'data-fate="DROPPED"' in client.get(viewer).text


def test_init_db_demo_prints_a_one_time_sign_in_link_that_opens_the_viewer(fresh_app, first_run):
    link = re.search(r"Open it signed in as alex@example\.com in one click: "
                     r"http://127\.0\.0\.1:5000(/signin/\S+) \(works once, for 10 minutes\)\.",
                     first_run).group(1)
    client = fresh_app.test_client()
    opened = redeem(client, link)
    assert opened.status_code == 303 and opened.headers["Location"] == printed_viewer(first_run)
    fresh_request_globals()
    assert 'data-fate="DROPPED"' in client.get(opened.headers["Location"]).text
    fresh_request_globals()
    assert redeem(fresh_app.test_client(), link).status_code == 410  # once only
