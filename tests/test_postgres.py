"""The scale path: the same scenario on PostgreSQL, through DATABASE_URL like every command."""
import re

import pytest

from webapp import create_app
from webapp.extensions import db

pytestmark = pytest.mark.slow  # needs PostgreSQL


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
