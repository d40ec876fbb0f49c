"""Long-term memory's axes: tenant always set and isolating, personal never applied to another."""
import pytest
from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError

from webapp.accounts import get_or_create_tenant, get_or_create_user
from webapp.extensions import db
from webapp.context.assemble import assemble
from webapp.memories.block import prompt_block, render
from webapp.memories.models import Memory
from webapp.memories.search.recall import for_prompt, search
from webapp.memories.store.scopes import InvalidScope, SessionScope
from webapp.memories.store.rows import newest, remember, visible
from webapp.storage import create_conversation, delete_conversation_for_good


@pytest.fixture
def other_shop(app):
    tenant = get_or_create_tenant("acme", "Acme")
    user = get_or_create_user(tenant, "kim@acme.test", "Kim")
    db.session.commit()
    return user


def note(user, content, config, **placement):
    return remember(SessionScope.for_user(user), content, config, source="hand", **placement)[0]


def test_a_memory_cannot_be_built_without_a_tenant(app):
    with pytest.raises(TypeError):
        Memory(content="x", source="hand")
    with pytest.raises(ValueError):
        Memory(tenant_id=None, content="x", source="hand")


def test_the_database_refuses_a_memory_without_a_tenant(app):
    with pytest.raises(IntegrityError):
        db.session.execute(Memory.__table__.insert().values(content="x", source="hand"))
    db.session.rollback()


def test_another_tenants_memory_never_reaches_the_block_or_search(app, alex, other_shop):
    note(other_shop, "We bill fortnightly.", app.config, word="workspace", personal=False)
    note(other_shop, "Kim prefers email.", app.config)
    alex_scope = SessionScope.for_user(alex)
    assert prompt_block(alex_scope, app.config, "bill email") == ""
    assert search(alex_scope, "bill fortnightly email", app.config)[0] == []
    assert newest(alex_scope, 50) == []
    foreign = newest(SessionScope.for_user(other_shop), 1)[0]
    assert visible(alex_scope, foreign.id) is None


def test_personal_memories_never_apply_to_another_person(app, alex, sam):
    note(alex, "Alex prefers email over phone.", app.config)
    note(alex, "Alex's account is a business account.", app.config, word="account",
         personal=False)
    assert "email" in prompt_block(SessionScope.for_user(alex), app.config)
    sams = SessionScope.for_user(sam)
    assert prompt_block(sams, app.config) == ""
    assert search(sams, "email business account", app.config)[0] == []


def test_shared_workspace_memories_apply_to_everyone_in_the_tenant(app, alex, sam):
    note(alex, "The shop closes on Sundays.", app.config, word="workspace", personal=False)
    assert "Sundays" in prompt_block(SessionScope.for_user(sam), app.config)


def test_the_block_groups_shared_apart_from_personal(app, alex):
    note(alex, "Alex prefers email over phone.", app.config)
    note(alex, "The shop closes on Sundays.", app.config, word="workspace", personal=False)
    note(alex, "Order 1042 is a birthday present.", app.config, word="order",
         order_number=1042, personal=False)
    block = prompt_block(SessionScope.for_user(alex), app.config)
    shared_at = block.index("Shared, about the whole shop")
    order_at = block.index("Shared, about order #1042")
    personal_at = block.index("Personal to Alex Rivera")
    assert shared_at < block.index("Sundays") < order_at < block.index("birthday") < personal_at
    assert block.index("email") > personal_at


def test_the_block_is_empty_when_nothing_applies(app, alex):
    assert prompt_block(SessionScope.for_user(alex), app.config) == ""
    assert render([], SessionScope.for_user(alex)) == ""


def test_an_order_that_is_not_theirs_is_refused(app, alex):
    with pytest.raises(InvalidScope):
        note(alex, "x", app.config, word="order", order_number=9999)
    with pytest.raises(InvalidScope):
        note(alex, "x", app.config, word="tenant")


def test_the_block_holds_the_newest_n_by_recency(app, alex):
    app.config["NIMBUS_MEMORY_BLOCK_LIMIT"] = 3
    for i in range(5):
        note(alex, f"Fact number {i}.", app.config)
    recalled, mode = for_prompt(SessionScope.for_user(alex), app.config)
    assert mode == "recency"
    assert [m.content for m, _ in recalled] == ["Fact number 4.", "Fact number 3.",
                                                 "Fact number 2."]
    assert [why for _, why in recalled] == ["recency rank 1", "recency rank 2", "recency rank 3"]


