"""Upgrading keeps every row: a database built at each past revision, filled with the rows of
that revision (tests/upgrade_support.py), upgraded to the newest on SQLite and PostgreSQL, keeps
each table's rows and content, and the app serves them: customers sign in and read their
conversations, share links open. A new migration joins by being written."""
import ast
import glob
import hashlib
import hmac
import os
import re
import sqlite3

import pytest
from flask_migrate import upgrade

from webapp import create_app
from webapp.database import MIGRATIONS, create_schema, head_revision
from webapp.extensions import db
from webapp.memories.search.keywords import turn_scores
from webapp.models import ShareLink, User
from webapp.staff.shares import share_url

from .accounts_support import fresh_request_globals, sign_in
from .postgres_support import new_database
from .upgrade_support import (GUEST_ROW, PASSWORD, before, build_at, comparable, fill,
                              give_session_tokens, past_revisions,
                              read_back, table_names)

REWRITTEN = {("users", "session_token")}  # given a fresh random value by 0007_fresh_session_tokens


def moved(stored: dict) -> dict:
    """The rows as they must read after the later migrations that moved a value: 0015 records a
    summary's refused fold (`problem`) as its failure, failed when it was last updated; 0019 keeps
    an audit actor's email only as its keyed digest."""
    for row in stored.get("conversation_summaries", []):
        problem = row.pop("problem", None)
        if problem is not None and row.get("failed_at") is None:
            row.update(failure=problem[:300], failed_at=row["updated_at"])
    for row in stored.get("audit_log", []):
        if "actor_email" in row:
            email = row.pop("actor_email")
            row["actor_digest"] = email and hmac.new(
                b"upgrade", email.encode(), hashlib.sha256).hexdigest()[:16]
    return stored


def upgrade_app(url, **config):
    return create_app({"TESTING": True, "SECRET_KEY": "upgrade", "DATABASE_URL": url,
                       "NIMBUS_OFFLINE_WORDS_PER_SECOND": 0, "NIMBUS_MEMORY_SEARCH": False,
                       "NIMBUS_RATE_LIMIT_ENABLED": False, **config})


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'old.db'}"
        return
    url, drop = new_database("nimbus_upgrade")
    yield url.replace("postgresql://", "postgresql+psycopg://", 1)
    drop()


def assert_every_row_kept(stored, found):
    for name, rows in stored.items():
        assert len(found[name]) == len(rows), f"{name}: {len(rows)} rows before, {len(found[name])} after"
        before = [{k: v for k, v in r.items() if (name, k) not in REWRITTEN} for r in rows]
        after = [{k: v for k, v in r.items() if (name, k) not in REWRITTEN} for r in found[name]]
        assert comparable(after) == comparable(before), f"{name}: content changed"


def assert_served(app, stored, had_passwords):
    """Each customer, signed in, reads their conversations; each share link opens."""
    conversations = stored["conversations"]
    users = {u["id"]: u for u in db.session.execute(db.text("SELECT * FROM users")).mappings()}
    for conversation in conversations:
        owner = users[conversation["user_id"]]
        client = app.test_client()
        fresh_request_globals()
        if had_passwords and stored["users"][GUEST_ROW]["id"] != owner["id"]:
            assert sign_in(client, owner["email"], PASSWORD).status_code == 303
        else:  # made before passwords existed: their browser's session, after the upgrade
            with client.session_transaction() as session:
                session["_user_id"] = f"{owner['id']}:{owner['session_token']}"
        page = client.get(f"/c/{conversation['id']}")
        assert page.status_code == 200, page.status_code
        for turn in stored["turns"]:
            if turn["conversation_id"] == conversation["id"]:
                assert turn["answer"] in page.text and turn["question"].split(" (")[0] in page.text
        fresh_request_globals()
    for link in db.session.scalars(db.select(ShareLink)):
        with app.test_request_context():
            url = share_url(link)
        fresh_request_globals()
        page = app.test_client().get(url)
        assert page.status_code == 200 and "shipped on March" in page.text


def assert_found_by_their_owners(stored):
    """Each old turn is indexed again with its person (0036): their keyword search finds it,
    and nobody else's does."""
    owners = {c["id"]: c["user_id"] for c in stored["conversations"]}
    for i, turn in enumerate(stored["turns"]):
        owner = db.session.get(User, owners[turn["conversation_id"]])
        other = db.session.scalar(db.select(User).where(User.id != owner.id).limit(1))
        assert turn_scores(owner, f"parcel{i}", 10).keys() == {turn["id"]}
        assert not other or turn["id"] not in turn_scores(other, f"parcel{i}", 10)


