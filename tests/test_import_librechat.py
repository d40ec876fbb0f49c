"""LibreChat's own export: the flat list and the children tree both import their latest branch,
and no odd field gives more than a clear refusal. Hand-written records except the real file in
tests/data/real/ (tested in test_real_exports.py)."""
import json

import pytest

from webapp.transfer.formats import detect, parse


def message(id, parent, user, text, when, **extra):
    return {"messageId": id, "parentMessageId": parent, "isCreatedByUser": user, "text": text,
            "createdAt": f"2024-04-09T14:3{when}:00.000Z", **extra}


FLAT = {"conversationId": "c1", "title": "Flat", "messages": [
    message("q", "00000000-0000-0000-0000-000000000000", True, "Question", 0),
    message("a1", "q", False, "First try", 1),
    message("a2", "q", False, "Second try", 2)]}


def contents(record):
    return [m.model_dump()["content"] for t in parse(record)[0].turns for m in t.messages]


def test_a_librechat_export_is_detected_as_its_own_format():
    assert detect(FLAT) == "librechat"


def test_a_flat_list_imports_the_latest_branch_and_keeps_the_other_as_a_version():
    (checked,) = parse(FLAT)
    assert contents(FLAT) == ["Question", "Second try"] and checked.left_out == 0
    assert [(seq, [m.content for t in other.turns for m in t.messages])
            for seq, other in checked.versions] == [(0, ["Question", "First try"])]


@pytest.mark.parametrize("odd", [{"files": "not a list"}, {"files": [1, None]}, {"text": None},
                                 {"content": "x"}, {"children": {"a": 1}}])
def test_an_odd_field_never_breaks_the_import(odd):
    record = json.loads(json.dumps(FLAT))
    record["messages"][0].update(odd)
    parse(record)


def test_a_file_becomes_a_marker_naming_it():
    record = json.loads(json.dumps(FLAT))
    record["messages"][0]["files"] = [{"filename": "plan.pdf"}]
    assert contents(record)[0] == "Question\n\n[file: plan.pdf]"
