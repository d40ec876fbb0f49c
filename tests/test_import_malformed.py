"""Broken files through the upload page, as a signed-in customer would send them: for every
format the importer reads, a cut-off file, the wrong top-level type, a file of another format
picked explicitly, binary garbage, an empty file and a field of the wrong type each get a clear
message (400, never a 500) and store nothing."""
import copy
import json
from pathlib import Path

import pytest

from webapp.extensions import db
from webapp.models import Conversation

from .accounts_support import make_account, sign_in
from .test_transfer_views import upload

DATA = Path(__file__).parent / "data"
NIMBUS = {"format": "nimbus.conversation", "version": 4, "title": "Opening hours",
          "turns": [{"messages": [{"role": "user", "content": "When do you open?"},
                                  {"role": "assistant", "content": "At nine."}]}]}


def sample(fmt: str) -> bytes:
    """A file each format's reader imports whole."""
    if fmt == "nimbus":
        return json.dumps(NIMBUS).encode()
    return (DATA / SAMPLES[fmt]).read_bytes()


SAMPLES = {"openai": "openai_messages.json", "openai-jsonl": "openai_finetune.jsonl",
           "chatgpt": "chatgpt/conversations.json", "claude": "claude_conversations.json",
           "openwebui": "openwebui_export.json", "sharegpt": "sharegpt.jsonl",
           "librechat": "real/librechat_export.json"}
FORMATS = ["nimbus", *SAMPLES]


def chosen(fmt: str) -> str:
    """The format's name in the form's list."""
    return fmt.removesuffix("-jsonl")


def first_record(fmt: str):
    """The sample's first conversation, alone, as a loaded value (a list keeps its list)."""
    fmt = fmt.split("-")[0] if fmt.startswith(("chatgpt", "openwebui")) else fmt
    raw = sample(fmt)
    if fmt in ("openai-jsonl", "sharegpt"):
        return json.loads(raw.splitlines()[0])
    data = json.loads(raw)
    return [data[0]] if fmt in ("chatgpt", "claude", "openwebui") else data


def wrong_field(fmt: str) -> bytes:
    """The sample's first conversation with one field of the wrong type."""
    data = copy.deepcopy(first_record(fmt))
    if fmt == "nimbus":
        data["turns"][0]["messages"][0]["content"] = 5
    elif fmt == "openai":
        data[1]["content"] = 5
    elif fmt in ("openai-jsonl",):
        data["messages"][1]["content"] = {"words": 5}
    elif fmt == "chatgpt":
        next(n for n in data[0]["mapping"].values()
             if n["message"] and n["message"]["author"]["role"] == "user"
             and n["message"]["content"]["content_type"] == "text"
             )["message"]["content"]["parts"] = "Where is my parcel?"
    elif fmt == "claude":
        data[0]["chat_messages"][0]["content"] = "What is the return window?"
        data[0]["chat_messages"][0]["text"] = 5
    elif fmt == "openwebui":
        messages = data[0]["chat"]["history"]["messages"]
        next(m for m in messages.values() if m["role"] == "user")["content"] = 5
    elif fmt == "sharegpt":
        data["conversations"][1]["value"] = 5
    elif fmt == "librechat":
        data["messages"][0]["text"] = 5
    text = json.dumps(data)
    return text.encode()


def wrong_top_level(fmt: str) -> bytes:
    """A list where an object was expected, or the reverse, or a bare number."""
    data = json.loads(sample(fmt).splitlines()[0]) if fmt in ("openai-jsonl", "sharegpt") \
        else json.loads(sample(fmt))
    return json.dumps({"data": data} if isinstance(data, list) else [[data]]).encode()


def other_format(fmt: str) -> str:
    return {"nimbus": "openai", "openai": "chatgpt", "openai-jsonl": "sharegpt",
            "chatgpt": "claude", "claude": "openwebui", "openwebui": "chatgpt",
            "sharegpt": "openai", "librechat": "openwebui"}[fmt]


