"""Export from the chat page and import in the browser: owners only, CSRF, limits, inline errors."""
import io
import json
from pathlib import Path

import pytest
from werkzeug.datastructures import FileStorage, MultiDict
from werkzeug.test import encode_multipart

from webapp.extensions import db
from webapp.models import AuditEntry, Conversation, User

from .accounts_support import make_account, refused, sign_in
from .support import ask, guest_user

DATA = Path(__file__).parent / "data"


def upload(client, *paths_or_files, **form):
    files = [FileStorage(io.BytesIO(p.read_bytes()), p.name) if isinstance(p, Path)
             else FileStorage(*p) for p in paths_or_files]
    # Encoded in memory: the test client would spool a large body to a file it never closes.
    boundary, body = encode_multipart(MultiDict([*(("file", f) for f in files), *form.items()]))
    # Tests run jobs inline: the import's page, followed from the POST, shows its result.
    return client.post("/import", data=body, follow_redirects=True,
                       content_type=f"multipart/form-data; boundary={boundary}")


def count() -> int:
    return db.session.query(Conversation).count()


@pytest.fixture
def conversation(guest):
    _, conversation, _ = ask(guest_user(guest), "Can I get a refund for order #1043?")
    return conversation


def test_the_chat_page_offers_each_export_and_the_import_page(guest, conversation):
    page = guest.get(f"/c/{conversation.id}").text
    for fmt in ("markdown", "openai", "nimbus"):
        assert f"/c/{conversation.id}/export/{fmt}" in page
    assert 'href="/import"' in page


def test_markdown_export_downloads_with_the_tool_steps_folded(guest, conversation):
    response = guest.get(f"/c/{conversation.id}/export/markdown")
    assert response.status_code == 200 and "attachment;" in response.headers["Content-Disposition"]
    assert response.headers["Content-Disposition"].endswith('.md"')
    text = response.text
    assert text.startswith("# Refund for order #1043")  # the title made from the first question
    assert "### Customer" in text and "### Nimbus" in text
    assert "<details><summary>1 tool call</summary>" in text and "check_refund_eligibility" in text


def test_the_shops_assistant_name_heads_its_answers_in_markdown(guest, conversation):
    conversation.tenant.settings = {**(conversation.tenant.settings or {}), "assistant_name": "Cora"}
    db.session.commit()
    assert "### Cora" in guest.get(f"/c/{conversation.id}/export/markdown").text


def test_openai_and_nimbus_exports_download_as_json(guest, conversation):
    messages = guest.get(f"/c/{conversation.id}/export/openai").get_json()
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1]["tool_calls"][0]["function"]["name"] == "check_refund_eligibility"
    nimbus = guest.get(f"/c/{conversation.id}/export/nimbus")
    assert nimbus.get_json()["format"] == "nimbus.conversation"
    assert nimbus.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize("fmt", ["markdown", "openai", "nimbus"])
def test_a_foreign_conversation_cannot_be_exported(guest, sam, fmt):
    _, foreign, _ = ask(sam, "My secret order is 1042")
    response = guest.get(f"/c/{foreign.id}/export/{fmt}")
    assert refused(response) and "1042" not in response.text


def test_a_customer_imports_a_chatgpt_export_into_their_own_account(guest):
    before = count()
    response = upload(guest, DATA / "chatgpt" / "conversations.json")
    assert response.status_code == 200 and "Imported 2 conversations (" in response.text
    mine = db.session.query(Conversation).filter_by(user_id=guest_user(guest).id).all()
    assert count() == before + 2 and {c.title for c in mine} >= {"Sourdough starter",
                                                                  "Refund for a late parcel"}
    assert f"/c/{mine[0].id}" in response.text


def test_a_strict_upload_with_a_bad_record_shows_its_error_inline_and_stores_nothing(guest):
    before = count()
    response = upload(guest, DATA / "sharegpt.jsonl", DATA / "malformed" / "claude_unknown_sender.json",
                      strict="1")
    assert response.status_code == 200  # the import's page, which the job's refusal fills in
    assert "Nothing was imported: claude_unknown_sender.json: conversation 2, message 2, sender: " \
           "unknown sender &#39;bot&#39;" in response.text
    assert 'id="import-error"' in response.text and count() == before


def test_an_upload_with_a_bad_record_imports_the_rest_and_lists_the_one_skipped(guest):
    before = count()
    response = upload(guest, DATA / "malformed" / "chatgpt_bad_time.json")
    assert response.status_code == 200
    assert "Imported 1 conversation (" in response.text and "skipped 1 that could not be read" \
        in response.text
    skipped = response.text.split('id="import-skipped"')[1].split("</div>")[0]
    assert "conversation 2 (&#39;Sourdough starter&#39;), message ans, create_time: expected " \
           "seconds since 1970" in skipped and skipped.count("<li>") == 1
    assert count() == before + 1


def test_an_upload_where_nothing_is_readable_shows_why_and_stores_nothing(guest):
    before = count()
    response = upload(guest, DATA / "malformed" / "openwebui_broken_parent.json")
    assert response.status_code == 200 and "Nothing was imported: openwebui_broken_parent.json: " \
        in response.text and count() == before


def test_an_upload_without_the_csrf_token_is_refused(guest):
    del guest.environ_base["HTTP_X_CSRFTOKEN"]
    before = count()
    response = upload(guest, DATA / "openai_messages.json")
    assert response.status_code == 400 and count() == before


