"""The summarizer call and the offline model's extractive summary: facts survive word for word."""
from dataclasses import dataclass

import pytest

from webapp.llm.base import ProviderError
from webapp.llm.offline import OfflineModel
from webapp.llm.tokens import estimate_text
from webapp.context.summary.fold import SummaryRejected, fold

from .fakes.scripted_model import ScriptedModel


@dataclass
class FakeTurn:
    seq: int
    question: str
    answer: str


TURNS = [
    FakeTurn(0, "Hi there!", "Hi! I'm Nimbus. What can I do for you?"),
    FakeTurn(1, "My name is Dara. I prefer email over phone calls.", "Nice to meet you, Dara!"),
    FakeTurn(2, "Where is order 1042?", "Order #1042 (Wireless headphones, $79.00) was placed on "
                                        "2026-11-27 and is paid."),
    FakeTurn(3, "Thanks, that helps a lot.", "You're welcome."),
    FakeTurn(4, "Our anniversary sale starts on 2 June.", "Noted."),
]


def test_offline_summary_keeps_facts_verbatim_and_drops_small_talk():
    text, topics = fold(OfflineModel(), "", [], TURNS, "concise", 600)
    assert text.splitlines() == [
        "User: My name is Dara.", "User: I prefer email over phone calls.",
        "Nimbus: Order #1042 (Wireless headphones, $79.00) was placed on 2026-11-27 and is paid.",
        "User: Our anniversary sale starts on 2 June."]
    assert topics == ["introductions", "contact details", "preferences", "order #1042"]


def test_folding_keeps_the_previous_summary_and_adds_the_new_turns():
    first, topics = fold(OfflineModel(), "", [], TURNS[:2], "concise", 600)
    text, topics = fold(OfflineModel(), first, topics, TURNS[2:], "concise", 600)
    assert text.startswith(first + "\n") and "2 June" in text
    assert "order #1042" in topics and topics[0] == "introductions"


@pytest.mark.parametrize("style, expected", [
    ("bullets", "- User: My name is Dara."),
    ("detailed", "Turn 3: asked “Where is order 1042?”\nNimbus: Order #1042"),
])
def test_styles_shape_the_summary(style, expected):
    text, _ = fold(OfflineModel(), "", [], TURNS, style, 600)
    assert expected in text
    if style == "bullets":
        assert all(line.startswith("- ") for line in text.splitlines())


def test_an_offline_summary_over_its_size_drops_the_least_important_lines_first():
    turns = [FakeTurn(i, f"My locker code number {i} is {1000 + i}.", f"Order #{i} is paid.")
             for i in range(60)]
    text, _ = fold(OfflineModel(), "", [], turns, "concise", 200)
    lines = text.splitlines()
    assert sum(estimate_text(line) + 1 for line in lines) <= 200
    assert all(line.startswith("User: ") for line in lines)  # Nimbus's lines went first
    assert lines[-1] == "User: My locker code number 59 is 1059."  # then the oldest facts


def test_any_model_may_summarize_and_name_topics():
    model = ScriptedModel("User: My name is Dara.\nNimbus: checked order #1042.\n"
                          "Topics: Orders, refunds")
    text, topics = fold(model, "User: I live in Lyon.", ["orders"], TURNS[1:3], "concise", 600)
    assert text == "User: My name is Dara.\nNimbus: checked order #1042."
    assert topics == ["orders", "refunds"]
    request = model.requests[0]
    assert request[0]["role"] == "system" and "Style: concise" in request[0]["content"]
    assert "Summary so far:\nUser: I live in Lyon." in request[1]["content"]
    assert "Turns 2–3, to fold in:\n[Turn 2]\nUser: My name is Dara." in request[1]["content"]


def test_a_model_that_overshoots_is_cut_at_a_line_boundary():
    model = ScriptedModel("\n".join(f"Line {i}: Dara, order 1042, " + "x" * 40 for i in range(50)))
    text, topics = fold(model, "", [], TURNS, "concise", 100)
    assert text.endswith("\n…") and estimate_text(text) <= 140 and topics == []


def test_a_paragraph_over_its_size_is_cut_at_a_word_not_lost():
    paragraph = "Dara from Lisbon asked about order 1042 and its scratched kettle again. " * 12
    text, _ = fold(ScriptedModel(paragraph + "\nTopics: orders"), "", [], TURNS, "concise", 40)
    assert text.startswith("Dara from Lisbon asked about order 1042") and text.endswith("\n…")
    assert estimate_text(text) <= 55


@pytest.mark.parametrize("reply", ["Summary:\n[Turn 7]", "Summary: (none yet)",
                                   "The customer talked to the assistant about several things."])
def test_a_marker_or_a_summary_that_lost_every_named_fact_is_refused(reply):
    with pytest.raises(SummaryRejected):
        fold(ScriptedModel(reply), "", [], TURNS, "concise", 600)


def test_a_summary_keeping_a_named_fact_passes_the_check():
    text, _ = fold(ScriptedModel("User: my name is Dara.\nTopics: name"), "", [], TURNS,
                   "concise", 600)
    assert text == "User: my name is Dara."


def test_an_empty_summary_is_an_error_to_retry():
    with pytest.raises(ProviderError):
        fold(ScriptedModel(" "), "", [], TURNS, "concise", 600)


@pytest.mark.parametrize("question, answer", [
    ("What is my name?", "Your name is Dara."),
    ("How do I prefer to be contacted?", "You prefer email over phone calls."),
])
def test_the_offline_model_recalls_the_customers_words_from_a_summary(question, answer):
    summary = ("Summary of the earlier conversation (turns 1–9):\nUser: My name is Dara.\n"
               "User: I prefer email over phone calls.\n"
               "Nimbus: Order #1041 (Rain jacket, $89.00) is shipped.")
    messages = [{"role": "system", "content": "You are Nimbus."},
                {"role": "system", "content": summary}, {"role": "user", "content": question}]
    assert OfflineModel().respond(messages, set()).text == answer


def test_what_nimbus_answered_is_not_recalled_as_a_fact_about_the_customer():
    messages = [{"role": "system", "content": "You are Nimbus."},
                {"role": "system", "content": "Summary:\nNimbus: Order #1041 is shipped."},
                {"role": "user", "content": "How long does shipping take?"}]
    reply = OfflineModel().respond(messages, {"search_help_center"})
    assert [c.name for c in reply.tool_calls] == ["search_help_center"]
