"""Shared fixtures: an app on a temporary SQLite database with the demo shop (helpers: support.py)."""
import re
import shutil

import pytest

from webapp.accounts import find_user, seed_demo
from webapp.database import create_schema
from webapp.extensions import db

from .postgres_support import new_database
from .support import app_on, make_app, open_as_guest


@pytest.fixture(scope="session")
def migrated_database(tmp_path_factory):
    """Run the migrations and seed the demo once; every test starts from a copy of that file."""
    path = tmp_path_factory.mktemp("template") / "nimbus.db"
    app = make_app(path)
    with app.app_context():
        create_schema()
        seed_demo(app.config["NIMBUS_DEMO_TENANT"])
        db.session.remove()
        db.engine.dispose()
    return path


@pytest.fixture
def app(tmp_path, migrated_database):
    shutil.copy(migrated_database, tmp_path / "nimbus.db")
    with app_on(tmp_path / "nimbus.db") as app:
        yield app


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def alex(app):
    return find_user("alex@example.com")


@pytest.fixture
def sam(app):
    return find_user("sam@example.com")


@pytest.fixture
def guest(client):
    """A browser's client: it opened the chat page and wrote once, so its guest is stored."""
    return open_as_guest(client)


@pytest.fixture
def postgres_url():
    """A fresh database on the local server, dropped afterwards; CI must have the server."""
    url, drop = new_database()
    try:
        yield url
    finally:
        drop()
