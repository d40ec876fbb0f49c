"""Customers share their own conversation from the chat's menu: a read-only link without their
personal memories, listed in the menu, revocable there; nobody else's, and with the CSRF token."""
import re

import pytest

from webapp.extensions import db
from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.rows import remember
from webapp.models import AuditEntry, ShareLink

from .support import ask, guest_user

HTMX = {"HX-Request": "true"}


@pytest.fixture
def conversation(guest):
    _, conversation, _ = ask(guest_user(guest), "Where is my order #1041?")
    return conversation


def share(guest, conversation) -> str:
    response = guest.post(f"/c/{conversation.id}/shares", headers=HTMX)
    assert response.status_code == 200
    return re.search(r'class="share-url" readonly value="http://localhost([^"]+)"',
                     response.text).group(1)


def test_the_chat_menu_offers_share_and_export(guest, conversation):
    page = guest.get(f"/c/{conversation.id}").text
    assert "Share a read-only link" in page and f'hx-post="/c/{conversation.id}/shares"' in page
    assert f"/c/{conversation.id}/export/markdown" in page and f"/c/{conversation.id}/export/nimbus" in page


def test_an_owner_shares_and_a_stranger_reads_it_signed_out(app, guest, conversation):
    path = share(guest, conversation)
    page = app.test_client().get(path)
    assert page.status_code == 200 and "Where is my order #1041?" in page.text
    assert path in guest.get(f"/c/{conversation.id}").text.replace("http://localhost", "")
    entry = AuditEntry.query.filter_by(action="created share link").one()
    assert entry.actor_id == guest_user(guest).id and "by its owner" in entry.detail


def test_a_customers_link_never_shows_personal_memories(app, guest):
    user = guest_user(guest)
    remember(SessionScope.for_user(user), "Lives at 12 Secret Street", app.config, source="hand")
    _, conversation, _ = ask(user, "Where is my order #1041?")
    page = app.test_client().get(share(guest, conversation)).text
    assert "Secret Street" not in page
    assert db.session.query(ShareLink).one().include_shared_memories is False


def test_revoking_it_in_the_menu_makes_the_link_a_missing_page(app, guest, conversation):
    path = share(guest, conversation)
    link = db.session.query(ShareLink).one()
    response = guest.post(f"/c/{conversation.id}/shares/{link.id}/revoke", headers=HTMX)
    assert response.status_code == 200 and "Share a read-only link" in response.text
    assert path not in response.text
    assert app.test_client().get(path).status_code == 404


def test_nobody_shares_or_revokes_another_customers_conversation(guest, sam):
    _, foreign, _ = ask(sam, "Hello")
    assert guest.post(f"/c/{foreign.id}/shares", headers=HTMX).status_code == 404
    assert db.session.query(ShareLink).count() == 0
    link = ShareLink(conversation_id=foreign.id, expires_at=foreign.created_at.replace(year=2100))
    db.session.add(link)
    db.session.commit()
    assert guest.post(f"/c/{foreign.id}/shares/{link.id}/revoke", headers=HTMX).status_code == 404
    db.session.refresh(link)
    assert link.revoked_at is None


def test_a_link_of_another_conversation_cannot_be_revoked_through_mine(guest, sam, conversation):
    _, foreign, _ = ask(sam, "Hello")
    link = ShareLink(conversation_id=foreign.id, expires_at=foreign.created_at.replace(year=2100))
    db.session.add(link)
    db.session.commit()
    assert guest.post(f"/c/{conversation.id}/shares/{link.id}/revoke").status_code == 404


def test_sharing_needs_the_csrf_token(guest, conversation):
    del guest.environ_base["HTTP_X_CSRFTOKEN"]
    assert guest.post(f"/c/{conversation.id}/shares", headers=HTMX).status_code == 400
    assert db.session.query(ShareLink).count() == 0


def test_share_links_cannot_be_made_in_a_flood(app, guest, conversation):
    app.config["NIMBUS_RATE_LIMIT_ENABLED"] = True
    answers = [guest.post(f"/c/{conversation.id}/shares", headers=HTMX).status_code
               for _ in range(12)]
    assert answers[:10] == [200] * 10 and answers[10] == 429
    assert db.session.query(ShareLink).count() == 10
