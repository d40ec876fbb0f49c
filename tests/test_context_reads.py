"""What assembly reads: the sized tail plans as reading every turn would, in few statements."""
import random
import re
from contextlib import contextmanager

import pytest
from sqlalchemy import event

from webapp.extensions import db
from webapp.llm.messages import assistant_message, tool_message, user_message
from webapp.context.assemble import STRATEGIES, Policy, assemble, plan_history
from webapp.context.tail import newest_first
from webapp.models import Conversation
from webapp.storage import all_turns, create_conversation, finish_turn, start_turn


def varied_conversation(user, turns=60, seed=7):
    """Turns of very different sizes, some with tool calls, so estimates of rows are off."""
    rng = random.Random(seed)
    conversation = create_conversation(user)
    for i in range(turns):
        question = f"question {i} " + "q" * rng.choice([5, 40, 400, 1500])
        turn = start_turn(conversation, question)
        messages = [user_message(question)]
        if rng.random() < 0.4:
            call = {"id": f"c{i}", "name": "lookup_order", "arguments": {"order_id": i}}
            messages += [assistant_message("", [call]),
                         tool_message("c%d" % i, "lookup_order", {"x": "r" * rng.choice([10, 900])})]
        messages.append(assistant_message("a" * rng.choice([3, 80, 600])))
        finish_turn(turn, messages, "answered", [], {}, 0, 0)
    return conversation


@pytest.mark.parametrize("name", sorted(STRATEGIES))
@pytest.mark.parametrize("budget", [60, 700, 3000, 40000])
@pytest.mark.parametrize("rows", [1, 3, 64])
def test_the_sized_tail_plans_as_reading_every_turn_does(app, alex, name, budget, rows):
    conversation = varied_conversation(alex)
    policy = Policy(strategy=name, budget=budget, recent_turns=2, candidate_pool=20,
                    max_age_days=365)
    every = plan_history(reversed(all_turns(conversation.id)), policy)
    sized = plan_history(newest_first(conversation.id, None, rows), policy)
    assert [(f.seq, f.fate, f.reason, f.messages, f.tokens) for f in sized.fates] == \
           [(f.seq, f.fate, f.reason, f.messages, f.tokens) for f in every.fates]
    assert sized.older == every.older


def test_the_tail_stops_before_a_given_turn(app, alex):
    conversation = varied_conversation(alex, turns=12)
    assert [t.seq for t in newest_first(conversation.id, 5, 2)] == [4, 3, 2, 1, 0]


@contextmanager
def statements():
    seen = []

    def record(conn, cursor, statement, parameters, context, executemany):
        seen.append(statement)
    event.listen(db.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", record)


def fresh(conversation_id):
    """As a request starts: a new session, the conversation, tenant and user loaded."""
    db.session.remove()
    conversation = db.session.get(Conversation, conversation_id)
    conversation.tenant, conversation.user  # noqa: B018
    return conversation


def test_a_request_reads_the_tail_in_one_statement_and_memories_not_at_all(app, alex):
    conversation = fresh(varied_conversation(alex, turns=200).id)
    with statements() as seen:
        plan = assemble(conversation, app.config)
    assert plan.section("history").messages
    assert sum(bool(re.search(r"\bFROM turns\b", s)) for s in seen) == 1
    assert not [s for s in seen if "memories" in s or "orders" in s]


def test_the_first_memory_and_summary_mark_the_rows_a_request_loads(app, alex, sam):
    from webapp.memories.store.scopes import SessionScope
    from webapp.memories.store.rows import remember
    from webapp.context.summary.models import ConversationSummary
    conversation, sam_id = create_conversation(alex), sam.id
    remember(SessionScope.for_user(alex), "Alex prefers email.", app.config, source="hand")
    assert fresh(conversation.id).user.personal_memories
    assert not db.session.get(type(sam), sam_id).personal_memories
    db.session.add(ConversationSummary(conversation_id=conversation.id, style="concise",
                                       text="x", through_seq=0, topics=[]))
    db.session.commit()
    assert fresh(conversation.id).has_summary
    assert assemble(fresh(conversation.id), app.config).section("memory") is not None