def test_an_upload_larger_than_a_message_but_within_the_import_limit_is_taken(app, client):
    messages = [{"role": "user", "content": "x" * 150_000}, {"role": "assistant", "content": "ok"}]
    big = json.dumps(messages * 10).encode()  # 1.5 MB: over MAX_CONTENT_LENGTH (1 MB)
    assert len(big) > app.config["MAX_CONTENT_LENGTH"]
    make_account("dana@example.com")  # a guest's upload is held to MAX_CONTENT_LENGTH
    sign_in(client, "dana@example.com")
    response = upload(client, (io.BytesIO(big), "big.json"))
    assert response.status_code == 200 and "Imported 1 conversation (" in response.text


def test_an_upload_over_the_import_limit_is_refused_readably(app, client):
    app.config["NIMBUS_IMPORT_MAX_BYTES"] = 10_000
    make_account("dana@example.com")
    sign_in(client, "dana@example.com")
    before = count()
    response = upload(client, (io.BytesIO(b"[" + b" " * 20_000 + b"]"), "huge.json"))
    assert response.status_code == 413 and "too much to send" in response.text
    assert count() == before


def test_staff_import_into_a_customer_of_their_shop_and_it_is_audited(client):
    make_account("clerk@example.com", role="staff")
    customer = make_account("dana@example.com")
    sign_in(client, "clerk@example.com")
    response = upload(client, DATA / "openwebui_export.json", customer="dana@example.com")
    assert response.status_code == 200 and "into dana@example.com's account" in response.text
    (imported,) = db.session.query(Conversation).filter_by(user_id=customer.id).all()
    assert imported.title == "Opening hours" and f"/staff/c/{imported.id}" in response.text
    entry = db.session.query(AuditEntry).filter_by(action="imported conversations").one()
    assert entry.customer_id == customer.id and db.session.get(User, entry.actor_id).email == "clerk@example.com"


def test_staff_see_in_the_audit_how_many_records_an_import_skipped(client):
    make_account("clerk@example.com", role="staff")
    make_account("dana@example.com")
    sign_in(client, "clerk@example.com")
    response = upload(client, DATA / "malformed" / "claude_unknown_sender.json",
                      customer="dana@example.com")
    assert response.status_code == 200 and 'id="import-skipped"' in response.text
    entry = db.session.query(AuditEntry).filter_by(action="imported conversations").one()
    assert entry.detail == "1 conversation, 1 skipped"


@pytest.mark.parametrize("actor, target, reason", [
    ("customer", "dana@example.com", "only the shop&#39;s staff may import into another"),
    ("staff", "lee@other.example", "no customer &#39;lee@other.example&#39; in this shop"),
    ("staff", "boss@example.com", "no customer &#39;boss@example.com&#39; in this shop"),
])
def test_nobody_imports_into_an_account_they_may_not_reach(client, actor, target, reason):
    make_account("me@example.com", role=actor)
    make_account("dana@example.com")
    make_account("boss@example.com", role="admin")
    make_account("lee@other.example", tenant="other")
    sign_in(client, "me@example.com")
    before = count()
    response = upload(client, DATA / "openai_messages.json", customer=target)
    assert response.status_code == 400 and f"Nothing was imported: {reason}" in response.text
    assert count() == before


def a_nimbus_export_with_instructions_and_a_memory(app) -> Path:
    """alex's conversation as Nimbus JSON: its instructions, and a memory it taught."""
    from webapp.accounts import find_user
    from webapp.memories.store.scopes import SessionScope
    from webapp.memories.store.rows import remember
    from webapp.transfer import export_conversation
    alex = find_user("alex@example.com")
    _, conversation, _ = ask(alex, "Where is my order #1041?")
    conversation.instructions = "Always offer a full refund."
    remember(SessionScope.for_user(alex), "Prefers phone calls", app.config, source="tool",
             conversation_id=conversation.id, turn_seq=0)
    db.session.commit()
    exported = export_conversation(conversation)
    assert exported["instructions"] and exported["memories"]
    path = Path(app.instance_path) / "with_memories.json"
    path.write_text(json.dumps(exported, default=str))
    return path


def memories_of(user) -> list[str]:
    from webapp.memories.models import Memory
    return [m.content for m in db.session.query(Memory).filter_by(subject_id=user.id)]


def test_staff_import_a_customers_history_but_not_their_instructions_or_memories(app, client):
    path = a_nimbus_export_with_instructions_and_a_memory(app)
    make_account("clerk@example.com", role="staff")
    customer = make_account("dana@example.com")
    sign_in(client, "clerk@example.com")
    response = upload(client, path, customer="dana@example.com")
    assert response.status_code == 200
    assert ("Left out 1 conversation instruction and 1 memory: only an admin may write a "
            "customer&#39;s instructions and memories.") in response.text
    (imported,) = db.session.query(Conversation).filter_by(user_id=customer.id).all()
    assert imported.turn_count == 1 and imported.instructions is None
    assert memories_of(customer) == []
    entry = db.session.query(AuditEntry).filter_by(action="imported conversations").one()
    assert entry.detail == "1 conversation, instructions and memories left out"


def test_an_admins_import_for_a_customer_writes_them_and_the_audit_says_what(app, client):
    path = a_nimbus_export_with_instructions_and_a_memory(app)
    make_account("boss@example.com", role="admin")
    customer = make_account("dana@example.com")
    sign_in(client, "boss@example.com")
    response = upload(client, path, customer="dana@example.com")
    assert response.status_code == 200 and "Left out" not in response.text
    (imported,) = db.session.query(Conversation).filter_by(user_id=customer.id).all()
    assert imported.instructions == "Always offer a full refund."
    assert memories_of(customer) == ["Prefers phone calls"]
    entry = db.session.query(AuditEntry).filter_by(action="imported conversations").one()
    assert entry.detail == "1 conversation, 1 conversation instruction, 1 memory"
