"""Content parts in every shape other tools write: words are kept, media become a marker that
names the file, and a conversation with nothing but markers is skipped, never stored."""
import json

import pytest

from webapp.extensions import db
from webapp.models import Conversation
from webapp.transfer.importer import InvalidImport
from webapp.transfer.parts import text_of


@pytest.mark.parametrize("part, text", [
    ({"type": "text", "text": "Hello"}, "Hello"),
    ({"type": "text", "value": "Hello"}, "Hello"),  # LLaMA-Factory v1
    ({"type": "input_text", "text": "Hello"}, "Hello"),  # the Responses API
    ({"type": "text", "content": [{"type": "text", "text": "Hello"}]}, "Hello"),  # nested
    ({"type": "refusal", "refusal": "I can't help with that."}, "I can't help with that."),
    ({"type": "image_url", "image_url": {"url": "https://example.com/img/photo.png?s=2"}},
     "[image: photo.png]"),
    ({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}, "[image]"),
    ({"type": "image_url", "value": "data/mllm_demo_data/1.jpg"}, "[image: 1.jpg]"),
    ({"type": "input_audio", "input_audio": {"data": "UklGR", "format": "wav"}}, "[audio]"),
    ({"type": "file", "file": {"filename": "receipt.pdf", "file_data": "JVBER"}},
     "[file: receipt.pdf]"),
    ({"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-abc"},
     "[image: file-abc]"),  # ChatGPT
    ({"type": "sticker"}, "[sticker]"),
])
def test_each_part_shape_gives_its_words_or_a_marker_naming_it(part, text):
    assert text_of([part], "message 1") == text


def test_a_text_part_without_its_words_is_refused_naming_the_part():
    with pytest.raises(InvalidImport, match=r"message 2, content\[1\]: a text part without its "
                                            r"words"):
        text_of([{"type": "text", "text": "Hi"}, {"type": "text", "words": "lost"}], "message 2")


def test_a_conversation_of_nothing_but_placeholders_is_skipped_and_the_rest_imported(
        runner, tmp_path):
    path = tmp_path / "chats.jsonl"
    pictures = {"messages": [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/a.png"}}]},
        {"role": "assistant", "content": [{"type": "image_url", "value": "b.png"}]}]}
    words = {"messages": [{"role": "user", "content": "Where is my order?"},
                          {"role": "assistant", "content": "On its way."}]}
    path.write_text(json.dumps(pictures) + "\n" + json.dumps(words) + "\n")
    before = db.session.query(Conversation).count()
    result = runner.invoke(args=["import", str(path)])
    assert result.exit_code == 0
    assert "line 1: no words in any message, only [image: a.png] — skipped" in result.stderr
    assert db.session.query(Conversation).count() == before + 1


def test_a_file_whose_only_conversation_is_placeholders_is_refused(runner, tmp_path):
    path = tmp_path / "messages.json"
    path.write_text(json.dumps([{"role": "user", "content": [{"type": "input_audio",
                                                              "input_audio": {"data": "UklGR"}}]}]))
    result = runner.invoke(args=["import", str(path)])
    assert result.exit_code == 1 and "no words in any message, only [audio]" in result.output


def test_a_claude_upload_without_its_text_becomes_a_marker_naming_it(runner, tmp_path):
    chat = {"uuid": "c1", "name": "Receipt", "created_at": "2025-03-01T09:00:00Z", "chat_messages": [
        {"uuid": "m1", "sender": "human", "text": "Is this refundable?", "created_at": "2025-03-01T09:00:00Z",
         "content": [{"type": "text", "text": "Is this refundable?"}], "attachments": [],
         "files": [{"file_name": "receipt.jpg"}],
         "files_v2": [{"file_name": "receipt.jpg", "file_kind": "image"}]},
        {"uuid": "m2", "sender": "assistant", "text": "Yes, within 14 days.",
         "created_at": "2025-03-01T09:00:05Z",
         "content": [{"type": "text", "text": "Yes, within 14 days."}]}]}
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([chat]))
    output = runner.invoke(args=["import", str(path)]).output
    conversation = db.session.get(Conversation, output.split("conversation: ")[1].strip())
    assert conversation.turns[0].question == "Is this refundable?\n\n[image: receipt.jpg]"
