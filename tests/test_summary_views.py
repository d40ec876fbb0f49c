"""The rolling summary from the chat: read it, fix it by hand (kept, marked, folded on from),
"Summarize up to here", and a failed fold that keeps the good summary and says so."""
import pytest

from webapp.extensions import db
from webapp.jobs import huey
from webapp.llm.base import ProviderError
from webapp.context.assemble import SUMMARIZED, assemble
from webapp.context.summary.section import cached_summary

from .support import ask, guest_user, use_provider
from .fakes.scripted_model import ScriptedModel
from .viewer_support import refund_conversation, summarized_conversation


@pytest.fixture
def conversation(guest):
    return summarized_conversation(guest_user(guest))


def test_the_summary_opens_from_the_chat_and_the_viewer(guest, conversation):
    summary = cached_summary(conversation)
    page = guest.get(f"/c/{conversation.id}/summary").text
    assert f"Covers turns 1–{summary.through_seq + 1}" in page
    assert summary.text.splitlines()[0] in page
    assert f'href="/c/{conversation.id}/summary"' in guest.get(f"/c/{conversation.id}").text
    assert f'href="/c/{conversation.id}/summary"' in guest.get(f"/c/{conversation.id}/viewer").text


def test_a_hand_edit_is_sent_marked_and_folded_on_from(app, guest, conversation):
    response = guest.post(f"/c/{conversation.id}/summary",
                          data={"text": "User: my name is Dara, call me on Tuesdays."})
    assert response.status_code == 303
    plan = assemble(conversation, app.config)
    assert "call me on Tuesdays" in plan.section("summary").messages[0]["content"]
    assert "edited by hand" in guest.get(f"/c/{conversation.id}/viewer").text
    recorder = ScriptedModel("User: my name is Dara, call me on Tuesdays.\nTopics: name")
    use_provider(app, recorder)
    ask(guest_user(guest), "One more question", conversation)
    guest.post(f"/c/{conversation.id}/turns/{conversation.turn_count - 1}/summarize")
    assert recorder.requests  # a fold ran, from the edited text
    assert "Summary so far:\nUser: my name is Dara, call me on Tuesdays." in \
        recorder.requests[0][1]["content"]


def test_an_empty_edit_is_refused_and_changes_nothing(guest, conversation):
    before = cached_summary(conversation).text
    assert guest.post(f"/c/{conversation.id}/summary", data={"text": "  "}).status_code == 422
    db.session.expire_all()
    assert cached_summary(conversation).text == before


def test_summarize_up_to_here_folds_now_and_the_request_follows(app, guest):
    conversation = refund_conversation(guest_user(guest))  # everything fits: no summary yet
    assert cached_summary(conversation) is None
    response = guest.post(f"/c/{conversation.id}/turns/1/summarize")
    assert response.status_code == 303 and response.location.endswith("/summary")
    db.session.expire_all()
    summary = cached_summary(conversation)
    assert summary is not None and summary.through_seq >= 1
    plan = assemble(conversation, app.config)
    assert [f.seq for f in plan.history.kept()] == [2]
    assert plan.fate_of(0)[0] == SUMMARIZED and plan.fate_of(1)[0] == SUMMARIZED
    assert plan.section("summary") is not None
    assert "Summarizing up to turn 2" not in guest.get(f"/c/{conversation.id}/summary").text


def test_summarize_up_to_here_needs_a_summary_strategy(guest):
    conversation = refund_conversation(guest_user(guest))
    conversation.strategy = "window"
    db.session.commit()
    assert guest.post(f"/c/{conversation.id}/turns/1/summarize").status_code == 422


def test_a_failed_fold_keeps_the_summary_and_says_so(app, guest, conversation):
    good = cached_summary(conversation).text
    use_provider(app, ScriptedModel(*[ProviderError("provider down")] * 50))
    huey.flush()
    guest.post(f"/c/{conversation.id}/turns/{conversation.turn_count - 1}/summarize")
    db.session.expire_all()
    summary = cached_summary(conversation)
    assert summary.text == good and summary.failed_at is not None
    assert "provider down" in summary.failure
    assert "The last fold failed" in guest.get(f"/c/{conversation.id}/summary").text
    assert "The last summary fold failed" in guest.get(f"/c/{conversation.id}/viewer").text
    assert "the fold will be retried" in guest.get(f"/c/{conversation.id}").text
    huey.flush()


def test_nobody_else_may_edit_a_customers_summary(app, client, sam):
    from .accounts_support import make_account, sign_in
    foreign = summarized_conversation(sam)
    make_account("pat@example.com", "staff")
    sign_in(client, "pat@example.com")
    assert client.get(f"/c/{foreign.id}/summary").status_code == 200  # staff read, audited
    assert client.post(f"/c/{foreign.id}/summary", data={"text": "x"}).status_code == 404
    assert client.post(f"/c/{foreign.id}/turns/0/summarize").status_code == 404


def test_summarize_up_to_the_newest_turn_sends_the_summary_alone(app, guest):
    conversation = refund_conversation(guest_user(guest))
    guest.post(f"/c/{conversation.id}/turns/2/summarize")
    db.session.expire_all()
    plan = assemble(conversation, app.config)
    assert plan.history.kept() == [] and plan.section("summary") is not None
    assert cached_summary(conversation).through_seq == 2
