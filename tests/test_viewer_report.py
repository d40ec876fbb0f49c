"""The viewer's report: fates from assemble(), the as-sent column, what-if, pages, sections."""
import re

import pytest

from webapp.cli import message_lines
from webapp.llm import get_provider
from webapp.llm.openai_provider import to_openai_messages
from webapp.context import assemble
from webapp.context.assemble import (
    COMPACTED,
    DROPPED,
    FULL,
    SUMMARIZED,
    HistoryPlan,
    Policy,
    Section,
    TurnFate,
)
from webapp.storage import all_turns, start_turn
from webapp.viewer.report import NOT_FINISHED, build_report
from webapp.viewer.whatif import WhatIfError, apply_policy, parse_what_if, what_if_policy

from .support import ask
from .fakes.openai_server import FakeOpenAIServer
from .fakes.scripted_model import ScriptedModel
from .viewer_support import (DROPPING_BUDGET, SUMMARY_BUDGET, refund_conversation,
                             summarized_conversation)


def tool_names(messages):
    return [c["name"] for m in messages for c in m.get("tool_calls") or []]


def test_refund_turns_one_compacted_two_and_three_full(app, alex):
    report = build_report(refund_conversation(alex), app.config)
    assert [(r.number, r.fate) for r in report.rows] == [(1, COMPACTED), (2, FULL), (3, FULL)]
    first = report.rows[0]
    assert tool_names(first.stored) == ["check_refund_eligibility"] and tool_names(first.sent) == []
    assert first.reason == "older than the 2 most recent turns: question and answer only"
    assert first.sent_tokens < first.full_tokens
    for row in report.rows[1:]:
        assert row.sent == row.stored and row.sent_tokens == row.full_tokens
    assert report.fate_counts == {COMPACTED: 1, FULL: 2}


def test_as_sent_column_is_what_the_provider_receives_next(app, alex):
    conversation = refund_conversation(alex)
    report = build_report(conversation, app.config)
    sent = [m for row in report.rows for m in row.sent]
    model = ScriptedModel("Anything else?")
    ask(alex, "Thanks!", conversation, provider=model)
    request = model.requests[0]
    assert request[:-1] == report.plan.messages
    assert request[:-1] == [m for s in report.sections for m in s.messages]
    assert request[1:-1] == sent  # no other sections in this conversation: history follows system
    assert request[-1] == {"role": "user", "content": "Thanks!"}


def test_a_what_if_preview_is_what_gets_sent_once_applied(app, alex):
    conversation = refund_conversation(alex)
    what_if = what_if_policy(conversation, app.config, {"budget": str(DROPPING_BUDGET)})
    preview = build_report(conversation, app.config, what_if)
    assert preview.what_if and preview.rows[0].fate == DROPPED
    assert preview.rows[0].reason.startswith(f"over the {DROPPING_BUDGET}-token budget")
    assert build_report(conversation, app.config).rows[0].fate == COMPACTED  # nothing was saved
    apply_policy(conversation, preview.policy)
    model = ScriptedModel("Sure.")
    ask(alex, "One more thing.", conversation, provider=model)
    assert model.requests[0][:-1] == preview.plan.messages
    assert conversation.settings == {"budget": DROPPING_BUDGET}


def test_summary_and_memory_sections_are_sent_as_shown(app, alex):
    conversation = summarized_conversation(alex)
    report = build_report(conversation, app.config)
    assert [s.name for s in report.sections] == ["system", "memory", "summary", "history"]
    assert [r.fate for r in report.rows] == [SUMMARIZED] * 5 + [FULL]
    assert all(r.reason == assemble.FOLDED and r.sent == [] for r in report.rows[:5])
    summary = report.sections[2]
    assert summary.detail["through_seq"] == 4 and "Dara" in summary.messages[0]["content"]
    assert report.gauge.budget == SUMMARY_BUDGET
    assert report.gauge.history_budget == SUMMARY_BUDGET - summary.tokens
    model = ScriptedModel("Lisbon, you said.")
    ask(alex, "Where do I live?", conversation, provider=model)
    assert model.requests[0][:-1] == report.plan.messages


def test_as_sent_column_matches_the_openai_request(app, alex):
    conversation = refund_conversation(alex)
    report = build_report(conversation, app.config)
    with FakeOpenAIServer() as server:
        app.config.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test",
                          NIMBUS_PROVIDER_TIMEOUT=2.0)
        ask(alex, "Thanks!", conversation, provider=get_provider(app.config))
    assert server.requests[0]["messages"][:-1] == to_openai_messages(report.plan.messages)


def test_a_pending_turn_is_shown_as_not_finished(app, alex):
    conversation = refund_conversation(alex)
    start_turn(conversation, "Are you there?")
    row = build_report(conversation, app.config).rows[-1]
    assert (row.number, row.fate, row.reason, row.sent) == (4, None, NOT_FINISHED, [])


def test_usage_and_trace_come_from_the_stored_turn(app, alex):
    conversation = refund_conversation(alex)
    row = build_report(conversation, app.config).rows[0]
    turn = all_turns(conversation.id)[0]
    assert row.prompt_tokens == turn.prompt_tokens
    assert row.completion_tokens == turn.completion_tokens
    assert (row.context_tokens, row.resend_tokens) == (turn.context_tokens, turn.resend_tokens)
    assert [t["kind"] for t in row.trace] == ["memory", "tool_call", "tool_result", "answer"]
    assert all("ms" in t for t in row.trace[1:])


