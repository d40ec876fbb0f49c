"""A shared page and a downloaded report show that a memory or history search ran, never what it
found: that text belongs to the customer's memories and other conversations, not to this one."""
import re

import pytest

from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.rows import remember

from .fakes.scripted_model import ScriptedModel
from .support import ask, guest_user

HTMX = {"HX-Request": "true"}
HIDDEN = "(searched your memories — hidden on shared pages)"


def share(guest, conversation) -> str:
    response = guest.post(f"/c/{conversation.id}/shares", headers=HTMX)
    return re.search(r'class="share-url" readonly value="http://localhost([^"]+)"',
                     response.text).group(1)


@pytest.fixture
def secrets(app, guest):
    """A personal memory and a private conversation, each holding a secret."""
    user = guest_user(guest)
    remember(SessionScope.for_user(user), "My locker code is 7319", app.config, source="hand")
    ask(user, "Note this: the spare key is under the blue flowerpot")
    return user


@pytest.mark.parametrize("tool, query, secret", [
    ("search_memories", "locker code", "7319"),
    ("search_history", "flowerpot", "blue flowerpot"),
])
def test_a_shared_link_hides_what_a_private_search_found(app, guest, secrets, tool, query, secret):
    model = ScriptedModel({"tool": tool, "arguments": {"query": query}}, "Done, I looked it up.")
    _, conversation, events = ask(secrets, "Please look something up", provider=model)
    assert secret in str([e.data for e in events])  # the search did find it, for the customer
    page = app.test_client().get(share(guest, conversation)).text
    assert "Done, I looked it up." in page and HIDDEN in page
    assert secret not in page


@pytest.mark.parametrize("tool, query, secret", [
    ("search_memories", "locker code", "7319"),
    ("search_history", "flowerpot", "blue flowerpot"),
])
def test_a_downloaded_report_hides_what_a_private_search_found(guest, secrets, tool, query, secret):
    model = ScriptedModel({"tool": tool, "arguments": {"query": query}}, "Done, I looked it up.")
    _, conversation, _ = ask(secrets, "Please look something up", provider=model)
    report = guest.get(f"/c/{conversation.id}/viewer/report.html").text
    assert HIDDEN in report and secret not in report


def test_the_owners_own_viewer_still_shows_what_the_search_found(guest, secrets):
    model = ScriptedModel({"tool": "search_memories", "arguments": {"query": "locker code"}}, "Done.")
    _, conversation, _ = ask(secrets, "Please look something up", provider=model)
    assert "7319" in guest.get(f"/c/{conversation.id}/viewer").text


@pytest.mark.parametrize("tool, query, secret", [
    ("search_memories", "locker code", "7319"),
    ("search_history", "flowerpot", "blue flowerpot"),
])
def test_a_regenerated_away_answer_on_a_shared_page_hides_what_its_search_found(
        app, guest, secrets, tool, query, secret):
    model = ScriptedModel({"tool": tool, "arguments": {"query": query}}, "Done, I looked it up.")
    _, conversation, _ = ask(secrets, "Please look something up", provider=model)
    assert guest.post(f"/c/{conversation.id}/turns/0/regenerate", headers=HTMX).status_code == 200
    guest.get(f"/c/{conversation.id}/turns/0/stream")
    assert secret in guest.get(f"/c/{conversation.id}/viewer").text  # the owner sees the version
    for page in (app.test_client().get(share(guest, conversation)).text,
                 guest.get(f"/c/{conversation.id}/viewer/report.html").text):
        assert "alternative 1 of 2 — not sent" in page and "Done, I looked it up." in page
        assert HIDDEN in page and secret not in page