def test_the_memory_section_comes_first_with_its_detail(app, alex):
    conversation = create_conversation(alex)
    memory = note(alex, "Alex prefers email over phone.", app.config)
    plan = assemble(conversation, app.config)
    assert [s.name for s in plan.sections][:2] == ["system", "memory"]
    section = plan.section("memory")
    assert section.tokens > 0 and section.messages[0]["role"] == "system"
    detail = section.detail["memories"][0]
    assert (detail["id"], detail["scope"], detail["why"]) == (memory.id, "workspace · personal",
                                                              "recency rank 1")


def test_purging_a_conversation_keeps_its_memories(app, alex):
    conversation = create_conversation(alex)
    memory = remember(SessionScope.for_user(alex), "Alex prefers email.", app.config,
                      source="tool", conversation_id=conversation.id, turn_seq=0)[0]
    delete_conversation_for_good(conversation)
    db.session.expire_all()
    kept = db.session.get(Memory, memory.id)
    assert kept.content == "Alex prefers email." and kept.conversation_id is None


def test_the_same_memory_is_not_written_twice(app, alex):
    scope = SessionScope.for_user(alex)
    first, created = remember(scope, "Alex prefers email.", app.config, source="tool")
    again, created_again = remember(scope, "alex prefers  EMAIL.", app.config, source="hand")
    assert created and not created_again and first.id == again.id


def test_the_memory_section_comes_before_the_summary(app):
    from webapp.context.assemble import SECTION_SOURCES
    from webapp.memories.block import memory_section
    from webapp.context.summary.section import summary_section
    assert SECTION_SOURCES.index(memory_section) < SECTION_SOURCES.index(summary_section)


def every_pairing(alex, sam) -> None:
    """Memories of one shop in every (memorable, subject) pairing of two customers, orders too."""
    from webapp.shop.models import Order
    orders = {user.id: db.session.scalars(select(Order.id).where(Order.customer_id == user.id)
                                          .limit(2)).all() for user in (alex, sam)}
    abouts = [(None, None), ("account", alex.id), ("account", sam.id),
              *[("order", o) for user in (alex, sam) for o in orders[user.id]]]
    db.session.execute(insert(Memory), [
        {"tenant_id": alex.tenant_id, "memorable_type": kind, "memorable_id": about,
         "subject_id": subject, "source": "hand", "content": f"memory {n} {i}"}
        for n in range(3) for i, ((kind, about), subject) in enumerate(
            (a, s) for a in abouts for s in (None, alex.id, sam.id))])
    db.session.commit()


def as_one_condition(scope: SessionScope):
    """The scope as it was first written: one condition over the tenant's memories."""
    from sqlalchemy import and_, or_
    memorable = [Memory.memorable_type.is_(None)]
    subjects = [Memory.subject_id.is_(None)]
    if scope.subject_id is not None:
        memorable.append(and_(Memory.memorable_type == "account",
                              Memory.memorable_id == scope.subject_id))
        subjects.append(Memory.subject_id == scope.subject_id)
    if scope.orders:
        memorable.append(and_(Memory.memorable_type == "order",
                              Memory.memorable_id.in_(list(scope.orders.values()))))
    return and_(Memory.tenant_id == scope.tenant_id, or_(*memorable), or_(*subjects))


@pytest.mark.parametrize("limit", [1, 4, 100])
def test_the_newest_memories_read_pairing_by_pairing_are_those_of_one_condition(app, alex, sam,
                                                                                 limit):
    every_pairing(alex, sam)
    for scope in (SessionScope.for_user(alex), SessionScope.for_user(sam),
                  SessionScope(alex.tenant_id, None)):
        expected = db.session.scalars(select(Memory.id).where(as_one_condition(scope))
                                      .order_by(Memory.id.desc()).limit(limit)).all()
        assert [m.id for m in newest(scope, limit)] == expected != []
        assert sorted(db.session.scalars(select(Memory.id).where(scope.applies()))) == \
            sorted(db.session.scalars(select(Memory.id).where(as_one_condition(scope))))


def test_a_reply_does_not_walk_the_memories_of_the_shops_other_customers(app, alex, sam):
    """The prompt block's newest memories come from the person's own index ranges, however many
    memories the shop keeps about everyone else."""
    from .support import sqlite_steps
    app.config["NIMBUS_MEMORY_SEARCH"] = False
    scope = SessionScope.for_user(alex)
    for i in range(12):
        note(alex, f"Alex likes colour {i}.", app.config)

    def block():
        assert len(for_prompt(scope, app.config)[0]) == app.config["NIMBUS_MEMORY_BLOCK_LIMIT"]
    block()
    alone = sqlite_steps(block)
    db.session.execute(insert(Memory), [
        {"tenant_id": sam.tenant_id, "memorable_type": "account", "memorable_id": sam.id,
         "subject_id": sam.id, "source": "hand", "content": f"Sam's note {i}"}
        for i in range(3000)])
    db.session.commit()
    assert sqlite_steps(block) < alone * 1.5
