"""Pin and archive in the sidebar: pinned on top, archived under "Archived", both undone from
their note; the owner's only, with the CSRF token."""
import re

import pytest

from webapp.extensions import db
from webapp.models import Conversation

from .support import ask, guest_user

HTMX = {"HX-Request": "true"}


@pytest.fixture
def three(guest):
    user = guest_user(guest)
    made = []
    for question in ("Where is my order #1041?", "How long does shipping take?", "Do gift cards expire?"):
        _, conversation, _ = ask(user, question)
        made.append(conversation)
    return made  # oldest first: the sidebar lists them the other way round


def sidebar_ids(html: str, section: str | None = None) -> list[str]:
    if section is not None:
        html = html.split(f'conversation-list--{section}')[1].split("</ul>")[0]
    return re.findall(r'<li id="conversation-([0-9a-f]{32})"', html)


def test_a_pinned_conversation_sits_on_top_under_pinned(guest, three):
    oldest = three[0]
    response = guest.post(f"/c/{oldest.id}/pin", headers=HTMX)
    assert response.status_code == 200 and ">Pinned</h2>" in response.text
    assert sidebar_ids(response.text, "pinned") == [oldest.id]
    page = guest.get("/").text
    assert sidebar_ids(page)[0] == oldest.id and f'Actions for “{oldest.title}”' in page and ">Unpin</button>" in page


def test_unpin_and_the_notes_undo_put_it_back_in_date_order(guest, three):
    oldest = three[0]
    pinned = guest.post(f"/c/{oldest.id}/pin", headers=HTMX).text
    assert f"Pinned “{oldest.title}”." in pinned and "hx-vals='{\"pinned\": \"0\"}'" in pinned
    undone = guest.post(f"/c/{oldest.id}/pin", data={"pinned": "0"}, headers=HTMX).text
    assert ">Pinned</h2>" not in undone and sidebar_ids(undone)[-1] == oldest.id


def test_archive_hides_it_under_a_closed_archived_section(guest, three):
    newest = three[-1]
    response = guest.post(f"/c/{newest.id}/archive", headers=HTMX).text
    assert f"Archived “{newest.title}”." in response
    assert sidebar_ids(response, "archived") == [newest.id]
    page = guest.get("/").text
    assert "Archived (1)</summary>" in page and '<details class="archived-section">' in page
    assert sidebar_ids(page)[:2] == [three[1].id, three[0].id]
    assert guest.get(f"/c/{newest.id}").status_code == 200  # archived, not gone


def test_unarchive_brings_it_back(guest, three):
    newest = three[-1]
    guest.post(f"/c/{newest.id}/archive", headers=HTMX)
    back = guest.post(f"/c/{newest.id}/archive", data={"archived": "0"}, headers=HTMX).text
    assert "Archived (" not in back and sidebar_ids(back)[0] == newest.id


def test_archiving_a_pinned_conversation_unpins_it(guest, three):
    guest.post(f"/c/{three[0].id}/pin", headers=HTMX)
    guest.post(f"/c/{three[0].id}/archive", headers=HTMX)
    db.session.expire_all()
    conversation = db.session.get(Conversation, three[0].id)
    assert conversation.pinned_at is None and conversation.archived_at is not None


@pytest.mark.parametrize("action", ["pin", "archive"])
def test_only_the_owner_may_pin_or_archive(client, sam, action):
    _, foreign, _ = ask(sam, "Hello")
    client.get("/")
    token = re.search(r'name="csrf-token" content="([^"]+)"', client.get("/").text).group(1)
    response = client.post(f"/c/{foreign.id}/{action}", headers={**HTMX, "X-CSRFToken": token})
    assert response.status_code == 404
    db.session.expire_all()
    assert db.session.get(Conversation, foreign.id).pinned_at is None


@pytest.mark.parametrize("action", ["pin", "archive"])
def test_pin_and_archive_need_the_csrf_token(guest, three, action):
    del guest.environ_base["HTTP_X_CSRFTOKEN"]
    assert guest.post(f"/c/{three[0].id}/{action}", headers=HTMX).status_code == 400
    db.session.expire_all()
    conversation = db.session.get(Conversation, three[0].id)
    assert conversation.pinned_at is None and conversation.archived_at is None
