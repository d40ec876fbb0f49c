"""The chat page's routes: guests, sending, refusals, ownership, CSRF, rename and delete."""
import re

import pytest
from sqlalchemy import func, select

from webapp.extensions import db
from webapp.models import Conversation, Turn, User
from webapp.shop.models import Order
from webapp.storage import list_conversations

from .accounts_support import refused
from .support import ask, guest_user, sse_events, use_provider, wait_for_replies
from .fakes.scripted_model import ScriptedModel


def count(model) -> int:
    db.session.rollback()
    return db.session.scalar(select(func.count()).select_from(model))


def start(client, message):
    """Send a first message; return the new conversation's id and the response."""
    response = client.post("/messages", data={"message": message})
    assert response.status_code == 200, response.text
    return response.headers["HX-Push-Url"].rsplit("/", 1)[1], response


def test_reading_pages_stores_no_guest_and_the_first_write_makes_one_with_the_demo_orders(client):
    users = count(User)
    page = client.get("/")
    assert page.status_code == 200 and client.get("/").status_code == 200
    assert count(User) == users  # a visitor who only reads costs no row
    name = re.search(r"Guest [0-9a-f]{4}", page.text).group(0)
    client.environ_base["HTTP_X_CSRFTOKEN"] = re.search(
        r'csrf-token" content="([^"]+)"', page.text).group(1)
    assert client.post("/messages", data={"message": ""}).status_code == 204
    assert count(User) == users + 1
    guest = guest_user(client)
    assert guest.name == name  # the name its pages showed before it was stored
    assert guest.is_guest and guest.tenant.slug == "demo"
    numbers = db.session.scalars(select(Order.number).where(Order.customer_id == guest.id))
    assert sorted(numbers) == [1041, 1042, 1043, 1044, 1045]


def test_page_says_when_the_offline_model_answers(app, client):
    assert "Offline demo model" in client.get("/").text
    use_provider(app, type("RealModel", (ScriptedModel,), {"offline": False})())
    assert "Offline demo model" not in client.get("/").text


def test_first_message_starts_a_conversation_that_streams_its_reply(guest):
    conversation_id, response = start(guest, "Can I get a refund for order #1043?")
    assert "Can I get a refund for order #1043?" in response.text
    stream = re.search(r'sse-connect="([^"]+)"', response.text).group(1)
    assert stream == f"/c/{conversation_id}/turns/0/stream"
    assert 'sse-close="done"' in response.text and "button--stop" in response.text
    assert 'id="sidebar" class="sidebar" aria-label="Your conversations" hx-swap-oob="true"' in response.text

    events = sse_events(guest.get(stream).text)
    names = [name for name, _ in events]
    assert names[0] == "tool" and names[-1] == "done" and names.count("done") == 1
    assert "Checking order #1043…" in events[0][1]
    assert "Checked order #1043" in events[1][1] and 'hx-swap-oob="true"' in events[1][1]
    streamed = [data for name, data in events if name in ("block", "token")]
    assert streamed[-1].startswith("<p>Sorry, order #1043 was purchased 20 days ago")  # rendered
    assert "<p>Sorry, order #1043" in events[-1][1] and "<details" in events[-1][1]


def test_the_seed_conversation_ends_with_a_ticket_and_reloads_whole(guest):
    conversation_id, response = start(guest, "Can I get a refund for order #1043?")
    assert "#1043" in guest.get(f"/c/{conversation_id}/turns/0/stream").text
    for seq, message in ((1, "OK. What about my other order, 1042?"), (2, "Yes please.")):
        sent = guest.post(f"/c/{conversation_id}/messages", data={"message": message})
        assert f'sse-connect="/c/{conversation_id}/turns/{seq}/stream"' in sent.text
        done = sse_events(guest.get(f"/c/{conversation_id}/turns/{seq}/stream").text)[-1][1]
    ticket = re.search(r"ticket #(\d+)", done).group(1)

    page = guest.get(f"/c/{conversation_id}").text
    for text in ("Can I get a refund for order #1043?", "#1042 is eligible", f"ticket #{ticket}",
                 "Opened ticket #" + ticket):
        assert text in page
    assert "sse-connect" not in page


def test_a_finished_reply_is_sent_whole_without_asking_the_model_again(app, guest):
    model = use_provider(app, ScriptedModel("Hello there."))
    conversation_id, _ = start(guest, "Hi")
    first = sse_events(guest.get(f"/c/{conversation_id}/turns/0/stream").text)
    again = sse_events(guest.get(f"/c/{conversation_id}/turns/0/stream").text)
    assert len(model.requests) == 1
    assert [name for name, _ in again] == ["done"] and again[0][1] == first[-1][1]


