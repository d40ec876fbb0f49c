"""The first run of a demo: a fresh database, `init-db --demo`, every printed login signs in, and
the seeded long conversation's viewer shows all four fates, a rolling summary and memories."""
import re

import pytest
from sqlalchemy import select

from webapp.extensions import db
from webapp.memories.models import Memory

from .accounts_support import fresh_request_globals, sign_in
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
