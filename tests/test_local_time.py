"""Times as the reader lives them: the browser's zone cookie, the shop's zone without one."""
from datetime import datetime

import pytest

from webapp.chat.sidebar import grouped
from webapp.extensions import db
from webapp.models import Conversation, Turn

from .support import use_provider
from .fakes.scripted_model import ScriptedModel
from .test_chat import start, wait_for_replies

LATE_EVENING_UTC = datetime(2026, 6, 1, 23, 30)  # 11:30 the next morning in Auckland (NZST)


def first_turn_at(app, guest, moment):
    conversation_id, _ = start(guest, "Where is my order?")
    guest.get(f"/c/{conversation_id}/turns/0/stream")  # the reply is written: the turn is done
    wait_for_replies(app)
    db.session.scalars(db.select(Turn).filter_by(conversation_id=conversation_id)).one() \
        .created_at = moment
    db.session.commit()
    return conversation_id


@pytest.mark.parametrize("cookie, shown, title", [
    ("Pacific/Auckland", ">11:30</time>", "2 Jun 2026, 11:30 NZST"),
    (None, ">23:30</time>", "1 Jun 2026, 23:30 UTC"),
    ("Mars/Olympus_Mons", ">23:30</time>", "1 Jun 2026, 23:30 UTC"),  # forged: the shop's zone
    ("../../etc/passwd", ">23:30</time>", "1 Jun 2026, 23:30 UTC")])
def test_message_times_are_in_the_readers_zone(app, guest, cookie, shown, title):
    conversation_id = first_turn_at(app, guest, LATE_EVENING_UTC)
    if cookie:
        guest.set_cookie("nimbus_tz", cookie)
    page = guest.get(f"/c/{conversation_id}").text
    assert shown in page and f'title="{title}"' in page


def test_without_a_cookie_pages_use_the_shops_zone(app, guest):
    app.config["NIMBUS_TIMEZONE"] = "America/New_York"
    conversation_id = first_turn_at(app, guest, LATE_EVENING_UTC)
    assert ">19:30</time>" in guest.get(f"/c/{conversation_id}").text


def test_today_and_yesterday_are_the_readers_days(app):
    now = datetime(2026, 12, 1, 10, 0)  # 02:00 on 1 December in Los Angeles
    conversation = Conversation(title="Late last night", updated_at=datetime(2026, 12, 1, 2, 0))
    with app.test_request_context(headers={"Cookie": "nimbus_tz=UTC"}):
        assert grouped([conversation], now)[0][0] == "Today"
    with app.test_request_context(headers={"Cookie": "nimbus_tz=America/Los_Angeles"}):
        assert grouped([conversation], now)[0][0] == "Yesterday"  # 18:00 on 30 November there


def test_a_reply_searches_the_readers_days(app, guest):
    """The search tool, called in the reply's run, reads "March 14" as the browser's March 14."""
    conversation_id = first_turn_at(app, guest, datetime(2026, 3, 15, 3, 0))  # 20:00 on the 14th in LA
    model = use_provider(app, ScriptedModel(
        {"tool": "search_history", "arguments": {"query": "March 14"}}, "Found it."))
    guest.set_cookie("nimbus_tz", "America/Los_Angeles")
    guest.post(f"/c/{conversation_id}/messages", data={"message": "What did I ask on March 14?"})
    guest.get(f"/c/{conversation_id}/turns/1/stream")
    wait_for_replies(app)
    assert "Where is my order?" in model.requests[1][-1]["content"]
