"""An interrupted answer says why: "Stopped" when somebody pressed Stop, "Interrupted — recovered"
when the worker writing it died and another closed it with the words it had."""
import re

import pytest

from webapp.extensions import db
from webapp.llm.messages import assistant_message, user_message
from webapp.runs.heartbeat import STOPPED_WAITING
from webapp.runs.turn_runs import GAVE_UP, TAKEN_OVER, close_turn
from webapp.storage import create_conversation, start_turn

from .support import guest_user


def tag_of(guest, why: str) -> str:
    conversation = create_conversation(guest_user(guest))
    turn = start_turn(conversation, "Where is my order #1041?")
    close_turn(turn, [user_message(turn.question), assistant_message("Order #1041 is")], why)
    db.session.commit()
    page = guest.get(f"/c/{conversation.id}").text
    return re.search(r'id="turn-1-answer".*?<span class="tag"[^>]*>([^<]+)</span>', page, re.S).group(1)


@pytest.mark.parametrize("why", [TAKEN_OVER, GAVE_UP])
def test_a_reply_closed_for_a_dead_worker_reads_interrupted_recovered(guest, why):
    assert tag_of(guest, why) == "Interrupted — recovered"


def test_a_reply_stopped_by_the_person_reads_stopped(guest):
    assert tag_of(guest, STOPPED_WAITING) == "Stopped"
