"""The offline model follows a conversation: thanks, "the other one", what was asked before."""
import pytest

from .support import ask


def tools_called(events):
    return [e.data["tool"] for e in events if e.kind == "tool_call"]


@pytest.mark.parametrize("thanks", ["Thanks!", "thank you so much", "thx", "cheers", "ok thanks"])
def test_a_thank_you_gets_a_short_acknowledgement(app, alex, thanks):
    _, conversation, _ = ask(alex, "Where is my order #1043?")
    answer, _, _ = ask(alex, thanks, conversation)
    assert answer.startswith("You're welcome") and "help center" not in answer


@pytest.mark.parametrize("follow_up", ["and the other one?", "what about the other one", "the other order?"])
def test_the_other_one_after_a_refund_question_is_about_another_order(app, alex, follow_up):
    _, conversation, _ = ask(alex, "Can I get a refund for order #1043?")
    answer, _, events = ask(alex, follow_up, conversation)
    assert "password" not in answer.lower()
    assert "search_help_center" not in tools_called(events)
    assert {"list_orders", "check_refund_eligibility"} & set(tools_called(events))


@pytest.mark.parametrize("question", ["What did I ask you about shipping before?",
                                      "what did i ask about shipping earlier"])
def test_what_i_asked_before_searches_my_earlier_conversations(app, alex, question):
    _, _, events = ask(alex, question)
    assert "search_history" in tools_called(events)


@pytest.mark.parametrize("request_", ["I want to return my jacket", "can i return the rain jacket pls",
                                      "how do I send back my jacket?"])
def test_returning_an_item_finds_its_order_through_the_shops_tools(app, alex, request_):
    answer, _, events = ask(alex, request_)
    assert tools_called(events)[:2] == ["list_orders", "check_refund_eligibility"]
    assert "#1041" in answer


def test_a_summary_line_of_two_facts_answers_each_question_with_its_own(alex):
    from webapp.llm.offline import OfflineModel
    summary = "Summary of earlier turns:\nUser: My name is Dara and I live in Lisbon."
    for question, expected in [("What is my name?", "Your name is Dara."),
                               ("Where do I live?", "You live in Lisbon.")]:
        messages = [{"role": "system", "content": "You are Nimbus."},
                    {"role": "system", "content": summary},
                    {"role": "user", "content": question}]
        assert OfflineModel().respond(messages, set()).text == expected


def test_where_i_live_is_answered_without_my_name(app, alex):
    _, conversation, _ = ask(alex, "Hi, my name is Alex and I live in Porto.")
    answer, _, _ = ask(alex, "Where do I live?", conversation)
    assert answer == "You live in Porto."
