"""Accounts on PostgreSQL: the console's query and search, and deleting a customer's data."""
import re

import pytest

from webapp import create_app
from webapp.accounts import find_user
from webapp.extensions import db
from webapp.accounts.personal_data import REDACTED
from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.rows import remember
from webapp.models import Conversation, RequestText
from webapp.shop.demo_conversation import TITLE as DEMO_TITLE

from .accounts_support import make_account, sign_in

pytestmark = pytest.mark.slow  # needs PostgreSQL
SHARED = "Umbrellas are 100% waterproof_and ship in 9 days"  # % and _ are LIKE's wildcards


def test_console_and_delete_my_data_on_postgresql(postgres_url, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", postgres_url)
    app = create_app()
    app.config.update(TESTING=True, WTF_CSRF_ENABLED=False)
    runner = app.test_cli_runner()
    try:
        assert runner.invoke(args=["init-db", "--demo"]).exit_code == 0
        output = runner.invoke(args=["ask", "Do you sell umbrellas?", "--user", "sam@example.com"]).output
        conversation_id = re.search(r"conversation: (\w{32})", output).group(1)
        with app.app_context():  # shop-wide, from Sam's conversation: in Alex's prompt next
            remember(SessionScope.for_user(find_user("sam@example.com")), SHARED, app.config,
                     source="distilled", personal=False, conversation_id=conversation_id)
        runner.invoke(args=["ask", "Where is my order #1041?"])
        with app.app_context():
            make_account("pat@example.com", "staff")
            staff = app.test_client()
            sign_in(staff, "pat@example.com")
            assert staff.get("/staff?q=umbrella&outcome=&min_turns=1").text.count("/staff/c/") == 1
            assert "Where is my order #1041" in staff.get("/staff?customer=alex").text
            assert staff.get(f"/c/{conversation_id}/viewer").status_code == 200
        assert runner.invoke(args=["users", "delete", "sam@example.com"]).exit_code == 0
        with app.app_context():
            assert find_user("sam@example.com") is None
            assert db.session.get(Conversation, conversation_id) is None
            # Alex's question is left, beside the long conversation init-db --demo made for Alex.
            assert db.session.scalar(db.select(db.func.count()).select_from(Conversation)
                                     .where(Conversation.title != DEMO_TITLE)) == 1
            texts = db.session.scalars(db.select(RequestText.text)).all()
            assert not any(SHARED in t for t in texts) and any(REDACTED in t for t in texts)
            db.session.remove()
    finally:
        with app.app_context():
            db.engine.dispose()
