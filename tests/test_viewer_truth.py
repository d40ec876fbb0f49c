"""The viewer tells the truth: the summary's overlap is marked and counted, the chart counts every
model call, and a past turn's manifest rebuilds exactly what the provider received then."""
import pytest

from webapp.extensions import db
from webapp.llm.openai_provider import OpenAIProvider, to_openai_messages
from webapp.context.assemble import COMPACTED, FULL, Policy
from webapp.memories.models import Memory
from webapp.context.summary.section import cached_summary, summary_messages
from webapp.storage import all_turns, start_turn
from webapp.viewer.as_sent import rebuild
from webapp.viewer.report import build_report

from .support import ask
from .fakes.openai_server import FakeOpenAIServer
from .viewer_support import REFUND_QUESTIONS

QUESTIONS = REFUND_QUESTIONS + ("How long does shipping take?", "Where is my order #1041?",
                                "What is your returns policy?", "Thanks, and order #1045?")


def forty_turns(user, budget=600):
    _, conversation, _ = ask(user, "My name is Dara and I live in Lisbon.")
    conversation.settings = {"budget": budget}
    db.session.commit()
    for i in range(39):
        ask(user, QUESTIONS[i % len(QUESTIONS)], conversation)
    return conversation


def test_no_turn_is_sent_and_summarized_unless_the_page_marks_it(app, guest):
    from .support import guest_user
    # A budget where fold-ahead reaches into the compacted history (at 600 the offline model's
    # Markdown answers leave room for one full turn only, and the summary reaches exactly to it).
    conversation = forty_turns(guest_user(guest), budget=900)
    report = build_report(conversation, app.config)
    summary = report.plan.section("summary")
    assert summary is not None
    through = summary.detail["through_seq"]
    sent_in_reach = [r for r in report.rows if r.fate in (FULL, COMPACTED) and r.seq <= through]
    assert sent_in_reach, "fold-ahead makes the summary reach into the history here"
    assert all(r.in_summary for r in sent_in_reach)
    assert not any(r.in_summary for r in report.rows if r not in sent_in_reach)
    assert report.gauge.overlap == sum(r.sent_tokens for r in sent_in_reach)
    assert report.gauge.overlap_seqs == [r.seq for r in sent_in_reach]
    html = guest.get(f"/c/{conversation.id}/viewer").text
    assert html.count("data-in-summary") == len(sent_in_reach)
    assert f"{report.gauge.overlap:,} tokens</strong>" in html and "sent twice" in html


def test_fate_counts_and_strip_cover_every_turn_without_reading_them_all(app, alex):
    conversation = forty_turns(alex)
    report = build_report(conversation, app.config)
    assert sum(report.fate_counts.values()) == 40
    runs = report.runs
    assert runs[0].first == 0 and runs[-1].last == 39
    assert all(a.last + 1 == b.first for a, b in zip(runs, runs[1:]))
    for run in runs:
        for seq in (run.first, run.last):
            assert report.fates.of(seq) == (run.fate, run.reason)
    assert report.strip.reach and report.strip.reach_label.startswith("the summary covers turns 1–")


def remember(user, content):
    db.session.add(Memory(tenant_id=user.tenant_id, content=content, source="hand",
                          memorable_type="account", memorable_id=user.id, subject_id=user.id))
    db.session.commit()


@pytest.fixture
def server(app):
    with FakeOpenAIServer() as server:
        yield server


def openai(server):
    return OpenAIProvider(api_key="test", base_url=server.base_url, model="fake-model", timeout=5)


def test_chart_counts_every_model_call_as_the_provider_reported(app, alex, server):
    server.script({"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": 1043}}],
                   "usage": {"prompt_tokens": 300}}, {"text": "Shipped.", "usage": {"prompt_tokens": 410}},
                  {"text": "Sure.", "usage": {"prompt_tokens": 520}},
                  {"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": 1042}}],
                   "usage": {"prompt_tokens": 600}}, {"text": "Paid.", "usage": {"prompt_tokens": 700}})
    _, conversation, _ = ask(alex, "Where is order 1043?", provider=openai(server))
    ask(alex, "Thanks.", conversation, provider=openai(server))
    ask(alex, "And 1042?", conversation, provider=openai(server))
    report = build_report(conversation, app.config)
    assert report.chart.sent == [300 + 410, 520, 600 + 700]
    assert [r.cost for r in report.rows] == report.chart.sent
    assert [r.model_calls for r in report.rows] == [2, 1, 2]
    assert report.chart.total_sent == 300 + 410 + 520 + 600 + 700


def test_a_turns_manifest_rebuilds_what_the_provider_received_after_later_changes(
        app, alex, server):
    _, conversation, _ = ask(alex, "My name is Dara and I live in Lisbon.")
    conversation.settings = {"budget": 300}
    db.session.commit()
    for question in REFUND_QUESTIONS + ("How long does shipping take?",):
        ask(alex, question, conversation)
    remember(alex, "Lives in Lisbon.")
    server.script({"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": 1041}}]},
                  {"text": "It is on its way, Dara."})
    ask(alex, "Where is my order #1041?", conversation, provider=openai(server))
    turn_k = all_turns(conversation.id)[-1]
    sent_then = [r["messages"] for r in server.requests]
    assert len(sent_then) == 2
    summary_then = summary_messages(cached_summary(conversation))
    assert {s["name"] for s in turn_k.manifest["sections"]} >= {"system", "memory", "summary"}

    remember(alex, "Prefers email over phone.")
    for question in ("My phone number is 555-0142.", "What is your returns policy?",
                     "Thanks, and order #1045?", "Can I get a refund for order #1043?",
                     "What is my name?"):
        ask(alex, question, conversation)
    assert summary_messages(cached_summary(conversation)) != summary_then
    now = build_report(conversation, app.config, Policy.for_conversation(conversation, app.config))
    assert now.plan.messages[:3] != sent_then[0][:3]  # today's request differs from turn K's

    rebuilt = rebuild(turn_k)
    assert rebuilt.problems == []
    assert [to_openai_messages(call.messages) for call in rebuilt.calls] == sent_then
    assert [c.prompt_tokens for c in rebuilt.calls] == [c["prompt_tokens"] for c in
                                                       turn_k.manifest["calls"]]


def test_as_sent_routes_show_the_rebuilt_request_to_its_owner_only(app, guest, client, sam):
    from .support import guest_user
    _, conversation, _ = ask(guest_user(guest), "Can I get a refund for order #1043?")
    page = guest.get(f"/c/{conversation.id}/viewer/turns/1/sent")
    assert page.status_code == 200 and "Turn 1 as it was sent" in page.text
    assert "Model call 2" in page.text  # the offline model checked eligibility, then answered
    data = guest.get(f"/c/{conversation.id}/viewer/turns/1/sent.json").json
    assert data["calls"][0]["messages"][-1] == {"role": "user",
                                                "content": "Can I get a refund for order #1043?"}
    assert guest.get(f"/c/{conversation.id}/viewer/turns/8/sent").status_code == 404
    assert guest.get(f"/c/{conversation.id}/viewer/turns/0/sent").status_code == 404  # from 1
    start_turn(conversation, "Are you there?")
    pending = guest.get(f"/c/{conversation.id}/viewer/turns/2/sent.json")
    assert pending.status_code == 404 and pending.json["error"] == "this turn is still being answered"
    assert guest.get(f"/c/{conversation.id}/viewer/turns/{2**70}/sent").status_code == 404
    _, foreign, _ = ask(sam, "Hello")
    assert guest.get(f"/c/{foreign.id}/viewer/turns/1/sent.json").status_code == 404