def test_chart_covers_every_finished_turn(app, alex):
    conversation = refund_conversation(alex)
    chart = build_report(conversation, app.config).chart
    turns = all_turns(conversation.id)
    assert chart.turns == [1, 2, 3]
    assert chart.sent == [t.prompt_tokens for t in turns]  # the offline model reports usage
    assert chart.resend == [t.prompt_tokens + t.resend_tokens - t.context_tokens for t in turns]


def test_pages_of_turns_newest_first(app, alex):
    app.config["NIMBUS_VIEWER_PAGE_TURNS"] = 2
    conversation = refund_conversation(alex)
    ask(alex, "Thanks!", conversation)
    ask(alex, "Bye.", conversation)
    newest = build_report(conversation, app.config)
    assert [r.number for r in newest.rows] == [4, 5] and newest.older_before == 3
    assert not newest.has_newer
    middle = build_report(conversation, app.config, before=3)
    assert [r.number for r in middle.rows] == [2, 3] and middle.older_before == 1
    assert middle.has_newer and middle.newer_before is None
    oldest = build_report(conversation, app.config, before=1)
    assert [r.number for r in oldest.rows] == [1] and oldest.older_before is None
    assert oldest.newer_before == 3
    assert len(oldest.chart.turns) == 5  # the chart always covers the whole conversation


def test_new_strategies_and_sections_show_up_without_special_cases(app, alex, monkeypatch):
    def plan_fold(turns, policy, ratio):
        turns = list(turns)
        newest, older = turns[0], turns[1:]
        fates = [TurnFate(t.seq, SUMMARIZED, "folded into the summary") for t in reversed(older)]
        return HistoryPlan(fates + [TurnFate(newest.seq, FULL, "newest", newest.messages, 9)])

    def summary_source(conversation, policy, history):
        return Section("summary", [{"role": "system", "content": "Earlier: refunds."}], 5,
                       {"covers": [f.seq for f in history.fates if f.fate == SUMMARIZED]})

    conversation = refund_conversation(alex)
    monkeypatch.setitem(assemble.STRATEGIES, "fold", plan_fold)
    monkeypatch.setattr(assemble, "SECTION_SOURCES", [summary_source])
    report = build_report(conversation, app.config, Policy(strategy="fold"))
    folded = (SUMMARIZED, "folded into the summary")
    assert [(r.fate, r.reason) for r in report.rows[:2]] == [folded, folded]
    assert [s.name for s in report.sections] == ["system", "summary", "history"]
    summary = report.sections[1]
    assert (summary.title, summary.tokens) == ("Rolling summary", 5)
    assert summary.detail == {"covers": [0, 1]}
    assert "fold" in report.strategies


@pytest.mark.parametrize("values, message", [
    ({"strategy": "nope"}, "unknown strategy 'nope'"),
    ({"budget": "lots"}, "budget must be a whole number"),
    ({"budget": "0"}, "budget must be between 1 and 1,000,000"),
    ({"max_age_days": "nan"}, "max_age_days must be between 0.01 and 36,500"),
    ({"max_age_days": "soon"}, "max_age_days must be a number"),
    ({"recent_turns": "101"}, "recent_turns must be between 0 and 100"),
])
def test_what_if_refuses_bad_values(values, message):
    with pytest.raises(WhatIfError, match=message):
        parse_what_if(values)


def test_empty_what_if_fields_keep_the_conversations_own():
    overrides = parse_what_if({"strategy": "", "budget": " ", "recent_turns": "3"})
    assert overrides == {"recent_turns": 3}


@pytest.mark.parametrize("what_if", [{}, {"budget": str(DROPPING_BUDGET)},
                                     {"recent_turns": "0", "budget": "60"}])
def test_show_context_prints_the_same_request_and_fates(app, alex, runner, what_if):
    conversation = refund_conversation(alex)
    report = build_report(conversation, app.config,
                          what_if_policy(conversation, app.config, what_if))
    flags = {"budget": "--budget", "recent_turns": "--recent"}
    args = [arg for name, value in what_if.items() for arg in (flags[name], value)]
    result = runner.invoke(args=["show", conversation.id, "--context", *args])
    header, window, printed = result.output.split("\n", 2)
    assert header.startswith(
        f"Context sent with the next question ({report.plan.total_tokens} tokens")
    assert window.startswith(("No context window is known", "Planned for a "))
    messages, fates = printed.split("\n\nTurn fates (why each stored turn is or is not sent):\n")
    assert messages == "\n".join(message_lines(report.plan.messages))
    assert printed_fates(fates) == {row.number: (row.fate, row.reason) for row in report.rows}


def printed_fates(lines: str) -> dict[int, tuple[str, str]]:
    """Turn number -> (fate, reason) from show's fate lines ("turns 1–2  DROPPED  why")."""
    fates = {}
    for line in lines.splitlines():
        first, last, fate, reason = re.fullmatch(
            r" +turns? (\d+)(?:–(\d+))? +(\w+) +(.*?)(?: \(\d+ tokens\))?", line).groups()
        for number in range(int(first), int(last or first) + 1):
            fates[number] = (fate, reason)
    return fates