@pytest.mark.parametrize("message", ["", "   ", "\n\t "])
def test_empty_message_is_ignored(guest, alex, message):
    conversation_id, _ = start(guest, "Hello")
    wait_for_replies(guest.application)
    conversations, turns = count(Conversation), count(Turn)
    assert guest.post("/messages", data={"message": message}).status_code == 204
    assert guest.post(f"/c/{conversation_id}/messages", data={"message": message}).status_code == 204
    assert (count(Conversation), count(Turn)) == (conversations, turns)


@pytest.mark.parametrize("new", [True, False])
def test_too_long_message_is_refused_and_nothing_stored(app, guest, new):
    conversation_id, _ = start(guest, "Hello")
    wait_for_replies(app)
    conversations, turns = count(Conversation), count(Turn)
    path = "/messages" if new else f"/c/{conversation_id}/messages"
    response = guest.post(path, data={"message": "x" * 8001}, headers={"HX-Request": "true"})
    assert response.status_code == 422
    assert "8,001 characters long; the limit is 8,000" in response.text
    assert response.headers["HX-Retarget"].startswith("#composer-error")
    assert (count(Conversation), count(Turn)) == (conversations, turns)


def test_message_while_a_reply_is_pending_is_refused(app, guest):
    conversation_id, _ = start(guest, "Hello")  # its stream was never opened: still pending
    response = guest.post(f"/c/{conversation_id}/messages", data={"message": "Are you there?"})
    assert response.status_code == 409 and "still answering" in response.text
    assert count(Turn) == 1


FOREIGN_ROUTES = [("get", "/c/{id}"), ("post", "/c/{id}/messages"), ("get", "/c/{id}/turns?before=5"),
                  ("get", "/c/{id}/rename"), ("get", "/c/{id}/item"), ("post", "/c/{id}/restore"),
                  ("get", "/c/{id}/turns/0/stream"), ("post", "/c/{id}/turns/0/stop"),
                  ("patch", "/c/{id}"), ("delete", "/c/{id}")]


@pytest.mark.parametrize("method, path", FOREIGN_ROUTES)
def test_someone_elses_conversation_is_404(guest, sam, method, path):
    _, conversation, _ = ask(sam, "Where is my order #1042?")
    response = getattr(guest, method)(path.format(id=conversation.id),
                                      data={"message": "hi"}, headers={"HX-Prompt": "mine"})
    assert refused(response)
    assert db.session.get(Conversation, conversation.id).title == "Where is my order #1042"
    assert count(Turn) == 1


@pytest.mark.parametrize("method, path", FOREIGN_ROUTES)
def test_unknown_conversation_is_404(guest, method, path):
    response = getattr(guest, method)(path.format(id="0" * 32), data={"message": "hi"})
    assert refused(response)


@pytest.mark.parametrize("path", ["/c/{id}/turns/7/stream", "/c/{id}/turns/7/stop"])
def test_unknown_turn_is_404(guest, path):
    conversation_id, _ = start(guest, "Hello")
    method = guest.get if path.endswith("stream") else guest.post
    assert method(path.format(id=conversation_id)).status_code == 404


@pytest.mark.parametrize("method, path", [("post", "/messages"), ("post", "/c/{id}/messages"),
                                          ("post", "/c/{id}/turns/0/stop"), ("patch", "/c/{id}"),
                                          ("delete", "/c/{id}")])
def test_state_changes_without_csrf_token_are_refused(app, guest, method, path):
    conversation_id, _ = start(guest, "Hello")
    wait_for_replies(app)
    del guest.environ_base["HTTP_X_CSRFTOKEN"]
    conversations, turns = count(Conversation), count(Turn)
    response = getattr(guest, method)(path.format(id=conversation_id),
                                      data={"message": "forged"}, headers={"HX-Prompt": "forged"})
    assert response.status_code == 400 and "This page has expired" in response.text
    assert (count(Conversation), count(Turn)) == (conversations, turns)
    assert db.session.get(Conversation, conversation_id).title == "Hello"


def test_rename_conversation_renames_title_and_tab(guest):
    conversation_id, _ = start(guest, "Hello")
    form = guest.get(f"/c/{conversation_id}/rename").text
    assert 'name="title" value="Hello"' in form and f'hx-patch="/c/{conversation_id}"' in form
    response = guest.patch(f"/c/{conversation_id}", data={"title": "  Refund   for 1042 "},
                           headers={"HX-Current-URL": f"http://localhost/c/{conversation_id}"})
    assert ('id="conversation-title" class="conversation-title" title="Refund for 1042" '
            'hx-swap-oob="true">Refund for 1042<') in response.text
    assert "<title>Refund for 1042 · Nimbus</title>" in response.text
    assert db.session.get(Conversation, conversation_id).title == "Refund for 1042"


def test_cancelling_a_rename_puts_the_item_back(guest):
    conversation_id, _ = start(guest, "Hello")
    item = guest.get(f"/c/{conversation_id}/item").text
    assert f'id="conversation-{conversation_id}"' in item and ">Hello</a>" in item


