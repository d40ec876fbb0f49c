"""Claude, Open WebUI and LibreChat trees: the branch the person saw last is the conversation, a
regenerated answer and an edited question come along as versions of their turn (as ChatGPT's do), and the
import exports again as Nimbus JSON with the same tree. The files are shaped as each app writes
them: Claude's chat_messages linked by parent_message_uuid, Open WebUI's history.messages by
parentId and childrenIds, LibreChat's messages by parentMessageId (tests/data/*_branches.json)."""
import json
from pathlib import Path

import pytest

from webapp import branches
from webapp.extensions import db
from webapp.models import Conversation
from webapp.transfer import batch, export_conversation

DATA = Path(__file__).parent / "data"
FILES = ["claude_branches.json", "openwebui_branches.json", "librechat_branches.json"]
SHOWN = ["Can I return shoes I wore once?",
         "I only wore them on the carpet at home, can I send them back tomorrow?"]


def imported(alex, name):
    result = batch.import_files([(name, (DATA / name).read_bytes())], alex)
    (conversation,) = result.conversations
    return result, db.session.get(Conversation, conversation.id)


@pytest.mark.parametrize("name", FILES)
def test_the_other_branches_are_kept_as_versions_and_nothing_is_left_out(alex, name):
    result, conversation = imported(alex, name)
    assert [t.question for t in conversation.turns] == SHOWN
    assert conversation.turns[0].answer.startswith("Shoes worn indoors only")
    assert "left out" not in result.summary
    assert {seq: (v.kind, v.active, v.total) for seq, v in
            branches.versions(conversation.id).items()} == {0: ("answer", 2, 2),
                                                            1: ("question", 2, 2)}


@pytest.mark.parametrize("name", FILES)
def test_switching_shows_the_regenerated_away_answer_and_the_edited_away_question(alex, name):
    _, conversation = imported(alex, name)
    branches.switch(conversation, 1, 1)
    assert [t.question for t in conversation.turns] == [SHOWN[0], "I wore them outside in the rain."]
    assert conversation.turns[1].answer.startswith("Then they no longer count as unworn")
    branches.switch(conversation, 0, 1)
    assert [(t.question, t.answer) for t in conversation.turns] == [
        (SHOWN[0], "Worn shoes cannot be returned.")]


@pytest.mark.parametrize("name", FILES)
def test_the_import_exports_as_nimbus_json_with_the_same_tree(alex, name):
    _, conversation = imported(alex, name)
    exported = export_conversation(conversation)
    assert [(a["seq"], a["kind"], [(t["messages"][0]["content"], t["messages"][-1]["content"])
                                   for t in a["turns"]]) for a in exported["alternatives"]] == [
        (0, "answer", [(SHOWN[0], "Worn shoes cannot be returned.")]),
        (1, "question", [("I wore them outside in the rain.", "Then they no longer count as "
                          "unworn: a repair voucher is what I can offer.")])]
    again = batch.import_files([("again.json", json.dumps(exported).encode())], alex)
    copy = db.session.get(Conversation, again.conversations[0].id)
    second = export_conversation(copy)
    assert second["alternatives"] == exported["alternatives"]
    assert [t["messages"] for t in second["turns"]] == [t["messages"] for t in exported["turns"]]


def test_a_claude_branch_that_does_not_read_is_left_out_and_counted(alex):
    chats = json.loads((DATA / "claude_branches.json").read_text())
    chats[0]["chat_messages"][1]["sender"] = "robot"  # the regenerated-away answer
    result = batch.import_files([("c.json", json.dumps(chats).encode())], alex)
    (conversation,) = result.conversations
    assert result.summary.endswith("; left out 1 message on other branches.")
    assert set(branches.versions(conversation.id)) == {1}
