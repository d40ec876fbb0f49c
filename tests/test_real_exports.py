"""Files other projects wrote (tests/data/real/, sources in its README) import with the counts
taken by hand from the files themselves, and no stored message holds a placeholder for words."""
import json
import re
from pathlib import Path

from webapp import branches
from webapp.extensions import db
from webapp.models import Conversation

from .support import run

REAL = Path(__file__).parent / "data" / "real"


def imported(runner, name: str) -> list[Conversation]:
    output = run(runner, "import", str(REAL / name))
    ids = [line.split()[0] for line in output.splitlines() if line.startswith("  ")] or \
        re.findall(r"as conversation: (\w+)", output)  # one conversation is said in one line
    return [db.session.get(Conversation, i) for i in ids]


def stored_texts(conversations) -> list[str]:
    return [m.get("content") or "" for c in conversations for t in c.turns for m in t.messages]


def test_llamafactory_value_parts_keep_every_word_of_500_conversations(runner):
    conversations = imported(runner, "llamafactory_v1_sft_demo.jsonl")
    assert len(conversations) == 500 and sum(c.turn_count for c in conversations) == 500
    texts = stored_texts(conversations)
    assert len(texts) == 1000 and "[text]" not in texts and all(t.strip() for t in texts)
    first = conversations[0].turns[0]
    assert first.question == "hi" and conversations[0].title == "Hi"
    assert first.answer.startswith("Hello! I am {{name}}, an AI assistant developed by {{author}}.")


def test_llamafactory_images_become_markers_naming_the_file_beside_the_words(runner):
    conversations = imported(runner, "llamafactory_v1_multimodal_demo.jsonl")
    assert len(conversations) == 6 and sum(c.turn_count for c in conversations) == 12
    questions = [t.question for c in conversations for t in c.turns]
    assert questions[:2] == ["[image: 1.jpg]\nWho are they?", "What are they doing?\n[image: 1.jpg]"]
    markers = [m for q in questions for m in re.findall(r"\[image: [^\]]+\]", q)]
    assert len(markers) == 8 and set(markers) == {"[image: 1.jpg]", "[image: 2.jpg]",
                                                  "[image: 3.jpg]"}
    assert conversations[3].turns[0].answer == "他们是拜仁慕尼黑的凯恩和格雷茨卡。"


def test_llamafactory_tool_call_parts_become_calls_with_their_results(runner):
    conversations = imported(runner, "llamafactory_reason_tool_use_demo_50.jsonl")
    turns = [t for c in conversations for t in c.turns]
    assert len(conversations) == 50 and len(turns) == 70
    calls = [call for t in turns for m in t.messages for call in m.get("tool_calls") or []]
    results = [m for t in turns for m in t.messages if m["role"] == "tool"]
    assert len(calls) == 68 and len(results) == 68
    # 20 calls end their file (the training target) with no result: each says so, never invented.
    assert sum("no result in the exported file" in m["content"] for m in results) == 20
    # Conversation 3 asks for two areas at once: one result listing both answers each call.
    parallel = conversations[2].turns[0]
    assert [m["content"] for m in parallel.messages if m["role"] == "tool"] == [
        "{'area': 7.0686, 'radius': 1.5, 'unit':'square meters'}",
        "{'area': 28.2743, 'radius': 3, 'unit':'square meters'}"]
    assert json.dumps([t.messages for t in turns]).count('"reasoning"') == 0
    assert sum(t.outcome == "unanswered" for t in turns) == 11


