"""Share links: staff create one from the viewer; it works signed out, read-only, until it
expires or is revoked; a forged or altered link is a missing page."""
import re
from datetime import timedelta

import pytest

from webapp.extensions import db
from webapp.models import AuditEntry, ShareLink, utcnow

from .accounts_support import fresh_request_globals, make_account, sign_in
from .support import ask


@pytest.fixture
def shared(app, client, alex):
    _, conversation, _ = ask(alex, "Where is my order #1041?")
    make_account("pat@example.com", "staff")
    sign_in(client, "pat@example.com")
    assert "Create share link" in client.get(f"/c/{conversation.id}/viewer").text
    assert client.post(f"/c/{conversation.id}/share", data={"days": "3"}).status_code == 303
    console = client.get("/staff").text
    url = re.search(r'class="share-url" readonly value="([^"]+)"', console).group(1)
    fresh_request_globals()
    return conversation, url.replace("http://localhost", "")


def test_a_share_link_shows_the_viewer_signed_out_without_any_form(app, shared):
    conversation, path = shared
    stranger = app.test_client()
    page = stranger.get(path)
    assert page.status_code == 200 and "Where is my order #1041?" in page.text
    body = page.text.split("<main")[1]
    assert "<form" not in body and "what-if" not in body and "Sign out" not in page.text
    header = page.text.split("<header")[1].split("</header>")[0]
    assert "A shared conversation, read-only" in header
    assert "/memories" not in header and ">Chat<" not in header
    assert AuditEntry.query.filter_by(action="created share link").count() == 1
    assert AuditEntry.query.filter_by(action="opened share link").one().actor_id is None


def share_with_memories(app, client, alex, **form):
    from webapp.memories.store.scopes import SessionScope
    from webapp.memories.store.rows import remember, remember_for_everyone
    remember(SessionScope.for_user(alex), "My locker code is 4417.", app.config, source="hand")
    remember_for_everyone(alex.tenant_id, "Refunds take five working days.", app.config)
    _, conversation, _ = ask(alex, "Where is my order #1041?")
    make_account("pat@example.com", "staff")
    sign_in(client, "pat@example.com")
    viewer = client.get(f"/c/{conversation.id}/viewer").text
    assert "My locker code is 4417." in viewer  # staff see what was sent
    assert client.post(f"/c/{conversation.id}/share", data={"days": "3", **form}).status_code == 303
    url = re.search(r'class="share-url" readonly value="([^"]+)"', client.get("/staff").text).group(1)
    fresh_request_globals()
    return app.test_client().get(url.replace("http://localhost", "")).text


def test_a_share_link_never_shows_personal_memories_only_how_many_and_their_scopes(app, client, alex):
    page = share_with_memories(app, client, alex)
    assert "4417" not in page and "Refunds take five working days." not in page
    assert "2 memories: 1 workspace · personal, 1 workspace · shared" in page


def test_staff_may_choose_to_include_shop_wide_memories_in_a_share(app, client, alex):
    page = share_with_memories(app, client, alex, shared_memories="1")
    assert "Refunds take five working days." in page and "4417" not in page
    assert ShareLink.query.one().include_shared_memories


def test_a_shared_page_is_never_cached(app, shared):
    assert "no-store" in app.test_client().get(shared[1]).headers["Cache-Control"]


def test_a_share_link_lasts_as_long_as_chosen(shared):
    link = ShareLink.query.one()
    assert timedelta(days=2, hours=23) < link.expires_at - utcnow() <= timedelta(days=3)


def test_an_expired_link_is_a_missing_page(app, shared):
    _, path = shared
    ShareLink.query.one().expires_at = utcnow() - timedelta(seconds=1)
    db.session.commit()
    assert app.test_client().get(path).status_code == 404


def test_a_revoked_link_is_a_missing_page(app, client, shared):
    _, path = shared
    link = ShareLink.query.one()
    assert client.post(f"/staff/shares/{link.id}/revoke").status_code == 303
    assert "revoked" in client.get("/staff").text
    assert app.test_client().get(path).status_code == 404


def test_an_altered_link_is_a_missing_page(app, shared):
    _, path = shared
    assert app.test_client().get(path[:-2] + ("aa" if not path.endswith("aa") else "bb")).status_code == 404
    assert app.test_client().get("/s/WzEsImtleSJd").status_code == 404


@pytest.mark.parametrize("days", ["0", "91", "soon"])
def test_a_share_link_lasts_one_to_ninety_days(client, shared, days):
    conversation, _ = shared
    assert client.post(f"/c/{conversation.id}/share", data={"days": days}).status_code == 400


def test_a_deleted_conversations_title_leaves_the_consoles_share_links_at_once(client, shared):
    from webapp.storage import mark_deleted
    conversation, _ = shared
    conversation.title = "Rash on my left arm"
    db.session.commit()
    assert "Rash on my left arm" in client.get("/staff").text
    mark_deleted(conversation)
    console = client.get("/staff").text
    assert "Rash on my left arm" not in console and "deleted by its owner" in console
