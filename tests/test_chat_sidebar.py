"""The sidebar: short titles from first messages, and conversations grouped by when they were used."""
import re
from datetime import datetime, timedelta

import pytest

from webapp.chat.sidebar import date_group
from webapp.titles import short_title
from webapp.extensions import db
from webapp.models import Conversation, utcnow

from .test_chat import start


@pytest.mark.parametrize("message, title", [
    ("Can I get a refund for order #1043?", "Refund for order #1043"),
    ("Where is my order #1041?", "Where is my order #1041"),
    ("Hi! I need to know how returns work.", "How returns work"),
    ("hello there! could you please tell me where order 1042 is? thanks", "Where order 1042 is"),
    ("I want to cancel my order #1044 because it arrived late and broken, twice", "Cancel my order #1044"),
    # a long first sentence ends where a clause ends, never on a comma or a word that needs the next
    ("I bought a jacket, order 1043, can I return it?", "I bought a jacket, order 1043"),
    ("Hello, my package arrived damaged and the box was wet, what do I do", "My package arrived damaged"),
    ("Where is my order #1044 and when will it arrive", "Where is my order #1044"),
    ("My order, which I placed on Monday, has not shipped yet", "My order, which I placed on Monday"),
    ("Please tell me the status of the shipment for the order I placed", "Tell me the status of the shipment"),
    ("Hello", "Hello"),
    ("???", "???"),
    ("hello 0", "Hello 0"),  # what is left after the greeting says too little
    ("I need help", "I need help"),
    ("I want a refund", "I want a refund"),
])
def test_a_first_message_becomes_a_short_title(message, title):
    assert short_title(message) == title


def test_a_terminal_or_imported_chat_gets_a_short_title_too(app, alex, runner):
    from webapp.transfer import import_conversation
    long = ("Hi! I need to know how returns work, because " + "my parcel arrived late and " * 6).strip()
    output = runner.invoke(args=["ask", long]).output
    conversation = db.session.get(Conversation, re.search(r"[0-9a-f]{32}", output).group())
    assert conversation.title == "How returns work"
    imported = import_conversation([{"role": "user", "content": long},
                                    {"role": "assistant", "content": "Sure."}], alex)
    assert imported.title == conversation.title


def test_a_long_word_title_is_cut_with_an_ellipsis():
    title = short_title("x" * 300)
    assert len(title) <= 48 and title.endswith("…")


NOW = datetime(2026, 12, 1, 9, 30)


@pytest.mark.parametrize("updated, heading", [
    (NOW - timedelta(hours=9), "Today"), (NOW - timedelta(hours=10), "Yesterday"),
    (NOW - timedelta(days=3), "Previous 7 days"), (NOW - timedelta(days=7), "Previous 7 days"),
    (NOW - timedelta(days=8), "Older"), (NOW + timedelta(minutes=5), "Today")])
def test_conversations_are_grouped_by_the_day_they_were_last_used(updated, heading):
    assert date_group(updated, NOW.date()) == heading


def test_the_sidebar_shows_the_groups_newest_first(guest):
    old, _ = start(guest, "An old question")
    new, _ = start(guest, "A new question")
    db.session.get(Conversation, old).updated_at = utcnow() - timedelta(days=30)
    db.session.commit()
    page = guest.get("/").text
    sidebar = page[page.index('id="sidebar"'):page.index("</nav>", page.index('id="sidebar"'))]
    assert sidebar.index(">Today<") < sidebar.index("A new question") < sidebar.index(">Older<") \
        < sidebar.index("An old question")
    assert ">Yesterday<" not in sidebar


def sidebar_part(html: str) -> str:
    """What an answer tells the sidebar: the whole of it, one item put first, or nothing ("")."""
    if 'id="sidebar"' in html:
        return "whole"
    return "first" if 'hx-swap-oob="afterbegin:#conversations-today"' in html else ""


def send(guest, conversation_id: str, message: str) -> str:
    guest.get(f"/c/{conversation_id}/turns/0/stream").text  # the first reply, to its end
    return guest.post(f"/c/{conversation_id}/messages", data={"message": message}).text


def test_a_second_conversation_today_is_put_first_under_today_not_the_whole_sidebar(guest):
    _, first = start(guest, "Where is my order #1041?")
    assert sidebar_part(first.text) == "whole"  # nothing listed yet: the section is drawn
    second_id, second = start(guest, "How long does shipping take?")
    assert sidebar_part(second.text) == "first"
    item = second.text[second.text.index("afterbegin:#conversations-today"):]
    assert f'id="conversation-{second_id}" class="conversation-item is-open"' in item
    assert 'aria-current="page">How long does shipping take</a>' in item
    assert len(second.text) < len(first.text) + 4000  # one item, not the list again
    page = guest.get(f"/c/{second_id}").text
    today = page[page.index('id="conversations-today"'):]
    assert today.index(f"conversation-{second_id}") < today.index("Where is my order #1041")


def test_chatting_on_in_the_conversation_on_top_leaves_the_sidebar_alone(guest):
    conversation_id, _ = start(guest, "Where is my order #1041?")
    assert sidebar_part(send(guest, conversation_id, "And order #1042?")) == ""


def test_a_message_to_a_conversation_further_down_draws_the_sidebar_again(guest):
    older, _ = start(guest, "Where is my order #1041?")
    guest.get(f"/c/{older}/turns/0/stream").text
    newer, _ = start(guest, "How long does shipping take?")
    guest.get(f"/c/{newer}/turns/0/stream").text  # its reply, to its end
    sent = send(guest, older, "And order #1042?")
    assert sidebar_part(sent) == "whole"
    sidebar = sent[sent.index('id="sidebar"'):]
    assert sidebar.index(f"conversation-{older}") < sidebar.index(f"conversation-{newer}")


def test_a_first_conversation_of_the_day_draws_the_sidebar_with_its_heading(guest):
    yesterday, _ = start(guest, "Where is my order #1041?")
    guest.get(f"/c/{yesterday}/turns/0/stream").text
    db.session.get(Conversation, yesterday).updated_at = utcnow() - timedelta(days=1, hours=1)
    db.session.commit()
    today, started = start(guest, "How long does shipping take?")
    assert sidebar_part(started.text) == "whole"
    sidebar = started.text[started.text.index('id="sidebar"'):]
    assert sidebar.index(">Today<") < sidebar.index(f"conversation-{today}") \
        < sidebar.index(f"conversation-{yesterday}")