def test_librechats_corrupted_chatgpt_entry_is_skipped_by_name_and_the_rest_imported(runner):
    result = runner.invoke(args=["import", str(REAL / "librechat_chatgpt_modern_export.json")])
    assert result.exit_code == 0
    assert [line for line in result.stderr.splitlines() if "skipped" in line] == [
        "conversation 2 ('Corrupted entry'), mapping: expected an object (missing) — skipped"]
    assert "Imported 2 conversations (3 turns); skipped 1 that could not be read." in result.stdout
    ids = [line.split()[0] for line in result.stdout.splitlines() if line.startswith("  ")]
    deploy, pasta = (db.session.get(Conversation, i) for i in ids)
    assert [t.question for t in deploy.turns] == ["How do I roll back the deploy?",
                                                  "And if that fails?"]
    assert deploy.turns[-1].answer == "Restore from the last known-good chart."
    assert deploy.instructions == "The user is an SRE.\n\nAnswer concisely."
    assert deploy.updated_at.isoformat() == "2025-08-24T01:46:44"  # its last message, not today
    assert pasta.title == "Weeknight pasta" and pasta.turns[0].answer == "Puttanesca."


def test_strict_refuses_librechats_export_for_its_corrupted_entry(runner):
    before = db.session.query(Conversation).count()
    result = runner.invoke(args=["import", "--strict",
                                 str(REAL / "librechat_chatgpt_modern_export.json")])
    assert result.exit_code == 1 and "conversation 2 ('Corrupted entry')" in result.output
    assert db.session.query(Conversation).count() == before


def test_librechat_own_export_imports_its_three_turns(runner):
    (conversation,) = imported(runner, "librechat_export.json")
    assert conversation.turn_count == 3
    texts = stored_texts([conversation])
    assert len(texts) == 6 and all(t.strip() for t in texts)


def test_librechats_open_webui_fixture_keeps_the_answer_and_the_tool_call_not_the_markup(runner):
    first, second, third = imported(runner, "librechat_openwebui_export.json")
    assert [c.turn_count for c in (first, second, third)] == [1, 1, 1]
    assert first.turns[0].answer.strip() == "255" and "<details" not in first.turns[0].answer
    (call,) = [c for m in second.turns[0].messages for c in m.get("tool_calls") or []]
    assert (call["name"], call["arguments"]) == ("get_weather", {"city": "Paris"})
    assert [m["content"] for m in second.turns[0].messages if m["role"] == "tool"] == ["Paris: 18C, rain"]
    assert (third.turns[0].question, third.turns[0].answer) == ("Hello", "Hi there!")


def test_librechats_tree_export_imports_the_latest_branch_and_keeps_the_other_two(runner):
    output = run(runner, "import", str(REAL / "librechat_tree_export.json"))
    assert "left out" not in output
    conversation = db.session.get(Conversation, output.split("conversation: ")[1].split()[0])
    # No message below the first answer has a time: the latest leaf is the last in the file,
    # the "lol" branch; "thanks", its two answers, and what followed the second are versions.
    assert [t.question for t in conversation.turns] == [
        "How do I use source venv/bin/activate?\nbash: venv/bin/activate: No such file or "
        "directory", "lol"]
    assert conversation.turns[1].answer.startswith("It looks like you might have been amused")
    said = " ".join(stored_texts([conversation]))
    assert "thanks" not in said and "Happy coding" not in said and "Good luck" not in said
    assert {seq: (v.kind, v.total) for seq, v in
            branches.versions(conversation.id).items()} == {1: ("question", 3)}
    branches.switch(conversation, 1, 1)
    assert [t.question for t in conversation.turns][1:] == ["thanks"]


def test_a_chatbot_ui_export_is_refused_by_name_not_by_a_field(runner):
    result = runner.invoke(args=["import", str(REAL / "librechat_chatbotui_export.json")])
    assert result.exit_code == 1
    assert "a Chatbot UI export is not a format Nimbus reads yet" in result.output


def test_axolotls_empty_answer_is_a_question_left_unanswered_not_an_empty_reply(runner):
    (conversation,) = imported(runner, "axolotl_conversation_missingturns.json")
    assert conversation.turn_count == 6
    first, *rest = conversation.turns
    assert first.question.startswith("how could i implement a minesweeper")
    assert first.outcome == "unanswered" and [m["role"] for m in first.messages] == ["user"]
    assert all(t.outcome != "unanswered" and t.answer.strip() for t in rest)
