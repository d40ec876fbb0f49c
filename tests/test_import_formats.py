"""Other tools' files: each sample imports, shows its fates, and re-exports to the same OpenAI
messages; each malformed one is refused in one line and stores nothing."""
import json
from datetime import datetime
from pathlib import Path

import pytest

from webapp.extensions import db
from webapp.models import Conversation
from webapp.transfer import detect, load

from .support import guest_user, run

DATA = Path(__file__).parent / "data"
SAMPLES = {"openai_messages.json": "openai", "openai_finetune.jsonl": "openai",
           "chatgpt/conversations.json": "chatgpt", "claude_conversations.json": "claude",
           "openwebui_export.json": "openwebui", "sharegpt.jsonl": "sharegpt"}


def imported_ids(output: str) -> list[str]:
    if "as conversation: " in output:
        return [output.split("conversation: ")[1].strip()]
    return [line.split()[0] for line in output.splitlines() if line.startswith("  ")]


def expected(name: str) -> list:
    return json.loads((DATA / "expected" / (name.replace("/", "_").rsplit(".", 1)[0]
                                            + ".openai.json")).read_text())


@pytest.mark.parametrize("name", SAMPLES)
def test_each_sample_is_detected_by_its_shape(name):
    assert detect(load((DATA / name).read_bytes())) == SAMPLES[name]


@pytest.mark.parametrize("name", SAMPLES)
def test_each_sample_re_exports_to_the_same_openai_messages(runner, name):
    ids = imported_ids(run(runner, "import", str(DATA / name)))
    exported = [json.loads(run(runner, "export", i, "--format", "openai")) for i in ids]
    assert exported == expected(name)


def test_the_openai_sample_comes_back_as_it_went_in(runner):
    original = json.loads((DATA / "openai_messages.json").read_text())
    for message in original:  # content parts come back as the text they hold
        if isinstance(message["content"], list):
            message["content"] = "\n".join(p["text"] for p in message["content"])
    assert expected("openai_messages.json") == [original]
    (conversation_id,) = imported_ids(run(runner, "import", str(DATA / "openai_messages.json")))
    again = run(runner, "export", conversation_id, "--format", "openai")
    assert json.loads(again) == [original][0]


def test_chatgpt_imports_the_branch_shown_last_with_its_times_and_title(runner):
    ids = imported_ids(run(runner, "import", str(DATA / "chatgpt/conversations.json")))
    refund, sourdough = (db.session.get(Conversation, i) for i in ids)
    assert refund.title == "Refund for a late parcel" and sourdough.title == "Sourdough starter"
    assert [t.question for t in refund.turns][1].startswith("I bought it on 20 November")
    assert "Never mind." not in json.dumps([t.messages for t in refund.turns])  # the edited-away branch
    assert refund.created_at == datetime(2025, 12, 1, 10, 0)
    assert refund.turns[1].created_at == datetime(2025, 12, 1, 10, 2)
    assert refund.turns[1].tool_calls == 1 and refund.turns[1].answer.startswith("You have 3 days")
    assert refund.instructions == "I run a small bakery in Lyon.\n\nReply in short sentences."


def test_split_chatgpt_files_import_together(runner):
    output = run(runner, "import", str(DATA / "chatgpt/conversations-000.json"),
                 str(DATA / "chatgpt/conversations-001.json"))
    exported = [json.loads(run(runner, "export", i, "--format", "openai"))
                for i in imported_ids(output)]
    assert exported == expected("chatgpt/conversations.json")


def test_a_system_message_becomes_instructions_the_model_receives_not_a_turn(runner):
    (conversation_id,) = imported_ids(run(runner, "import", str(DATA / "openwebui_export.json")))
    conversation = db.session.get(Conversation, conversation_id)
    assert conversation.turn_count == 2 and conversation.instructions.startswith("You are the shop's")
    assert "Be polite." in run(runner, "show", conversation_id, "--context").split("user:")[0]
    assert "Be polite." not in run(runner, "show", conversation_id)


def test_an_imported_conversation_shows_its_fates_in_the_viewer(runner, guest):
    ids = imported_ids(run(runner, "import", str(DATA / "claude_conversations.json"),
                           "--user", guest_user(guest).email))
    db.session.get(Conversation, ids[0]).settings = {"recent_turns": 1}
    db.session.commit()
    page = guest.get(f"/c/{ids[0]}/viewer.json").get_json()
    assert [t["fate"] for t in page["turns"]] == ["COMPACTED", "FULL"]


MALFORMED = {
    "chatgpt_bad_time.json": "conversation 2 ('Sourdough starter'), message ans, create_time: "
                             "expected seconds since 1970",
    "claude_unknown_sender.json": "conversation 2, message 2, sender: unknown sender 'bot'",
    "openwebui_broken_parent.json": "'Opening hours', chat.history: node 'm-99' is missing",
    "openai_bad_arguments.json": "message 3, tool_calls[0]: the arguments are not valid JSON",
    "openai_call_without_result.json": "tool call 'call_Qx81' without a result",
    "openai_finetune_bad_line.jsonl": "line 2: not valid JSON",
    "sharegpt_unknown_speaker.jsonl": "line 2, message 3, from: unknown speaker 'robot'",
}


