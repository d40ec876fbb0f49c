"""A retried import adds no copies: conversations already imported by the same owner (by their
source's id, or the digest of their words where the format has no id) are skipped and counted,
on the upload page and in `flask import`; another owner, or a deleted copy, imports again."""
import io
import json
from pathlib import Path

import pytest

from webapp.extensions import db
from webapp.models import Conversation, utcnow

from .accounts_support import make_account, sign_in
from .support import run
from .test_transfer_views import upload

DATA = Path(__file__).parent / "data"
CHATGPT = DATA / "chatgpt" / "conversations.json"


def owned_by(email: str) -> list[Conversation]:
    from webapp.accounts import find_user
    return db.session.query(Conversation).filter_by(user_id=find_user(email).id).all()


@pytest.fixture
def dana(client):
    make_account("dana@example.com")
    sign_in(client, "dana@example.com")
    return client


@pytest.mark.parametrize("sample", ["chatgpt/conversations.json", "claude_conversations.json",
                                    "openwebui_export.json", "real/librechat_export.json",
                                    "sharegpt.jsonl", "openai_finetune.jsonl",
                                    "openai_messages.json"])
def test_uploading_the_same_file_twice_skips_what_was_imported(dana, sample):
    first = upload(dana, DATA / sample)
    assert first.status_code == 200 and "already imported" not in first.text
    n = len(owned_by("dana@example.com"))
    again = upload(dana, DATA / sample)
    assert again.status_code == 200, again.text
    done = again.text.split('id="import-done"')[1].split("</p>")[0]
    assert f"Nothing new to import; {n} conversation{'s were' if n > 1 else ' was'} already " \
           "imported: skipped" in done
    assert len(owned_by("dana@example.com")) == n


def test_a_later_export_with_one_new_conversation_imports_only_that_one(dana, tmp_path):
    chats = json.loads(CHATGPT.read_text())
    upload(dana, (io.BytesIO(json.dumps(chats[:1]).encode()), "conversations.json"))
    response = upload(dana, CHATGPT)  # the same id, and one more
    assert "Imported 1 conversation (" in response.text
    assert "1 conversation was already imported: skipped" in response.text
    assert sorted(c.title for c in owned_by("dana@example.com")) == [
        "Refund for a late parcel", "Sourdough starter"]


def test_the_source_id_is_kept_on_the_imported_conversation(dana):
    upload(dana, DATA / "claude_conversations.json")
    keys = {c.import_key for c in owned_by("dana@example.com")}
    uuids = {f"claude:{c['uuid']}" for c in json.loads((DATA / "claude_conversations.json")
                                                       .read_text())}
    assert keys == uuids


def test_the_same_id_twice_in_one_upload_is_imported_once(dana):
    chat = json.loads(CHATGPT.read_text())[0]
    response = upload(dana, (io.BytesIO(json.dumps([chat, chat]).encode()), "a.json"),
                      (io.BytesIO(json.dumps([chat]).encode()), "b.json"))
    assert "Imported 1 conversation (" in response.text
    assert "2 conversations were already imported: skipped" in response.text
    assert len(owned_by("dana@example.com")) == 1


def test_another_customer_imports_the_same_file_for_themselves(client):
    make_account("dana@example.com")
    make_account("lee@example.com")
    sign_in(client, "dana@example.com")
    upload(client, CHATGPT)
    sign_in(client, "lee@example.com")
    response = upload(client, CHATGPT)
    assert "Imported 2 conversations (" in response.text and "already" not in response.text
    assert len(owned_by("lee@example.com")) == 2


def test_a_deleted_import_can_be_imported_again(dana):
    upload(dana, DATA / "openwebui_export.json")
    (imported,) = owned_by("dana@example.com")
    imported.deleted_at = utcnow()
    db.session.commit()
    response = upload(dana, DATA / "openwebui_export.json")
    assert "Imported 1 conversation (" in response.text and "already" not in response.text


def test_the_import_command_skips_what_it_imported_before(runner):
    first = run(runner, "import", str(CHATGPT), "--user", "dana@example.org")
    assert "Imported 2 conversations (" in first
    again = run(runner, "import", str(CHATGPT), "--user", "dana@example.org")
    assert "Nothing new to import; 2 conversations were already imported: skipped." in again
    assert len(owned_by("dana@example.org")) == 2


def test_the_import_command_retries_a_file_without_ids_by_its_words(runner):
    path = str(DATA / "sharegpt.jsonl")
    run(runner, "import", path, "--user", "dana@example.org")
    n = len(owned_by("dana@example.org"))
    again = run(runner, "import", path, "--user", "dana@example.org", "--strict")
    assert f"{n} conversations were already imported: skipped" in again
    assert len(owned_by("dana@example.org")) == n
