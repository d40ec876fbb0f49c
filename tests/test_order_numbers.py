"""One order-number pattern: the chat, the summary and the distiller read #1041, order 1041 and
order no. 1041 alike, and none of them takes a phone number or a date for an order."""
import pytest

from webapp.context.summary.offline import topics_of
from webapp.memories.distiller.distil import distil_conversation
from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.rows import newest
from webapp.shop.order_numbers import order_numbers

from .support import ask

FORMS = ["#1041", "order 1041", "order no. 1041", "Order No. 1041", "order number 1041",
         "order #1041"]


@pytest.mark.parametrize("form", FORMS)
def test_each_way_of_writing_an_order_number_reads_as_1041(form):
    assert order_numbers(f"Where is {form}?") == [1041]
    assert order_numbers(f"Where is {form}?", marked=True) == [1041]


@pytest.mark.parametrize("text", ["Call me on 555-0142.", "It was on 2026-12-01.", "#01041",
                                  "Reference 10412345."])
def test_phone_numbers_dates_and_long_figures_are_not_orders(text):
    assert order_numbers(text) == []


def test_a_bare_number_is_read_but_not_marked_as_an_order():
    assert order_numbers("What about 1042?") == [1042]
    assert order_numbers("In 2025 I ordered a jacket.", marked=True) == []


@pytest.mark.parametrize("form", FORMS)
def test_the_offline_model_answers_about_the_order_however_it_is_written(alex, form):
    answer, _, _ = ask(alex, f"Where is my {form}?")
    assert "**$89.00**" in answer and "**shipped**" in answer


@pytest.mark.parametrize("form", FORMS)
def test_the_offline_summary_files_the_order_as_a_topic(form):
    assert "order #1041" in topics_of(f"My {form} arrived torn.")


def test_the_offline_summary_makes_no_topic_of_a_year():
    assert not [t for t in topics_of("In 2025 I bought a rain jacket.") if t.startswith("order")]


@pytest.mark.parametrize("form", FORMS)
def test_the_distiller_files_a_preference_under_the_order(app, alex, form):
    _, conversation, _ = ask(alex, f"I prefer to collect {form} myself.")
    assert distil_conversation(conversation.id) == "wrote 1 memory"
    memory, = newest(SessionScope.for_user(alex), 5)
    assert memory.memorable_type == "order" and "collect" in memory.content
