"""Memory from the path that was lived: the distiller reads the branch shown; a memory learned on
a branch the person then left (edited away, or switched from) says so in the memory panel, which
offers Keep or Drop for it (a CSRF-protected post, the owner's alone); switching back to that
branch makes it a memory of the path shown again."""
import pytest

from webapp import branches
from webapp.extensions import db
from webapp.memories.distiller.distil import distil_conversation
from webapp.memories.models import Memory

from .support import ask, guest_user
from .test_branches import answer

HTMX = {"HX-Request": "true"}
LEFT = "I always pay by card."
SHOWN = "I always pay by bank transfer."


def memories(user) -> dict[str, str]:
    """The person's memories learned in conversations: content → branch_left."""
    db.session.expire_all()
    return {m.content: m.branch_left for m in db.session.scalars(
        db.select(Memory).where(Memory.subject_id == user.id, Memory.conversation_id.is_not(None)))}


@pytest.fixture
def edited(app, guest):
    """A guest told Nimbus how they pay, the distiller learned it, then they edited the message."""
    visitor = guest_user(guest)
    _, conversation, _ = ask(visitor, LEFT)
    distil_conversation(conversation.id)
    (learned,) = memories(visitor)
    answer(branches.fork(conversation, 0, SHOWN))
    distil_conversation(conversation.id)
    return visitor, conversation, learned


def test_the_distiller_reads_the_branch_shown_and_the_left_ones_memory_is_marked(edited):
    visitor, _, learned = edited
    found = memories(visitor)
    assert "card" in learned and found[learned] == "left"
    (new,) = [content for content in found if content != learned]
    assert "transfer" in new and found[new] == ""


def test_the_panel_says_where_it_was_learned_and_offers_keep_or_drop(edited, guest):
    _, _, learned = edited
    memory = db.session.scalar(db.select(Memory).where(Memory.content == learned))
    page = guest.get("/memories").text
    item = page.split(f'id="memory-{memory.id}"')[1].split("</li>")[0]
    assert "learned on a branch you left" in item
    assert f"Keep “{learned}”" in item and f"Drop “{learned}”" in item
    assert page.count("learned on a branch you left") == 1


def test_keep_keeps_it_and_says_so(edited, guest):
    visitor, _, learned = edited
    memory = db.session.scalar(db.select(Memory).where(Memory.content == learned))
    page = guest.post(f"/memories/{memory.id}/branch", data={"choice": "keep"}, headers=HTMX)
    assert page.status_code == 200 and "learned on a branch you left (you kept it)" in page.text
    assert f"Keep “{learned}”" not in page.text and memories(visitor)[learned] == "kept"


def test_drop_forgets_it(edited, guest):
    visitor, _, learned = edited
    memory = db.session.scalar(db.select(Memory).where(Memory.content == learned))
    response = guest.post(f"/memories/{memory.id}/branch", data={"choice": "drop"})
    assert response.status_code == 302 and learned not in memories(visitor)
    assert learned not in guest.get("/memories").text


def test_switching_back_makes_it_a_memory_of_the_path_shown_again(edited):
    visitor, conversation, learned = edited
    branches.switch(conversation, 0, 1)
    found = memories(visitor)
    assert found[learned] == ""
    assert [state for content, state in found.items() if content != learned] == ["left"]


def test_keep_or_drop_is_refused_in_words_never_a_500(edited, guest, alex, app):
    _, _, learned = edited
    memory = db.session.scalar(db.select(Memory).where(Memory.content == learned))
    assert guest.post(f"/memories/{memory.id}/branch", data={"choice": "maybe"}).status_code == 422
    lived = db.session.scalar(db.select(Memory).where(Memory.content != learned,
                                                      Memory.subject_id == memory.subject_id))
    refused = guest.post(f"/memories/{lived.id}/branch", data={"choice": "drop"})
    assert refused.status_code == 409 and "not learned on a branch you left" in refused.text
    _, other, _ = ask(alex, "I always pay by cheque.")
    distil_conversation(other.id)
    foreign = db.session.scalar(db.select(Memory).where(Memory.subject_id == alex.id))
    assert guest.post(f"/memories/{foreign.id}/branch", data={"choice": "drop"}).status_code == 404
    del guest.environ_base["HTTP_X_CSRFTOKEN"]
    assert guest.post(f"/memories/{memory.id}/branch", data={"choice": "drop"}).status_code == 400
    assert memories(guest_user(guest))[learned] == "left"


def test_learning_the_same_words_on_the_path_shown_makes_it_an_ordinary_memory(edited, app):
    from webapp.memories.store.rows import remember
    from webapp.memories.store.scopes import SessionScope
    visitor, conversation, learned = edited
    remember(SessionScope.for_user(visitor), learned, app.config, source="distilled",
             conversation_id=conversation.id, turn_seq=0)
    assert memories(visitor)[learned] == ""
