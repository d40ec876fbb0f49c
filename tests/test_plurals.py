"""Counts read as words: one helper for pages, commands and logs ("1 finished turn", "2 memories")."""
import re

import pytest

from webapp.plurals import plural

from .support import ask, guest_user


@pytest.mark.parametrize("count, word, said", [
    (1, "finished turn", "1 finished turn"), (31, "finished turn", "31 finished turns"),
    (0, "conversation", "0 conversations"), (1, "memory", "1 memory"),
    (2, "memory", "2 memories"), (2, "long-term memory", "2 long-term memories"),
    (1, "tool call", "1 tool call"), (3, "day", "3 days")])
def test_a_count_takes_the_form_its_number_needs(count, word, said):
    assert plural(count, word) == said


def test_an_irregular_plural_can_be_given():
    assert plural(2, "child", "children") == "2 children"


def test_pages_use_the_same_helper(app):
    with app.app_context():
        template = app.jinja_env.from_string('{{ 1 | plural("message") }}, {{ n | plural("message") }}')
        assert template.render(n=4) == "1 message, 4 messages"


def test_the_viewer_says_1_finished_turn_and_no_count_in_brackets(guest):
    _, conversation, _ = ask(guest_user(guest), "Where is my order #1041?")
    page = guest.get(f"/c/{conversation.id}/viewer").text
    assert "1 finished turn:" in page and "(s)" not in page
    sent = guest.get(f"/c/{conversation.id}/viewer/turns/1/sent").text
    assert "(s)" not in sent


def test_the_import_page_counts_turns_in_words(guest):
    from .test_transfer_views import DATA, upload
    page = upload(guest, DATA / "openai_messages.json").text
    assert re.search(r"· \d+ turns? ·", page) and "(s)" not in page
    assert not re.search(r"· 1 turns ·|· (?:[02-9]|\d\d+) turn ·", page)
