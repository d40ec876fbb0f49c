"""Claude exports: the active branch becomes the conversation (the others its versions), tool blocks pair even
without ids, text blocks keep their paragraphs, files are named and blank answers are none.
Hand-written records: no public Claude export with retries was found to copy."""
import json

from webapp import branches
from webapp.transfer import batch
from webapp.transfer.formats import parse

ROOT = "00000000-0000-4000-8000-000000000000"


def msg(uuid, parent, sender, text, when, **extra):
    return {"uuid": uuid, "parent_message_uuid": parent, "sender": sender, "text": text,
            "created_at": f"2024-05-01T10:{when:02d}:00Z", **extra}


RETRIED = {"name": "Retry", "chat_messages": [
    msg("q1", ROOT, "human", "First question", 0),
    msg("a1", "q1", "assistant", "Abandoned answer", 1),
    msg("a1b", "q1", "assistant", "Kept answer", 2),
    msg("q2", "a1b", "human", "Second question", 3),
    msg("a2", "q2", "assistant", "Second answer", 4)]}


def turns(record):
    """(question, answer) of each turn: its user words and its last assistant words."""
    out = []
    for turn in parse([record])[0].turns:
        said = [m.model_dump() for m in turn.messages]
        answers = [m["content"] for m in said if m["role"] == "assistant" and m["content"]]
        out.append((said[0]["content"], answers[-1] if answers else None))
    return out


def test_the_active_branch_is_the_path_to_the_latest_leaf():
    assert turns(RETRIED) == [("First question", "Kept answer"),
                              ("Second question", "Second answer")]


def test_the_leaf_the_conversation_names_current_is_its_branch_even_if_older():
    named = {**RETRIED, "current_leaf_message_uuid": "a1"}  # the person went back to it
    assert turns(named) == [("First question", "Abandoned answer")]


def test_a_current_leaf_the_file_does_not_hold_falls_back_to_the_latest():
    named = {**RETRIED, "current_leaf_message_uuid": "gone"}
    assert turns(named)[-1] == ("Second question", "Second answer")


def test_no_abandoned_answer_lands_in_a_turn():
    assert all("Abandoned" not in (a or "") for _, a in turns(RETRIED))


def test_a_retried_answer_is_kept_as_a_version_not_left_out(alex):
    result = batch.import_files([("c.json", json.dumps([RETRIED]).encode())], alex)
    assert "left out" not in result.summary
    (conversation,) = result.conversations
    assert branches.versions(conversation.id)[0].total == 2


def test_tool_blocks_without_ids_pair_by_position():
    parts = [{"type": "tool_use", "name": "search", "input": {"q": "a"}},
             {"type": "tool_use", "name": "search", "input": {"q": "b"}},
             {"type": "tool_result", "content": "result a"},
             {"type": "tool_result", "content": "result b"},
             {"type": "text", "text": "Done."}]
    record = {"chat_messages": [{"sender": "human", "text": "Look up"},
                                {"sender": "assistant", "content": parts}]}
    raw = [m.model_dump() for t in parse([record])[0].turns for m in t.messages]
    calls = [c for m in raw for c in m.get("tool_calls") or []]
    results = {m["tool_call_id"]: m["content"] for m in raw if m.get("role") == "tool"}
    assert [results[c["id"]] for c in calls] == ["result a", "result b"]


def test_text_blocks_are_joined_with_a_blank_line():
    parts = [{"type": "text", "text": "One."}, {"type": "text", "text": "Two."}]
    record = {"chat_messages": [{"sender": "human", "text": "Hi"},
                                {"sender": "assistant", "content": parts}]}
    assert turns(record) == [("Hi", "One.\n\nTwo.")]


def test_a_file_becomes_a_marker_naming_it():
    record = {"chat_messages": [{"sender": "human", "text": "See this",
                                 "files": [{"file_name": "report.pdf"}]},
                                {"sender": "assistant", "text": "Seen."}]}
    assert turns(record)[0][0] == "See this\n\n[file: report.pdf]"


def test_a_whitespace_only_answer_is_none():
    record = {"chat_messages": [{"sender": "human", "text": "Hello?"},
                                {"sender": "assistant", "text": "  \n "}]}
    assert not turns(record)[0][1]


def test_a_files_field_that_is_not_a_list_is_ignored():
    record = {"chat_messages": [{"sender": "human", "text": "Hi", "files": "x.pdf"},
                                {"sender": "assistant", "text": "Hello"}]}
    assert turns(record) == [("Hi", "Hello")]