BROKEN = {
    "cut off": lambda fmt: sample(fmt)[:len(sample(fmt)) * 2 // 3],
    "wrong top-level type": wrong_top_level,
    "binary garbage": lambda fmt: bytes(range(256)) * 4,
    "a zip archive": lambda fmt: b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(200),
    "empty": lambda fmt: b"",
    "only blank lines": lambda fmt: b"\n \n\t\n",
    "a field of the wrong type": wrong_field,
    "a huge number": lambda fmt: sample(fmt).replace(b"[", b"[" + b"9" * 100_000 + b",", 1)
    if fmt != "nimbus" else b'{"format": "nimbus.conversation", "version": 4' + b"0" * 100_000 + b"}",
}


@pytest.fixture
def dana(client):
    make_account("dana@example.com")
    sign_in(client, "dana@example.com")
    return client


def count() -> int:
    return db.session.query(Conversation).count()


def refused_readably(response, before: int) -> str:
    """The page's one-line reason, after checking nothing was stored and nothing crashed."""
    # Refused on the form (400/422), or by the import's job, on the import's own page.
    assert response.status_code in (400, 422) or (
        response.status_code == 200 and response.request.path.startswith("/imports/")), \
        (response.status_code, page_notice(response))
    assert 'id="import-error"' in response.text and "Nothing was imported: " in response.text
    assert count() == before
    return response.text.split('id="import-error">')[1].split("</p>")[0]


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_sample_imports_whole(dana, fmt):
    """The files the broken ones are made from are good ones."""
    response = upload(dana, (__import__("io").BytesIO(sample(fmt)), "good.json"),
                      format=chosen(fmt))
    assert response.status_code == 200 and "Imported " in response.text
    assert "skipped" not in response.text.split('id="import-done"')[1].split("</div>")[0]


@pytest.mark.parametrize("how", BROKEN)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("picked", ["auto", "format"])
def test_a_broken_file_is_refused_with_a_reason_and_stores_nothing(dana, fmt, how, picked):
    import io
    before = count()
    raw = BROKEN[how](fmt)
    response = upload(dana, (io.BytesIO(raw), "broken.json"),
                      format="auto" if picked == "auto" else chosen(fmt))
    reason = refused_readably(response, before)
    assert "broken.json: " in reason and len(reason) < 400


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_file_of_another_format_picked_explicitly_says_what_it_looks_like(dana, fmt):
    import io
    before = count()
    response = upload(dana, (io.BytesIO(sample(fmt)), "mine.json"), format=other_format(fmt))
    reason = refused_readably(response, before)
    assert "looks like" in reason and f"choose {chosen(fmt)} or auto" in reason


def page_notice(response) -> str:
    """What the page says of the import, for a failing assertion."""
    return " ".join(response.text.split('<h1 id="import-title">')[-1].split("<form")[0].split())[:800]


def with_list_ids(fmt: str) -> bytes:
    """The sample's first conversation where an id or a parent link is a list, not a string."""
    data = copy.deepcopy(first_record(fmt))
    if fmt == "chatgpt-parent":
        next(n for n in data[0]["mapping"].values() if n["parent"])["parent"] = ["root"]
    elif fmt == "chatgpt-current":
        data[0]["current_node"] = {"id": data[0]["current_node"]}
    elif fmt == "openwebui":
        history = data[0]["chat"]["history"]
        history["messages"][history["currentId"]]["parentId"] = ["m-1"]
    elif fmt == "openwebui-output":
        data = json.loads((DATA / "real" / "librechat_openwebui_export.json").read_bytes())
        for chat in data:
            for message in chat["chat"]["history"]["messages"].values():
                for item in message.get("output") or []:
                    item["call_id"] = [item.get("call_id")]
                    item["output"] = [{"type": "text", "text": 5}]
    elif fmt == "claude":
        for message in data[0]["chat_messages"]:
            message["uuid"], message["parent_message_uuid"] = [message["uuid"]], {"x": 1}
    elif fmt == "librechat":
        for message in data["messages"]:
            message["messageId"], message["parentMessageId"] = [1], [2]
    return json.dumps(data).encode()


@pytest.mark.parametrize("fmt", ["chatgpt-parent", "chatgpt-current", "openwebui", "claude",
                                 "librechat"])
def test_a_tree_linked_by_lists_instead_of_ids_is_refused_not_a_crash(dana, fmt):
    import io
    before = count()
    raw = with_list_ids(fmt)
    response = upload(dana, (io.BytesIO(raw), "tree.json"), format=fmt.split("-")[0])
    assert "tree.json: " in refused_readably(response, before)


def test_open_webui_output_items_with_odd_ids_and_parts_import_without_a_crash(dana):
    import io
    response = upload(dana, (io.BytesIO(with_list_ids("openwebui-output")), "output.json"))
    assert response.status_code == 200 and "Imported 3 conversations (3 turns)" in response.text


def test_a_shape_no_reader_foresaw_refuses_its_record_in_words(dana, monkeypatch):
    import io

    from webapp.transfer import formats

    def surprised(record, label):
        return {}["a key no file has"]
    monkeypatch.setattr(formats, "sharegpt", surprised)
    before = count()
    response = upload(dana, (io.BytesIO(sample("sharegpt")), "odd.jsonl"))
    assert "line 1: a field holds a value of a type this format never has" in \
        refused_readably(response, before)
