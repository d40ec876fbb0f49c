"""The seed's refund conversation, end to end through the CLI with the offline model."""
import re

from .support import run


def test_refund_scenario_end_to_end(runner):
    first = run(runner, "ask", "Can I get a refund for order #1043?")
    conversation = re.search(r"^conversation: ([0-9a-f]{32})$", first, re.M).group(1)
    assert "not" in first.lower() or "sorry" in first.lower()
    assert "20 days" in first and "14 days" in first

    second = run(runner, "ask", "OK. What about my other order, 1042?", "--conversation", conversation)
    assert "#1042 is eligible" in second

    third = run(runner, "ask", "Yes please.", "--conversation", conversation)
    ticket = re.search(r"ticket #(\d+)", third).group(1)
    assert "1042" in third

    shown = run(runner, "show", conversation)
    assert shown.count("check_refund_eligibility(") == 2
    assert f'"ticket_id": {ticket}' in shown

    context = run(runner, "show", conversation, "--context")
    assert re.match(r"Context sent with the next question \(\d+ tokens", context)
    # Turn 1 compacted (its tool call gone), turns 2 and 3 in full.
    assert "check_refund_eligibility({\"order_id\": 1043})" not in context
    assert "Can I get a refund for order #1043?" in context
    assert "check_refund_eligibility({\"order_id\": 1042})" in context
    assert "create_support_ticket(" in context


def test_other_order_without_a_number_is_asked_not_guessed(runner):
    output = run(runner, "ask", "What about the other order?")
    assert "Which order do you mean?" in output


def test_ask_answers_the_last_line_is_the_conversation_id(runner):
    lines = run(runner, "ask", "How long does shipping take?").strip().splitlines()
    assert "3 to 5 business days" in lines[0]
    assert re.fullmatch(r"conversation: [0-9a-f]{32}", lines[-1])
