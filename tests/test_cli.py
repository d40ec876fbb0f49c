"""The flask commands as a person at a terminal uses them."""
import re


def test_chat_prints_trace_lines_and_how_to_resume(runner):
    result = runner.invoke(args=["chat"], input="Can I get a refund for order #1043?\n\nexit\n")
    assert result.exit_code == 0, result.output
    assert re.search(r"New conversation [0-9a-f]{32}", result.output)
    assert "[step 0] memory: 0 earlier messages loaded" in result.output
    assert '[step 1] model → check_refund_eligibility({"order_id":1043})' in result.output
    assert "Nimbus: Sorry, order #1043 was purchased 20 days ago" in result.output
    assert "Resume later with: flask --app webapp chat --resume " in result.output


def test_chat_resume_continues_the_same_conversation(runner):
    first = runner.invoke(args=["chat"], input="My name is Dara.\nexit\n").output
    conversation = re.search(r"New conversation ([0-9a-f]{32})", first).group(1)
    second = runner.invoke(args=["chat", "--resume", conversation], input="What is my name?\nexit\n")
    assert f"Resuming conversation {conversation}" in second.output
    assert "Your name is Dara." in second.output


def test_resuming_someone_elses_conversation_is_refused(runner):
    first = runner.invoke(args=["ask", "Hello", "--user", "sam@example.com"]).output
    conversation = first.strip().splitlines()[-1].split(": ")[1]
    result = runner.invoke(args=["chat", "--resume", conversation])
    assert result.exit_code != 0 and "no conversation" in result.output


def test_ask_refuses_empty_and_oversized_questions(runner, app):
    assert "the question is empty" in runner.invoke(args=["ask", "   "]).output
    huge = "x" * (app.config["NIMBUS_MAX_MESSAGE_CHARS"] + 1)
    assert "8,001 characters long; the limit is 8,000" in runner.invoke(args=["ask", huge]).output


def test_chat_refuses_a_nul_typed_at_its_prompt(runner, app):
    result = runner.invoke(args=["chat"], input="Hello\x00there\n")
    assert "NUL character" in result.output


def test_unknown_user_gets_a_hint_to_seed_the_demo(runner):
    result = runner.invoke(args=["ask", "Hi", "--user", "nobody@example.com"])
    assert result.exit_code != 0 and "init-db --demo" in result.output


def test_init_db_demo_can_run_twice(runner):
    for _ in range(2):
        result = runner.invoke(args=["init-db", "--demo"])
        assert result.exit_code == 0 and "orders #1041-#1045" in result.output


def test_show_context_with_an_unknown_strategy_says_which_exist(runner):
    conversation = runner.invoke(args=["ask", "Hi"]).output.strip().splitlines()[-1].split(": ")[1]
    result = runner.invoke(args=["show", conversation, "--context", "--strategy", "nope"])
    assert result.exit_code != 0 and "unknown strategy 'nope'" in result.output


def test_purge_rejects_a_malformed_age(runner):
    result = runner.invoke(args=["purge", "--older-than", "soon"])
    assert result.exit_code != 0 and "give a number of days" in result.output


def test_trace_says_when_long_term_memories_are_loaded(runner):
    runner.invoke(args=["ask", "Remember that I prefer email over phone."])
    result = runner.invoke(args=["ask", "Hello", "--trace"])
    assert "1 long-term memory" in result.output  # not "1 long-term memories"