def test_a_sidebar_item_keeps_its_actions_behind_one_menu_button(guest):
    conversation_id, _ = start(guest, "Hello")
    item = guest.get(f"/c/{conversation_id}/item").text
    assert item.count("<button") == 5 and item.count('role="menuitem"') == 5  # the "…" and its menu
    assert 'aria-haspopup="menu" aria-expanded="false"' in item and 'aria-label="Actions for “Hello”"' in item
    assert f'aria-controls="actions-menu-{conversation_id}"' in item
    assert f'<ul class="action-menu__items" id="actions-menu-{conversation_id}" role="menu"' in item


def test_too_long_a_name_is_refused(guest):
    conversation_id, _ = start(guest, "Hello")
    response = guest.patch(f"/c/{conversation_id}", data={"title": "x" * 201})
    assert response.status_code == 422 and "at most 200 characters" in response.text
    assert db.session.get(Conversation, conversation_id).title == "Hello"


def test_rename_takes_titles_htmx_had_to_encode_and_ignores_blank_ones(guest):
    conversation_id, _ = start(guest, "Hello")
    guest.patch(f"/c/{conversation_id}", headers={"HX-Prompt": "%E9%9B%B2%20%E2%98%81",
                                                   "HX-Prompt-URI-AutoEncoded": "true"})
    assert db.session.get(Conversation, conversation_id).title == "雲 ☁"
    response = guest.patch(f"/c/{conversation_id}", headers={"HX-Prompt": "   "})
    assert "雲 ☁" in response.text and "hx-swap-oob" not in response.text


def test_delete_hides_a_conversation_at_once_and_offers_undo(app, guest):
    kept, _ = start(guest, "Keep me")
    gone, _ = start(guest, "Delete me")
    wait_for_replies(app)
    response = guest.delete(f"/c/{gone}", headers={"HX-Current-URL": f"http://localhost/c/{kept}"})
    assert response.status_code == 200 and "Keep me" in response.text
    assert f'id="conversation-{gone}"' not in response.text and "Deleted “Delete me”" in response.text
    assert f'hx-post="/c/{gone}/restore"' in response.text
    assert guest.get(f"/c/{gone}").status_code == 404


def test_undo_brings_a_deleted_conversation_back_whole(app, guest):
    gone, _ = start(guest, "Delete me")
    wait_for_replies(app)
    guest.delete(f"/c/{gone}")
    response = guest.post(f"/c/{gone}/restore")
    assert response.status_code == 200 and f'id="conversation-{gone}"' in response.text
    assert guest.get(f"/c/{gone}").status_code == 200 and count(Turn) == 1


def test_a_delete_is_final_once_the_undo_window_has_passed(app, guest):
    app.config["NIMBUS_DELETE_UNDO_SECONDS"] = 0
    gone, _ = start(guest, "Delete me")
    wait_for_replies(app)
    guest.delete(f"/c/{gone}")
    guest.get("/")  # the sidebar is drawn: deletions past their window are carried out
    assert count(Turn) == 0 and db.session.get(Conversation, gone) is None
    response = guest.post(f"/c/{gone}/restore")
    assert response.status_code == 404


def test_deleting_the_open_conversation_goes_back_to_a_new_chat_with_undo(guest):
    conversation_id, _ = start(guest, "Hello")
    response = guest.delete(f"/c/{conversation_id}",
                            headers={"HX-Current-URL": f"http://localhost/c/{conversation_id}"})
    assert response.headers["HX-Redirect"] == f"/?deleted={conversation_id}"
    page = guest.get(response.headers["HX-Redirect"]).text
    assert "Deleted “Hello”" in page and 'hx-vals=\'{"reopen": "1"}\'' in page
    reopened = guest.post(f"/c/{conversation_id}/restore", data={"reopen": "1"},
                          headers={"HX-Current-URL": "http://localhost/"})
    assert reopened.headers["HX-Redirect"] == f"/c/{conversation_id}"


def test_sidebar_lists_conversations_newest_first(guest):
    older, _ = start(guest, "Older question")
    newer, _ = start(guest, "Newer question")
    page = guest.get(f"/c/{older}").text
    sidebar = page[page.index('id="sidebar"'):page.index("</nav>", page.index('id="sidebar"'))]
    assert sidebar.index("Newer question") < sidebar.index("Older question")
    assert f'id="conversation-{older}" class="conversation-item is-open"' in page
    assert [c.id for c in list_conversations(guest_user(guest))] == [newer, older]


def test_a_stale_login_form_gets_a_page_that_says_why_and_leads_back(app, client):
    client.environ_base.pop("HTTP_X_CSRFTOKEN", None)
    response = client.post("/login", data={"email": "alex@example.com", "password": "x"})
    assert response.status_code == 400 and "<title>" in response.text
    assert "This page has expired" in response.text and "Go back" in response.text
