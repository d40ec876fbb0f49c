"""ChatGPT exports as they are: a cut-down tree imports what is there and says so, the messages
on other branches are counted, uploads are named, and a browsing step's several results stay
one call's result, with no call invented for a result that had none.

The records here are written by hand in the shapes of real exports (no public export with
attachments or mclick quotes and a licence allowing a copy was found); the cut-down file is
tests/data/chatgpt/current_node_gone.json, the real tree is LibreChat's (tests/data/real)."""
import json
from pathlib import Path

from webapp import branches
from webapp.extensions import db
from webapp.models import Conversation
from webapp.transfer import batch, export_conversation
from webapp.transfer.formats import parse

DATA = Path(__file__).parent / "data"


def node(node_id, parent, role, parts=None, recipient="all", name=None, when=None, **content):
    content = {"content_type": "text", **content, **({"parts": parts} if parts else {})}
    metadata = content.pop("metadata", {})
    return node_id, {"id": node_id, "parent": parent, "children": [], "message": {
        "id": node_id, "author": {"role": role, "name": name, "metadata": {}},
        "create_time": when, "content": content, "recipient": recipient, "metadata": metadata}}


def chat(*nodes, current=None):
    mapping = dict(nodes)
    for node_id, one in mapping.items():
        if one["parent"] in mapping:
            mapping[one["parent"]]["children"].append(node_id)
    return {"title": "Chat", "mapping": mapping, "current_node": current or nodes[-1][0]}


def messages(record):
    return [m.model_dump() for t in parse([record])[0].turns for m in t.messages]


def test_a_current_node_missing_from_the_file_imports_the_newest_branch_and_says_so(alex):
    raw = (DATA / "chatgpt" / "current_node_gone.json").read_bytes()
    result = batch.import_files([("conversations.json", raw)], alex)
    refund = next(c for c in result.conversations if c.title == "Refund for a late parcel")
    assert refund.turn_count == 2
    assert result.notes == ["conversation 1 ('Refund for a late parcel'): its current_node 'gone' "
                            "is not in the file: imported its newest branch"]
    assert "left out" not in result.summary  # "Never mind." / "OK!": kept as a version
    assert branches.versions(refund.id)[1].kind == "question"


def test_a_tree_cut_above_its_first_message_imports_from_there_and_says_so(alex):
    record = chat(node("q", "gone", "user", ["Where is my parcel?"]),
                  node("a", "q", "assistant", ["On its way."]))
    result = batch.import_files([("c.json", json.dumps([record]).encode())], alex)
    assert [c.turn_count for c in result.conversations] == [1]
    assert result.notes == ["'Chat': the messages before node 'q' are not in "
                            "the file: imported from there"]


def test_librechats_real_tree_imports_the_current_branch_and_counts_the_rest(alex):
    raw = (DATA / "real" / "librechat_chatgpt_tree.json").read_bytes()
    result = batch.import_files([("conversations.json", raw)], alex)
    (conversation,) = result.conversations
    turns = parse(json.loads(raw))[0].turns
    assert [t.messages[0].content for t in turns] == ["hi there", "hi again", "tell me a joke"]
    said = " ".join(m.content or "" for t in turns for m in t.messages)
    assert "so cool bro" not in said and "story" not in said
    assert conversation.turn_count == 3
    # "so cool bro", its answer, "tell me a story" and its answer: an edit of turn 2; the
    # first joke: a regenerated answer of turn 3. Both are kept as versions, nothing left out.
    assert "left out" not in result.summary
    shown = branches.versions(conversation.id)
    assert {seq: (v.kind, v.active, v.total) for seq, v in shown.items()} == {
        1: ("question", 2, 2), 2: ("answer", 2, 2)}


