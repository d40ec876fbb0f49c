"""The scale path: the same scenario on PostgreSQL, through DATABASE_URL like every command."""
import os
import re
import secrets

import psycopg
import pytest

from webapp import create_app
from webapp.extensions import db

SERVER = os.environ.get("NIMBUS_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")


@pytest.fixture
def postgres_url():
    """A fresh database on the local server, dropped afterwards; CI must have the server."""
    name = f"nimbus_test_{secrets.token_hex(4)}"
    try:
        admin = psycopg.connect(SERVER, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as error:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"PostgreSQL not reachable at {SERVER}: {error}")
    admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield SERVER.rsplit("/", 1)[0] + "/" + name
    finally:
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        admin.close()


def test_refund_scenario_on_postgresql(postgres_url, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", postgres_url)
    monkeypatch.setenv("NIMBUS_OFFLINE_WORDS_PER_SECOND", "0")
    app = create_app()
    app.config["TESTING"] = True
    runner = app.test_cli_runner()
    try:
        assert runner.invoke(args=["init-db", "--demo"]).exit_code == 0
        first = runner.invoke(args=["ask", "Can I get a refund for order #1043?"]).output
        conversation = re.search(r"conversation: (\w{32})", first).group(1)
        runner.invoke(args=["ask", "OK. What about my other order, 1042?", "--conversation", conversation])
        third = runner.invoke(args=["ask", "Yes please.", "--conversation", conversation]).output
        assert re.search(r"ticket #\d+ for your refund on order #1042", third)
        context = runner.invoke(args=["show", conversation, "--context"]).output
        assert context.count("(requested tools)") == 2
    finally:
        with app.app_context():
            db.engine.dispose()
