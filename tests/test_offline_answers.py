"""The offline demo model: paced words, Markdown where a person would use it, and no misreads."""
import time

import pytest

from webapp.chat.rendering import render_markdown
from webapp.llm import get_provider
from webapp.llm.base import Reply
from webapp.llm.offline import OfflineModel

from .support import ask


def words_and_reply(model, text="Hello"):
    pieces = list(model.stream([{"role": "user", "content": text}], []))
    return pieces[:-1], pieces[-1]


def test_words_come_at_the_configured_pace(monkeypatch):
    pauses = []
    monkeypatch.setattr("webapp.llm.offline.time.sleep", pauses.append)
    words, reply = words_and_reply(OfflineModel(words_per_second=20))
    assert isinstance(reply, Reply) and len(words) > 10
    assert pauses == [0.05] * (len(words) - 1)  # between words, never before the first


def test_zero_words_per_second_answers_at_once(monkeypatch):
    monkeypatch.setattr("webapp.llm.offline.time.sleep", lambda s: pytest.fail("slept"))
    words, _ = words_and_reply(OfflineModel(words_per_second=0))
    assert "".join(words).startswith("Hi! I'm")


def test_background_tasks_are_never_paced(monkeypatch):
    monkeypatch.setattr("webapp.llm.offline.TASKS", [lambda messages: "A summary of many words " * 20])
    monkeypatch.setattr("webapp.llm.offline.time.sleep", lambda s: pytest.fail("slept"))
    list(OfflineModel(words_per_second=5).stream([{"role": "user", "content": "x"}], []))


def test_the_configured_pace_reaches_the_model(app):
    app.config["NIMBUS_OFFLINE_WORDS_PER_SECOND"] = 8
    assert get_provider(app.config).pause == 0.125


def test_a_phone_number_is_not_an_order_number(alex):
    answer, _, events = ask(alex, "My phone number is 555-0134.")
    assert answer == "Thanks, noted: your phone number is 555-0134."
    assert not [e for e in events if e.kind == "tool_call"]


def test_contacting_support_is_not_the_customers_contact_preference(alex):
    _, conversation, _ = ask(alex, "I prefer email over phone.")
    answer, _, _ = ask(alex, "How do I contact support?", conversation)
    assert "“Contacting support”" in answer and "support@example.com" in answer


@pytest.mark.parametrize("question, article", [
    ("How do I cancel my order?", "Cancelling an order"),
    ("Is there a warranty on my headphones?", "Warranty"),
    ("Do you ship internationally?", "International shipping"),
    ("How do I return an item?", "How to return an item"),
    ("How long does shipping take?", "Shipping times"),
])
def test_help_questions_find_the_article_they_are_about(alex, question, article):
    answer, _, _ = ask(alex, question)
    assert f"(“{article}”)" in answer


def test_password_reset_steps_are_a_numbered_list(alex):
    answer, _, _ = ask(alex, "How do I reset my password?")
    html = render_markdown(answer)
    assert "<ol>" in html and html.count("<li>") == 4 and "Forgot password" in html


def test_my_orders_are_a_list_with_bold_amounts(alex):
    answer, _, events = ask(alex, "What are my orders?")
    assert [e.data["tool"] for e in events if e.kind == "tool_call"] == ["list_orders"]
    html = render_markdown(answer)
    assert html.count("<li>") == 5 and "<strong>$79.00</strong>" in html


def test_an_order_answer_puts_amount_and_status_in_bold(alex):
    answer, _, _ = ask(alex, "Where is my order #1041?")
    assert "**$89.00**" in answer and "**shipped**" in answer


def test_a_paced_reply_takes_its_time(alex):
    started = time.monotonic()
    ask(alex, "Hello", provider=OfflineModel(words_per_second=200))
    assert time.monotonic() - started >= 0.05  # ~20 words at 200 a second: never instant


def test_the_command_line_prints_its_answer_without_the_demo_pace(app, runner, monkeypatch):
    app.config["NIMBUS_OFFLINE_WORDS_PER_SECOND"] = 5
    monkeypatch.setattr("webapp.llm.offline.time.sleep", lambda s: pytest.fail("slept"))
    assert "Hi! I'm Nimbus" in runner.invoke(args=["ask", "Hello"]).output


def test_the_offline_model_follows_a_sign_off_and_a_tone():
    from webapp.llm.offline import follow_instructions
    formal = follow_instructions("Hi! I'm Pip. It's 3 days.", 'Be formal; sign off with "Kind regards, Pip".')
    assert formal == "Good day. I am Pip. It is 3 days.\n\nKind regards, Pip"
    assert follow_instructions("Hi! I'm Pip.", "Keep it casual.") == "Hey there! I'm Pip."
    assert follow_instructions("Hi! I'm Pip.", "") == "Hi! I'm Pip."