def test_a_chatgpt_tree_exports_as_nimbus_json_with_the_same_tree_and_switches(alex):
    raw = (DATA / "real" / "librechat_chatgpt_tree.json").read_bytes()
    (imported,) = batch.import_files([("conversations.json", raw)], alex).conversations
    conversation = db.session.get(Conversation, imported.id)
    exported = export_conversation(conversation)
    assert [(a["seq"], a["kind"], [t["messages"][0]["content"] for t in a["turns"]])
            for a in exported["alternatives"]] == [
        (1, "question", ["so cool bro", "tell me a story"]), (2, "answer", ["tell me a joke"])]
    again = batch.import_files([("again.json", json.dumps(exported).encode())], alex)
    copy = db.session.get(Conversation, again.conversations[0].id)
    second = export_conversation(copy)
    assert second["alternatives"] == exported["alternatives"]
    branches.switch(copy, 1, 1)  # the edited-away branch, whole
    assert [t.question for t in copy.turns] == ["hi there", "so cool bro", "tell me a story"]


def test_uploads_are_named_by_their_attachments():
    metadata = {"attachments": [
        {"id": "file-abc", "name": "starter.jpg", "mime_type": "image/jpeg"},
        {"id": "file-def", "name": "recipe.pdf", "mime_type": "application/pdf"}]}
    question = node("q", None, "user", content_type="multimodal_text", metadata=metadata, parts=[
        {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-abc"},
        "Is it ready?"])
    said = messages(chat(question, node("a", "q", "assistant", ["Yes."])))
    assert said[0]["content"] == "[image: starter.jpg]\nIs it ready?\n[file: recipe.pdf]"


def test_a_browsing_steps_several_results_are_its_one_calls_result():
    record = chat(node("q", None, "user", ["Compare the two shops"]),
                  node("c", "q", "assistant", content_type="code", recipient="browser",
                       text="mclick([0, 1])"),
                  node("r1", "c", "tool", name="browser", content_type="tether_quote",
                       text="Shop A: 30 days"),
                  node("r2", "r1", "tool", name="browser", content_type="tether_quote",
                       text="Shop B: 14 days"),
                  node("a", "r2", "assistant", ["A gives 30 days, B 14."]))
    said = messages(record)
    calls = [c for m in said for c in m.get("tool_calls") or []]
    assert [c["arguments"] for c in calls] == [{"input": "mclick([0, 1])"}]
    assert [m["content"] for m in said if m["role"] == "tool"] == \
        ["Shop A: 30 days\n\nShop B: 14 days"]


def test_a_result_without_any_call_gets_no_invented_call_and_is_counted(alex):
    record = chat(node("q", None, "user", ["Read my file"]),
                  node("t", "q", "tool", name="myfiles_browser", content_type="text",
                       parts=["The files uploaded by the user have been loaded."]),
                  node("a", "t", "assistant", ["Done."]))
    said = messages(record)
    assert not any(m.get("tool_calls") for m in said) and [m["role"] for m in said] == \
        ["user", "assistant"]
    result = batch.import_files([("c.json", json.dumps([record]).encode())], alex)
    assert result.notes == ["'Chat': left out 1 tool result the export shows "
                            "without the call that asked for it"]


def test_an_archived_chatgpt_conversation_comes_in_archived(alex):
    record = chat(node("q", None, "user", ["Old question"]), node("a", "q", "assistant", ["Yes."]))
    record["is_archived"] = True
    (one,) = batch.import_files([("c.json", json.dumps([record]).encode())], alex).conversations
    assert db.session.get(Conversation, one.id).archived_at is not None


def test_the_upload_page_shows_the_note_beside_the_summary(guest):
    from .test_transfer_views import upload
    page = upload(guest, DATA / "chatgpt" / "current_node_gone.json").text
    notes = page.split('id="import-notes"')[1].split("</div>")[0]
    assert "current_node &#39;gone&#39; is not in the file: imported its newest branch" in notes
    assert "left out" not in page  # the other branch is kept as a version


def test_the_upload_page_counts_each_conversations_turns_in_words(guest):
    from .test_transfer_views import upload
    page = upload(guest, DATA / "chatgpt" / "current_node_gone.json").text
    assert "· 2 turns ·" in page and "· 1 turn ·" in page and "turn(s)" not in page
