"""Open WebUI chats: the branch from currentId is the conversation, reasoning blocks leave the
answer, tool_calls blocks and output[] items become tool calls with their results.
Hand-written records, shaped after Open WebUI's middleware output (no public export found)."""
from webapp.transfer.formats import parse


def chat(*messages, current=None):
    nodes = {m["id"]: m for m in messages}
    return {"title": "T", "chat": {"history": {"messages": nodes,
                                               "currentId": current or messages[-1]["id"]}}}


def node(id, parent, role, content, **extra):
    return {"id": id, "parentId": parent, "role": role, "content": content, **extra}


def said(record):
    return [m.model_dump() for t in parse([record])[0].turns for m in t.messages]


def test_the_branch_from_current_id_is_the_conversation_and_the_rest_a_version():
    record = chat(node("q", None, "user", "Hi"), node("a1", "q", "assistant", "Old"),
                  node("a2", "q", "assistant", "New"), current="a2")
    checked = parse([record])[0]
    assert [m["content"] for m in said(record)] == ["Hi", "New"] and checked.left_out == 0
    assert [(seq, [t.messages[-1].content for t in other.turns]) for seq, other in
            checked.versions] == [(0, ["Old"])]


def test_a_branch_whose_parent_is_missing_is_left_out_and_counted():
    record = chat(node("q", None, "user", "Hi"), node("a1", "gone", "assistant", "Old"),
                  node("a2", "q", "assistant", "New"), current="a2")
    checked = parse([record])[0]
    assert checked.versions == [] and checked.left_out == 1


def test_a_reasoning_block_leaves_the_answer_clean():
    answer = '<details type="reasoning" done="true" duration="2">\n<summary>Thought</summary>\n' \
             '&gt; thinking hard\n</details>\nThe answer is 4.'
    record = chat(node("q", None, "user", "2+2?"), node("a", "q", "assistant", answer))
    assert said(record)[-1]["content"] == "The answer is 4."


def test_a_tool_calls_block_becomes_a_call_with_its_result():
    block = ('<details type="tool_calls" done="true" id="call_1" name="weather" '
             'arguments="{&quot;city&quot;: &quot;Lyon&quot;}" result="&quot;Sunny&quot;">\n'
             '<summary>Tool Executed</summary>\n</details>\nIt is sunny in Lyon.')
    record = chat(node("q", None, "user", "Weather?"), node("a", "q", "assistant", block))
    messages = said(record)
    call = messages[1]["tool_calls"][0]
    assert (call["name"], call["arguments"]) == ("weather", {"city": "Lyon"})
    assert messages[2]["content"] == "Sunny" and messages[-1]["content"] == "It is sunny in Lyon."


def test_output_items_become_calls_with_results():
    output = [{"type": "reasoning", "content": [{"type": "output_text", "text": "hmm"}]},
              {"type": "function_call", "call_id": "c1", "name": "search",
               "arguments": '{"q": "nimbus"}'},
              {"type": "function_call_output", "call_id": "c1",
               "output": [{"type": "input_text", "text": "found it"}]},
              {"type": "message", "content": [{"type": "output_text", "text": "Here it is."}]}]
    record = chat(node("q", None, "user", "Find"),
                  node("a", "q", "assistant", "ignored markup", output=output))
    messages = said(record)
    assert messages[1]["tool_calls"][0]["name"] == "search"
    assert [m["content"] for m in messages[2:]] == ["found it", "Here it is."]


def test_the_full_export_with_meta_pinned_archived_imports():
    record = chat(node("q", None, "user", "Hi"), node("a", "q", "assistant", "Hello"))
    record.update({"meta": {"tags": ["x"]}, "pinned": True, "archived": False})
    assert [m["content"] for m in said(record)] == ["Hi", "Hello"]


def test_a_pinned_chat_comes_in_pinned_and_an_archived_one_archived(alex):
    import json
    from webapp.transfer import batch
    pinned = chat(node("q", None, "user", "Hi"), node("a", "q", "assistant", "Hello"))
    archived = chat(node("q", None, "user", "Old"), node("a", "q", "assistant", "Done"))
    pinned.update({"id": "one", "pinned": True, "archived": False})
    archived.update({"id": "two", "pinned": False, "archived": True})
    raw = json.dumps([pinned, archived]).encode()
    from webapp.extensions import db
    from webapp.models import Conversation
    first, second = (db.session.get(Conversation, one.id) for one in batch.import_files(
        [("c.json", raw)], alex).conversations)
    assert first.pinned_at and not first.archived_at
    assert second.archived_at and not second.pinned_at
