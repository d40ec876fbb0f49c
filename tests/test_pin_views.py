"""Keep in context / Leave out from the chat and the viewer: what the next request sends, who
may, the audit, and the viewer's what-if, compare and find-a-fact."""
import re

import pytest

from webapp.extensions import db
from webapp.models import AuditEntry, Turn
from webapp.storage import get_turn

from .accounts_support import make_account, sign_in
from .support import ask, guest_user
from .viewer_support import refund_conversation

HTMX = {"HX-Request": "true"}


@pytest.fixture
def conversation(guest):
    return refund_conversation(guest_user(guest))


def mark(client, conversation, seq, value, headers=HTMX):
    return client.post(f"/c/{conversation.id}/turns/{seq}/mark", data={"mark": value},
                       headers=headers)


def fates(html: str) -> dict[str, str]:
    return dict(re.findall(r'data-turn="(\d+)" data-fate="(\w+)"', html))


def test_keep_in_context_sends_a_turn_the_budget_would_drop(guest, conversation):
    conversation.settings = {"budget": 250}  # drops turn 1 (tests/viewer_support.py)
    db.session.commit()
    assert fates(guest.get(f"/c/{conversation.id}/viewer").text)["1"] == "DROPPED"
    response = mark(guest, conversation, 0, "pinned")
    assert response.status_code == 200 and "Kept in context" in response.text
    page = guest.get(f"/c/{conversation.id}/viewer").text
    assert fates(page)["1"] == "PINNED"
    assert "pinned by" in page
    user = guest_user(guest)
    ask(user, "And shipping?", conversation)
    sent = guest.get(f"/c/{conversation.id}/viewer/turns/4/sent.json").json
    history = next(s for s in sent["manifest"]["sections"] if s["name"] == "history")
    assert 0 in [seq for seq, _, _ in history["turns"]]
    assert [0, "PINNED"] == sent["manifest"]["marks"][0][:2]
    first_call = sent["calls"][0]["messages"]
    assert any(m.get("content") == "Can I get a refund for order #1043?" for m in first_call)


def test_leave_out_keeps_a_turn_out_of_the_next_request(guest, conversation):
    assert mark(guest, conversation, 1, "excluded").status_code == 200
    page = guest.get(f"/c/{conversation.id}/viewer").text
    assert fates(page)["2"] == "EXCLUDED" and "left out by" in page
    ask(guest_user(guest), "Thanks", conversation)
    sent = guest.get(f"/c/{conversation.id}/viewer/turns/4/sent.json").json
    history = next(s for s in sent["manifest"]["sections"] if s["name"] == "history")
    assert 1 not in [seq for seq, _, _ in history["turns"]]
    contents = [m.get("content") for m in sent["calls"][0]["messages"]]
    assert "OK. What about my other order, 1042?" not in contents
    assert "Yes please." in contents  # the turns around it are still sent


def test_a_mark_is_undone_with_none(guest, conversation):
    mark(guest, conversation, 1, "excluded")
    mark(guest, conversation, 1, "none")
    assert fates(guest.get(f"/c/{conversation.id}/viewer").text)["2"] == "FULL"
    turn = get_turn(conversation, 1)
    assert turn.mark is None and turn.marked_at is None


def test_the_chat_shows_the_controls_and_the_mark(guest, conversation):
    mark(guest, conversation, 0, "pinned")
    page = guest.get(f"/c/{conversation.id}").text
    assert page.count('class="turn-steer') == 3
    assert 'data-mark="pinned"' in page and "Kept in context" in page


def test_nobody_else_may_mark_a_customers_turn(app, client, sam):
    foreign = refund_conversation(sam)
    make_account("pat@example.com", "staff")
    sign_in(client, "pat@example.com")
    assert mark(client, foreign, 0, "pinned").status_code == 404
    assert get_turn(foreign, 0).mark is None


def test_an_admin_may_and_is_audited(app, client, sam):
    foreign = refund_conversation(sam)
    make_account("ada@example.com", "admin")
    sign_in(client, "ada@example.com")
    response = mark(client, foreign, 2, "excluded", headers={})
    assert response.status_code == 303 and response.location.endswith("#turn-3")
    turn = get_turn(foreign, 2)
    assert turn.mark == "excluded" and turn.marked_by_name == "ada"
    actions = [e.action for e in db.session.query(AuditEntry).filter_by(conversation_id=foreign.id)]
    assert "left out turn" in actions


