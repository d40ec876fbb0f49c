"""The agent loop: tools, limits, fallbacks, and a saved, well-formed turn whatever happens."""
from webapp.agent.loop import FALLBACK_ERROR, FALLBACK_STEPS, REPEATED_CALL, run_turn
from webapp.llm.base import ProviderError
from webapp.extensions import db
from webapp.llm.messages import validate_turn
from webapp.models import utcnow
from webapp.shop.models import Order
from webapp.storage import all_turns, create_conversation, start_turn

from .support import ask
from .fakes.scripted_model import ScriptedModel


def test_tool_call_result_is_fed_back_to_the_model(alex):
    model = ScriptedModel({"tool": "lookup_order", "arguments": {"order_id": 1042}}, "It is paid.")
    answer, conversation, _ = ask(alex, "Where is order 1042?", provider=model)
    assert answer == "It is paid."
    tool_result = model.requests[1][-1]
    assert tool_result["role"] == "tool" and '"status": "paid"' in tool_result["content"]


def test_system_prompt_is_sent_fresh_and_never_stored(alex):
    model = ScriptedModel("Hello.")
    _, conversation, _ = ask(alex, "Hi", provider=model)
    assert model.requests[0][0]["role"] == "system"
    stored = [m for t in all_turns(conversation.id) for m in t.messages]
    assert all(m["role"] != "system" for m in stored)


def test_provider_error_saves_a_polite_fallback(alex):
    answer, conversation, events = ask(alex, "Hi", provider=ScriptedModel(ProviderError("down")))
    assert answer == FALLBACK_ERROR
    turn = all_turns(conversation.id)[0]
    assert (turn.outcome, turn.question, turn.answer) == ("api_error", "Hi", FALLBACK_ERROR)
    assert any(e.kind == "error" for e in events)


def test_step_limit_stops_the_loop_with_a_saved_answer(app, alex):
    app.config["NIMBUS_MAX_STEPS"] = 3
    calls = [{"tool": "lookup_order", "arguments": {"order_id": 1040 + i}} for i in range(5)]
    answer, conversation, _ = ask(alex, "Check everything", provider=ScriptedModel(*calls))
    assert answer == FALLBACK_STEPS
    turn = all_turns(conversation.id)[0]
    assert turn.outcome == "step_limit"
    validate_turn(turn.messages)


def test_repeating_the_exact_same_call_is_refused(alex):
    same = {"tool": "lookup_order", "arguments": {"order_id": 1042}}
    model = ScriptedModel(same, same, "Done.")
    ask(alex, "Order 1042?", provider=model)
    assert REPEATED_CALL in model.requests[2][-1]["content"]


def test_consumer_stopping_mid_stream_leaves_a_well_formed_turn(alex):
    conversation = create_conversation(alex)
    turn = start_turn(conversation, "Can I get a refund for order #1042?")
    events = run_turn(turn, ScriptedModel(
        {"tool": "check_refund_eligibility", "arguments": {"order_id": 1042}},
        "Good news: it is eligible for a refund."))
    for event in events:
        if event.kind == "token":
            break  # the browser went away mid-answer
    events.close()
    saved = all_turns(conversation.id)[0]
    assert saved.outcome == "interrupted"
    validate_turn(saved.messages)
    assert saved.messages[-1]["role"] == "assistant" and saved.answer


def test_retrying_a_pending_question_does_not_store_it_twice(alex):
    conversation = create_conversation(alex)
    first = start_turn(conversation, "Hello?")
    again = start_turn(conversation, "Hello?")
    assert first.id == again.id and len(all_turns(conversation.id)) == 1


def test_tools_only_see_the_customers_own_orders(alex, sam):
    db.session.add(Order(tenant_id=alex.tenant_id, customer_id=alex.id, number=7777,
                         item="Alex's secret", amount_cents=100, status="paid",
                         purchased_at=utcnow()))
    db.session.commit()
    model = ScriptedModel({"tool": "lookup_order", "arguments": {"order_id": 7777}}, "ok")
    ask(sam, "Order 7777?", provider=model)
    assert "No order #7777" in model.requests[1][-1]["content"]
    assert "secret" not in model.requests[1][-1]["content"]


def test_offline_model_recalls_only_what_its_context_holds(alex):
    answer, conversation, _ = ask(alex, "What is my name?")
    assert "don't know" in answer
    ask(alex, "My name is Dara.", conversation)
    answer, _, _ = ask(alex, "What is my name?", conversation)
    assert answer == "Your name is Dara."
