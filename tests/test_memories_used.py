"""'Used N memories' under an answer: the memories of its request, as the reader may see them."""
import pytest

from webapp.extensions import db
from webapp.chat.memories_used import memories_used
from webapp.context.manifest import memories_sent
from webapp.memories.models import Memory
from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.rows import delete_memory, remember, remember_for_everyone
from webapp.models import Turn

from .accounts_support import make_account, sign_in
from .support import ask, guest_user, run, sse_events
from .test_chat import start

HTMX = {"HX-Request": "true"}


@pytest.fixture
def answered(app, guest):
    """A guest with a personal note and a shop-wide memory, and a streamed answer that used both."""
    visitor = guest_user(guest)
    remember(SessionScope.for_user(visitor), "Prefers email over phone.", app.config, source="hand")
    remember_for_everyone(visitor.tenant_id, "The shop closes on Sundays.", app.config)
    conversation_id, _ = start(guest, "When are you open?")
    done = dict(sse_events(guest.get(f"/c/{conversation_id}/turns/0/stream").text))["done"]
    return conversation_id, done


def sent_ids(conversation_id):
    db.session.expire_all()
    turn = db.session.query(Turn).filter_by(conversation_id=conversation_id, seq=0).one()
    memory = next(s for s in turn.manifest["sections"] if s["name"] == "memory")
    return memory["memory_ids"]


def test_a_streamed_answer_ends_with_the_line(answered):
    _, done = answered
    assert "Used 2 memories" in done


def test_the_line_stays_on_reload_and_matches_the_manifest(guest, answered):
    conversation_id, _ = answered
    page = guest.get(f"/c/{conversation_id}").text
    count = len(sent_ids(conversation_id))
    assert count == 2 and f"Used {count} memories" in page


def test_the_list_shows_each_memory_as_the_customer_may_see_it(guest, answered):
    conversation_id, _ = answered
    listed = guest.get(f"/c/{conversation_id}/turns/1/memories", headers=HTMX).text
    assert "You prefer email over phone." in listed and "The shop closes on Sundays." in listed
    assert "applies to only you" in listed and "applies to every customer of the shop" in listed
    assert "rank" not in listed and "similarity" not in listed  # no debug scores for customers
    assert listed.count('href="/memories#memory-') == 2


def test_the_list_links_the_turn_a_memory_came_from(app, guest):
    visitor = guest_user(guest)
    first, _ = start(guest, "Hello")
    guest.get(f"/c/{first}/turns/0/stream").text
    remember(SessionScope.for_user(visitor), "Has a dog called Rex.", app.config, source="tool",
             conversation_id=first, turn_seq=0)
    second, _ = start(guest, "Hi again")
    guest.get(f"/c/{second}/turns/0/stream").text
    listed = guest.get(f"/c/{second}/turns/1/memories").text  # a plain page without script
    assert f'href="/c/{first}#turn-1-question">where it was learned</a>' in listed


def test_a_memory_deleted_since_is_counted_but_not_shown(app, guest, answered):
    conversation_id, _ = answered
    for memory_id in sent_ids(conversation_id):
        delete_memory(db.session.get(Memory, memory_id))
    listed = guest.get(f"/c/{conversation_id}/turns/1/memories", headers=HTMX).text
    assert "email over phone" not in listed and listed.count("since been deleted") == 2
    assert "Used 2 memories" in guest.get(f"/c/{conversation_id}").text


def test_another_customer_or_tenant_gets_404_and_staff_see_why(app, client, answered):
    conversation_id, _ = answered
    url = f"/c/{conversation_id}/turns/1/memories"
    make_account("cleo@example.com")
    make_account("olga@acme.test", "staff", tenant="acme")
    make_account("pat@example.com", "staff")
    for email in ("cleo@example.com", "olga@acme.test"):
        sign_in(client, email)
        assert client.get(url, headers=HTMX).status_code == 404
        client.post("/logout")
    sign_in(client, "pat@example.com")
    listed = client.get(url, headers=HTMX).text
    assert "prefers email over phone." in listed and "rank" in listed  # staff see the why
    assert "/memories#memory-" not in listed  # and no link to the customer's own panel
    assert "Used 2 memories" in client.get(f"/staff/c/{conversation_id}").text


def test_the_viewer_shows_the_same_figure(guest, answered):
    conversation_id, _ = answered
    assert "used 2 memories" in guest.get(f"/c/{conversation_id}/viewer").text


def test_an_answer_without_memories_has_no_line(guest):
    conversation_id, _ = start(guest, "Hello")
    done = dict(sse_events(guest.get(f"/c/{conversation_id}/turns/0/stream").text))["done"]
    assert "Used " not in done and "memories-used" not in done


def test_the_figure_survives_export_and_import(app, runner, alex, tmp_path):
    remember(SessionScope.for_user(alex), "Prefers email over phone.", app.config, source="hand")
    _, conversation, _ = ask(alex, "How do I prefer to be contacted?")
    exported = run(runner, "export", conversation.id)
    path = tmp_path / "export.json"
    path.write_text(exported)
    new_id = run(runner, "import", str(path)).split("conversation: ")[1].strip()
    turn = db.session.query(Turn).filter_by(conversation_id=new_id, seq=0).one()
    assert memories_used(turn) == 1 and memories_sent(turn.manifest)[0][1].startswith(
        ("recency", "similarity", "keyword", "no vector"))



def test_a_customer_reads_scopes_in_their_own_words(guest, answered):
    conversation_id, _ = answered
    listed = guest.get(f"/c/{conversation_id}/turns/1/memories", headers=HTMX).text
    assert "all your conversations · applies to only you" in listed
    assert "the whole shop · applies to every customer of the shop" in listed
    assert "workspace" not in listed
