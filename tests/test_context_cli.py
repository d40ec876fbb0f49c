"""The command line for strategies and summaries: preview, set, summarize, topics."""
import pytest
from flask import current_app

from webapp.extensions import db
from webapp.context.assemble import STRATEGIES
from webapp.storage import create_conversation

from webapp.context.summary.section import cached_summary, needs_refresh
from webapp.shop.demo_conversation import background_held

from .support import ask, run

FILLER = ["Where is order 1042?", "How long does shipping take?", "Thanks, that helps."]


@pytest.fixture
def chatted(alex):
    """A conversation whose first turns have fallen out of a small window."""
    conversation = create_conversation(alex)
    conversation.settings = {"budget": 300}
    db.session.commit()
    ask(alex, "My name is Dara. I prefer email.", conversation)
    for i in range(8):
        ask(alex, FILLER[i % len(FILLER)], conversation)
    return conversation


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_show_context_previews_every_strategy_without_changing_it(runner, chatted, name):
    result = runner.invoke(args=["show", chatted.id, "--context", "--strategy", name,
                                 "--budget", "400", "--recent", "1"])
    assert result.exit_code == 0, result.output
    assert f"strategy {name}, history budget 400" in result.output
    assert "turn 9         FULL" in result.output
    db.session.refresh(chatted)
    assert chatted.strategy == "compact" and chatted.settings == {"budget": 300}


def test_show_context_explains_summarized_turns(runner, chatted):
    result = runner.invoke(args=["show", chatted.id, "--context"])
    assert "system:    Summary of the earlier conversation (turns 1–" in result.output
    assert "SUMMARIZED fell out of the window; folded into the summary" in result.output


def test_strategy_sets_the_strategy_and_its_parameters(runner, chatted):
    result = runner.invoke(args=["strategy", chatted.id, "window", "--recent", "3",
                                 "--max-age-days", "2.5", "--style", "bullets"])
    assert result.exit_code == 0, result.output
    assert "strategy window: history budget 300 tokens, recent turns 3, max age 2.5 days" \
        in result.output
    db.session.refresh(chatted)
    assert chatted.strategy == "window"
    assert chatted.settings == {"budget": 300, "recent_turns": 3, "max_age_days": 2.5,
                                "summary_style": "bullets"}
    result = runner.invoke(args=["strategy", chatted.id, "--fold-after", "6"])
    assert "fold_after_turns" in result.output and chatted.settings["fold_after_turns"] == 6
    result = runner.invoke(args=["strategy", chatted.id, "--reset"])
    assert "own settings: none (the configured defaults)" in result.output


@pytest.mark.parametrize("args, error", [
    (["strategy", "ID", "nope"], "'nope' is not one of"),
    (["strategy", "ID", "window", "--recent", "0"], "0 is not in the range"),
    (["strategy", "ID", "window", "--budget", "10"], "10 is not in the range"),
    (["strategy", "ID", "--fold-after", "0"], "0 is not in the range"),
    (["show", "ID", "--context", "--strategy", "nope"], "unknown strategy 'nope'"),
])
def test_bad_strategy_settings_are_refused(runner, chatted, args, error):
    result = runner.invoke(args=[chatted.id if a == "ID" else a for a in args])
    assert result.exit_code != 0 and error in result.output


@pytest.mark.parametrize("command", ["strategy", "summarize", "topics"])
def test_someone_elses_conversation_is_not_found(runner, chatted, command):
    result = runner.invoke(args=[command, chatted.id, "--user", "sam@example.com"])
    assert result.exit_code != 0 and f"no conversation {chatted.id}" in result.output


def test_summarize_prints_the_summary_in_the_style_asked(runner, chatted):
    result = runner.invoke(args=["summarize", chatted.id, "--style", "bullets"])
    assert result.exit_code == 0, result.output
    assert "(bullets, updated" in result.output
    assert "- User: My name is Dara." in result.output


def test_summarize_says_when_nothing_has_fallen_off(runner, alex):
    _, conversation, _ = ask(alex, "Hello")
    result = runner.invoke(args=["summarize", conversation.id])
    assert "nothing to summarize" in result.output


def test_topics_cover_the_summary_and_the_recent_turns(runner, chatted):
    ask(chatted.user, "Can I get a refund for order #1043?", chatted)
    result = runner.invoke(args=["topics", chatted.id])
    topics = result.output.splitlines()
    assert "introductions" in topics and "order #1042" in topics
    assert "refunds" in topics and "order #1043" in topics


def database_rows() -> list[str]:
    connection = db.engine.raw_connection()
    try:
        return list(connection.iterdump())
    finally:
        connection.close()


@pytest.fixture
def behind(chatted):
    """More turns fell out of the window than the summary covers: no worker has folded them."""
    with background_held():
        for question in FILLER * 3:
            ask(chatted.user, question, chatted)
    assert needs_refresh(chatted, current_app.config)
    return chatted


def test_topics_changes_nothing_in_the_database(runner, behind):
    before = database_rows()
    result = runner.invoke(args=["topics", behind.id])
    assert result.exit_code == 0 and "introductions" in result.output.splitlines()
    assert database_rows() == before


def test_summarize_is_the_command_that_folds(runner, behind):
    through = cached_summary(behind).through_seq
    run(runner, "summarize", behind.id)
    assert cached_summary(behind).through_seq > through


def test_show_context_says_the_window_it_planned_for(runner, chatted):
    current_app.config["NIMBUS_CONTEXT_WINDOW"] = None
    result = runner.invoke(args=["show", chatted.id, "--context", "--budget", "3000"])
    assert "No context window is known for this model: the 3,000-token budget alone limits" \
        in result.output
    current_app.config["NIMBUS_CONTEXT_WINDOW"] = 1100
    result = runner.invoke(args=["show", chatted.id, "--context", "--budget", "3000"])
    assert "Planned for a 1,100-token window: 275 tokens for the answer" in result.output
    assert "the window lowered the history budget from 3,000 to " in result.output
