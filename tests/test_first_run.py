"""The first run of a demo: a fresh database, `init-db --demo`, every printed login signs in, and
the seeded long conversation's viewer shows all six fates, a rolling summary and memories, and
still does after a new message."""
import re

import pytest
from sqlalchemy import select

from webapp.extensions import db
from webapp.memories import jobs as memory_jobs
from webapp.memories.models import Memory
from webapp.models import Conversation

from .accounts_support import fresh_request_globals, sign_in
from .support import app_on, ask
from .test_sign_in_links import redeem

SIX_FATES = {"FULL", "COMPACTED", "SUMMARIZED", "DROPPED", "PINNED", "EXCLUDED"}


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


def demo_viewer(fresh_app, first_run):
    """A client signed in as the demo customer, and the seeded conversation's viewer address."""
    viewer = re.search(r"http://127\.0\.0\.1:5000(/c/[0-9a-f]{32}/viewer) \(sign in as "
                       r"alex@example\.com\)", first_run).group(1)
    password = re.search(r"alex@example\.com, password: (\S+)", first_run).group(1)
    client = fresh_app.test_client()
    sign_in(client, "alex@example.com", password)
    return client, viewer


def test_the_seeded_conversation_shows_all_six_fates(fresh_app, first_run):
    client, viewer = demo_viewer(fresh_app, first_run)
    html = client.get(viewer).text
    assert set(re.findall(r'data-fate="(\w+)"', html)) == SIX_FATES
    assert set(client.get(viewer + ".json").get_json()["fates"]) == SIX_FATES
    assert 'id="section-summary"' in html and "Long-term memory" in html
    assert "not yet in the summary" in html
    assert "fold into the summary together" in html  # why they are not folded yet
    memories = db.session.scalars(select(Memory.content)).all()
    assert "Is allergic to wool." in memories


def test_the_seeded_conversation_keeps_its_six_fates_after_a_new_message(fresh_app, first_run):
    client, viewer = demo_viewer(fresh_app, first_run)
    conversation = db.session.get(Conversation, viewer.split("/")[2])
    ask(conversation.user, "Can you check order #1044 for me?", conversation)  # folds run inline
    assert conversation.turn_count == 32
    assert set(client.get(viewer + ".json").get_json()["fates"]) == SIX_FATES


def test_init_db_demo_says_where_each_fate_is(first_run):
    tour = dict(re.findall(r"^  ([A-Z]+) +(turns? [\d–, and]+): ", first_run, re.M))
    assert set(tour) == SIX_FATES
    assert tour["PINNED"] == "turn 2" and tour["EXCLUDED"] == "turn 12"
    assert tour["FULL"] == "turns 30–31"
    assert re.search(r"^  EXCLUDED .*its words may remain there", first_run, re.M)


def test_a_second_init_db_keeps_the_one_seeded_conversation(fresh_app, first_run):
    again = fresh_app.test_cli_runner().invoke(args=["init-db", "--demo"]).output
    assert "Kept the demo's long conversation" in again
    assert re.search(r"/c/([0-9a-f]{32})/viewer", again).group(1) == \
        re.search(r"/c/([0-9a-f]{32})/viewer", first_run).group(1)


def test_the_seeded_conversation_imports_again_from_its_export(fresh_app, first_run, tmp_path):
    runner = fresh_app.test_cli_runner()
    conversation_id = re.search(r"/c/([0-9a-f]{32})/viewer", first_run).group(1)
    path = tmp_path / "demo.json"
    path.write_text(runner.invoke(args=["export", conversation_id]).output)
    result = runner.invoke(args=["import", str(path)])
    assert result.exit_code == 0, result.output
    assert '"fold_after_turns": 8' in path.read_text()


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


def test_init_db_demo_queues_no_distil_that_would_find_nothing_to_do(fresh_app, monkeypatch):
    """The seed distils its conversation once, at the end: a job queued per seeded turn would
    each log "waiting: 0 new messages" at a self-hoster's first start."""
    queued = []
    monkeypatch.setattr(memory_jobs, "enqueue", lambda task, *args: queued.append(task.name))
    result = fresh_app.test_cli_runner().invoke(args=["init-db", "--demo"])
    assert result.exit_code == 0, result.output
    assert "distil_job" not in queued
    with fresh_app.app_context():
        assert db.session.scalar(select(Memory.id).limit(1)) is not None  # the seed's own distil