@pytest.mark.parametrize("revision", past_revisions())
def test_upgrading_from_every_revision_keeps_every_row_and_serves_it(database_url, revision):
    app = upgrade_app(database_url)
    with app.app_context():
        build_at(revision)
        stored = fill()
        legacy_tokens = before(revision, "0007_fresh_session_tokens")
        if not legacy_tokens:
            give_session_tokens(stored)
        tables_before = table_names()
        had_passwords = "password_hash" in stored["users"][0]
        create_schema()
        assert tables_before <= table_names()
        stored = moved(stored)
        assert_every_row_kept(stored, read_back(stored))
        tokens = [u.session_token for u in db.session.scalars(db.select(User))]
        if not legacy_tokens:  # a token made since 0007 is kept: nobody is signed out again
            assert tokens == [u["session_token"] for u in stored["users"]]
        assert len(set(tokens)) == len(tokens) and all(re.fullmatch("[0-9a-f]{32}", t) for t in tokens)
        assert_served(app, stored, had_passwords)
        assert_found_by_their_owners(stored)
        if db.engine.dialect.name == "sqlite":
            triggers = {name for (name,) in db.session.execute(db.text(
                "SELECT name FROM sqlite_master WHERE type = 'trigger'"))}
            assert {f"{t}_fts_{op}" for t in ("turns", "memories")
                    for op in ("insert", "delete", "update")} <= triggers
            found = db.session.execute(db.text(
                "SELECT count(*) FROM turns_fts WHERE turns_fts MATCH 'parcel3'")).scalar()
            assert found == 1  # the old turn is still found by keyword
        db.session.remove()
        db.engine.dispose()


def test_init_db_copies_a_database_with_rows_aside_before_upgrading(tmp_path):
    path = tmp_path / "nimbus.db"
    app = upgrade_app(f"sqlite:///{path}", NIMBUS_BACKUP_FOLDER=str(tmp_path / "backups"))
    with app.app_context():
        build_at("issue13")
        stored = fill()  # in the WAL, not yet checkpointed into the file: the copy must see it
        result = app.test_cli_runner().invoke(args=["init-db"])
        assert result.exit_code == 0, result.output
        copies = glob.glob(str(tmp_path / "backups" / "nimbus-issue13-*.db"))
        assert len(copies) == 1 and copies[0] in result.output
        assert f"revision {head_revision()}" in result.output
        copy = sqlite3.connect(copies[0])
        assert copy.execute("SELECT version_num FROM alembic_version").fetchone() == ("issue13",)
        assert copy.execute("SELECT count(*) FROM turns").fetchone()[0] == len(stored["turns"])
        assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        copy.close()
        again = app.test_cli_runner().invoke(args=["init-db"])  # nothing left to upgrade
        assert "Copied" not in again.output
        assert len(glob.glob(str(tmp_path / "backups" / "*.db"))) == 1
        db.engine.dispose()


def test_init_db_copies_nothing_for_a_new_database(tmp_path):
    app = upgrade_app(f"sqlite:///{tmp_path / 'new.db'}", NIMBUS_BACKUP_FOLDER=str(tmp_path / "b"))
    with app.app_context():
        result = app.test_cli_runner().invoke(args=["init-db"])
        assert result.exit_code == 0 and "Copied" not in result.output
        assert not os.path.exists(tmp_path / "b")
        db.engine.dispose()


def test_an_upgrade_leaves_foreign_keys_on_for_the_app(tmp_path):
    app = upgrade_app(f"sqlite:///{tmp_path / 'fk.db'}")
    with app.app_context():
        upgrade(directory=MIGRATIONS)
        with db.engine.connect() as connection:  # the pooled connection the migrations used
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        db.engine.dispose()


def test_migrations_import_nothing_from_the_app():
    for path in glob.glob(os.path.join(MIGRATIONS, "versions", "*.py")) + [
            os.path.join(MIGRATIONS, "env.py")]:
        with open(path) as handle:
            tree = ast.parse(handle.read())
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.split(".")[0] == "webapp" for n in names), path


def test_the_migrations_full_text_ddl_is_the_apps(tmp_path):
    """The migrations carry their own copy of the FTS5 tables and triggers (0001, then 0036's
    owner-scoped ones): the last must match the app's."""
    found = []
    for name, make in (("migrated", lambda: upgrade(directory=MIGRATIONS)),
                       ("created", db.create_all)):
        app = upgrade_app(f"sqlite:///{tmp_path / name}.db")
        with app.app_context():
            make()
            found.append(set(db.session.execute(db.text(
                "SELECT type, name, sql FROM sqlite_master "
                "WHERE type = 'trigger' OR name IN ('turns_fts', 'memories_fts')")).all()))
            db.session.remove()
            db.engine.dispose()
    assert found[0] == found[1] and len(found[0]) == 9  # 2 FTS5 tables, 7 triggers


def test_upgrading_to_0019_keeps_no_actor_email_in_the_audit_log(tmp_path):
    app = upgrade_app(f"sqlite:///{tmp_path / 'audit.db'}")
    with app.app_context():
        build_at("0018_distiller_backoff")
        stored = fill()
        db.session.execute(db.text(
            "UPDATE audit_log SET action = 'changed role', detail = 'pat@example.com: staff → admin'"))
        db.session.commit()
        create_schema()
        rows = db.session.execute(db.text("SELECT * FROM audit_log")).mappings().all()
        assert len(rows) == len(stored["audit_log"]) and "actor_email" not in rows[0]
        assert {r["detail"] for r in rows} == {"staff → admin"}
        expected = hmac.new(b"upgrade", b"staff@shop.example", hashlib.sha256).hexdigest()[:16]
        assert {r["actor_digest"] for r in rows} == {expected}
        db.session.remove()
        db.engine.dispose()