@pytest.mark.parametrize("name", MALFORMED)
def test_strict_refuses_each_malformed_sample_in_one_line_and_stores_nothing(runner, name):
    before = db.session.query(Conversation).count()
    result = runner.invoke(args=["import", "--strict", str(DATA / "malformed" / name)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output.startswith("Error: refused, nothing imported: ")
    assert MALFORMED[name] in result.output and result.output.count("\n") == 1
    assert db.session.query(Conversation).count() == before


# Each of these files holds two conversations, one of them unreadable.
PARTLY_READABLE = [name for name in MALFORMED if name.endswith("jsonl") or name.startswith(
    ("chatgpt", "claude"))]


@pytest.mark.parametrize("name", PARTLY_READABLE)
def test_a_file_with_one_bad_record_imports_the_other_and_names_the_one_skipped(runner, name):
    before = db.session.query(Conversation).count()
    result = runner.invoke(args=["import", str(DATA / "malformed" / name)])
    assert result.exit_code == 0 and "Traceback" not in result.output
    (skipped,) = [line for line in result.stderr.splitlines() if line.endswith(" — skipped")]
    assert MALFORMED[name] in skipped
    assert "Imported 1 conversation (" in result.stdout and "skipped 1 that could not be read" \
        in result.stdout
    assert db.session.query(Conversation).count() == before + 1


@pytest.mark.parametrize("name", sorted(set(MALFORMED) - set(PARTLY_READABLE)))
def test_a_file_whose_only_record_is_unreadable_is_refused_and_stores_nothing(runner, name):
    before = db.session.query(Conversation).count()
    result = runner.invoke(args=["import", str(DATA / "malformed" / name)])
    assert result.exit_code == 1 and MALFORMED[name] in result.output
    assert db.session.query(Conversation).count() == before


def test_strict_lets_a_bad_file_among_several_refuse_them_all(runner):
    before = db.session.query(Conversation).count()
    result = runner.invoke(args=["import", "--strict", str(DATA / "sharegpt.jsonl"),
                                 str(DATA / "malformed" / "claude_unknown_sender.json")])
    assert result.exit_code == 1 and "claude_unknown_sender.json: conversation 2" in result.output
    assert db.session.query(Conversation).count() == before


def test_a_bad_record_in_one_of_several_files_is_named_with_its_file(runner):
    before = db.session.query(Conversation).count()
    result = runner.invoke(args=["import", str(DATA / "sharegpt.jsonl"),
                                 str(DATA / "malformed" / "claude_unknown_sender.json")])
    assert result.exit_code == 0
    assert "claude_unknown_sender.json: conversation 2, message 2, sender: unknown sender 'bot'" \
        in result.stderr
    sharegpt = len((DATA / "sharegpt.jsonl").read_text().splitlines())
    assert db.session.query(Conversation).count() == before + sharegpt + 1


def test_a_file_where_nothing_is_readable_stores_nothing(runner, tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([{"title": "Broken record", "mapping": {}},
                                {"title": "No mapping at all"}]))
    before = db.session.query(Conversation).count()
    result = runner.invoke(args=["import", str(path)])
    assert result.exit_code == 1 and "nothing imported: none of its 2 conversations" in result.output
    assert db.session.query(Conversation).count() == before


def test_an_unreadable_file_among_several_is_skipped_with_its_name(runner, tmp_path):
    path = tmp_path / "notes.json"
    path.write_text("{not json")
    result = runner.invoke(args=["import", str(DATA / "openai_messages.json"), str(path)])
    assert result.exit_code == 0
    assert f"{path}: not valid JSON" in result.stderr and "Imported 1 conversation (" in result.stdout


def test_a_format_named_that_does_not_fit_says_which_format_the_file_looks_like(runner):
    result = runner.invoke(args=["import", str(DATA / "claude_conversations.json"),
                                 "--format", "chatgpt"])
    assert result.exit_code == 1
    assert "this file looks like a Claude export, not a ChatGPT export: choose claude or auto" \
        in result.output


def test_a_large_file_shows_progress_while_it_is_checked_and_written(runner, tmp_path):
    chat = json.loads((DATA / "chatgpt/conversations.json").read_text())[1]
    chat["mapping"]["ans"]["message"]["content"]["parts"] = ["word " * 20_000]  # 100 kB
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([{**chat, "conversation_id": f"c-{n}"} for n in range(60)]))  # 6 MB
    result = runner.invoke(args=["import", str(path)])
    assert result.exit_code == 0, result.output
    assert "Reading" in result.stderr and "(6.1 MB)" in result.stderr
    # Off a terminal click prints each bar's label once; on one, the bar moves.
    assert "Checking conversations" in result.stderr and "Importing 60 turns" in result.stderr
    assert "Imported 60 conversations (60 turns)." in result.stdout