def test_a_bad_mark_is_refused_and_changes_nothing(guest, conversation):
    assert mark(guest, conversation, 0, "forever").status_code == 422
    assert mark(guest, conversation, 99, "pinned").status_code == 404
    assert get_turn(conversation, 0).mark is None


def test_without_csrf_a_mark_is_refused(app, conversation, guest):
    del guest.environ_base["HTTP_X_CSRFTOKEN"]
    assert mark(guest, conversation, 0, "pinned").status_code == 400
    assert db.session.get(Turn, get_turn(conversation, 0).id).mark is None


def test_what_if_compare_and_find_show_the_effect(guest, conversation):
    mark(guest, conversation, 0, "excluded")
    what_if = guest.get(f"/c/{conversation.id}/viewer.json?strategy=window&recent_turns=3").json
    assert what_if["fates"].get("EXCLUDED") == 1
    compare = guest.get(f"/c/{conversation.id}/viewer/compare?a=compact&b=budget&format=json").json
    assert compare["a"]["fates"]["EXCLUDED"] == 1 and compare["b"]["fates"]["EXCLUDED"] == 1
    found = guest.get(f"/c/{conversation.id}/viewer/find?q=1043&format=json").json
    first = next(m for m in found["matches"] if m["seq"] == 0)
    assert first["fate"] == "EXCLUDED" and not first["sent"]


def test_pins_over_budget_are_named_on_the_viewer(guest, conversation):
    conversation.settings = {"budget": 40}
    db.session.commit()
    for seq in (0, 1):
        mark(guest, conversation, seq, "pinned")
    page = guest.get(f"/c/{conversation.id}/viewer").text
    assert "The pinned turns alone are over the history budget" in page


def test_a_left_out_turn_is_not_folded_into_the_summary(guest):
    from webapp.context.summary.section import cached_summary
    from .viewer_support import LONG_QUESTIONS, SUMMARY_BUDGET
    user = guest_user(guest)
    _, conversation, _ = ask(user, "My name is Dara and I live in Lisbon.")
    mark(guest, conversation, 0, "excluded")
    conversation.settings = {"budget": SUMMARY_BUDGET}
    db.session.commit()
    for question in LONG_QUESTIONS:
        ask(user, question, conversation)
    summary = cached_summary(conversation)
    assert summary is not None and summary.through_seq >= 1  # later turns were folded
    assert "Lisbon" not in summary.text


@pytest.mark.parametrize("target", ["/\t/evil.example", "/\\evil.example", "//evil.example",
                                    "https://evil.example/"])
def test_the_plain_forms_next_never_leads_to_another_site(guest, conversation, target):
    response = guest.post(f"/c/{conversation.id}/turns/0/mark",
                          data={"mark": "pinned", "next": target})
    assert response.status_code == 303
    assert response.headers["Location"].startswith(f"/c/{conversation.id}/viewer#turn-1")


def test_the_plain_forms_next_leads_back_to_a_page_of_this_site(guest, conversation):
    target = f"/c/{conversation.id}/viewer?before=4"
    response = guest.post(f"/c/{conversation.id}/turns/0/mark", data={"mark": "pinned", "next": target})
    assert response.headers["Location"] == f"{target}#turn-1"


def test_a_turn_left_out_after_it_was_folded_says_its_words_may_remain(guest):
    from .viewer_support import summarized_conversation
    user = guest_user(guest)
    conversation = summarized_conversation(user)  # turn 1 is folded into the summary
    mark(guest, conversation, 0, "excluded")
    viewer = guest.get(f"/c/{conversation.id}/viewer").text
    assert fates(viewer)["1"] == "EXCLUDED"
    turn_1 = viewer[viewer.index('id="turn-1"'):viewer.index('id="turn-2"')]
    assert "its words may remain in the summary" in turn_1
    assert f'href="/c/{conversation.id}/summary#summary-text">Edit the summary' in turn_1
    chat = guest.get(f"/c/{conversation.id}").text
    assert "by you — its words may remain in the summary" in chat
    summary = guest.get(f"/c/{conversation.id}/summary").text
    assert "Left out within its reach:" in summary and "turn 1</a>" in summary


def test_a_turn_left_out_beyond_the_summary_is_said_not_to_be_in_it(guest, conversation):
    mark(guest, conversation, 1, "excluded")
    viewer = guest.get(f"/c/{conversation.id}/viewer").text
    assert "Not sent, nor folded into the summary: left out by" in viewer
    assert "its words may remain" not in viewer
    assert "its words may remain" not in guest.get(f"/c/{conversation.id}").text
