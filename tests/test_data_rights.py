"""Delete my data leaves no row of the customer in any table; Download my data holds it all."""
import json

from sqlalchemy import JSON, String, Text, select, text

from webapp.accounts import find_user
from webapp.accounts.personal_data import REDACTED, delete_user_data
from webapp.extensions import db
from webapp.memories.models import DistillCheckpoint, Memory, TurnVector
from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.sharing import set_memory_sharing
from webapp.memories.store.rows import delete_memory, remember, update_content
from webapp.context.summary.models import ConversationSummary
from webapp.models import AuditEntry, Conversation, RequestText, ShareLink, Turn, User, utcnow
from webapp.shop.demo import give_demo_orders
from webapp.shop.models import Order, Ticket
from webapp.audit import record
from webapp.viewer.as_sent import rebuild

from .accounts_support import make_account, sign_in
from .support import ask, run

MARKER = "zanzibarquokka"  # a word only the deleted customer ever wrote


def give_them_everything(app, user):
    """One row of every kind that can be about a customer."""
    give_demo_orders(user)
    db.session.commit()
    _, conversation, _ = ask(user, f"Where is my order #1041? My cat is called {MARKER}.")
    turn = conversation.turns[0]
    scope = SessionScope.for_user(user)
    remember(scope, f"Has a cat called {MARKER}", app.config, source="tool",
             conversation_id=conversation.id, turn_seq=0)
    remember(scope, "Prefers email", app.config, source="hand", word="account", personal=False)
    gift = remember(scope, "Order 1041 is a gift", app.config, source="hand", word="order",
                    order_number=1041, personal=False)[0]
    update_content(gift, f"Order 1041 is a gift for {MARKER}", app.config)  # the old text: history
    delete_memory(remember(scope, "Prefers mornings", app.config, source="hand")[0])
    set_memory_sharing(user, True)
    # The turn has its vector already when search is on (embedded after the answer); else add one.
    db.session.merge(TurnVector(turn_id=turn.id, embedding=b"\0" * 4, embedding_model="test"))
    db.session.add_all([
        ConversationSummary(conversation_id=conversation.id, style="concise", text=MARKER,
                            through_seq=0),
        DistillCheckpoint(conversation_id=conversation.id, distilled_through_seq=0),
        ShareLink(conversation_id=conversation.id, expires_at=utcnow()),
        Ticket(tenant_id=user.tenant_id, customer_id=user.id, category="other", summary=MARKER)])
    db.session.commit()
    staff = make_account("pat@example.com", "staff")
    record(staff, "opened conversation", conversation=conversation)
    return conversation


def references(user_id, conversation_ids, turn_ids, order_ids, email):
    """(table, column, value) of every stored value that points at or quotes the customer."""
    found = []
    pointers = {"users": {user_id}, "conversations": conversation_ids, "turns": turn_ids,
                "orders": order_ids}
    for table in db.metadata.sorted_tables:
        for row in db.session.execute(select(table)).mappings():
            for column in table.columns:
                value = row[column.name]
                targets = {fk.column.table.name for fk in column.foreign_keys}
                if table.name in pointers and column.primary_key:
                    targets.add(table.name)
                if any(value in pointers[t] for t in targets if t in pointers):
                    found.append((table.name, column.name, value))
                if table.name in ("memories", "memory_revisions") and column.name == "memorable_id" and (
                        (row["memorable_type"] == "account" and value == user_id)
                        or (row["memorable_type"] == "order" and value in order_ids)):
                    found.append((table.name, column.name, value))
                if isinstance(column.type, (String, Text, JSON)) and value is not None:
                    blob = json.dumps(value) if isinstance(column.type, JSON) else str(value)
                    if email in blob or MARKER in blob:
                        found.append((table.name, column.name, blob[:60]))
    for index in ("turns_fts", "memories_fts"):
        hits = db.session.execute(text(f"SELECT rowid FROM {index} WHERE {index} MATCH :w"),
                                  {"w": MARKER}).all()
        found += [(index, "rowid", hit[0]) for hit in hits]
    return found


def snapshot(user):
    ids = select(Conversation.id).where(Conversation.user_id == user.id)
    return {"conversations": db.session.scalar(select(db.func.count()).select_from(ids.subquery())),
            "turns": Turn.query.filter(Turn.conversation_id.in_(ids)).count(),
            "memories": Memory.query.filter(Memory.subject_id == user.id).count(),
            "orders": Order.query.filter_by(customer_id=user.id).count()}


def test_delete_my_data_leaves_no_row_of_the_customer_and_spares_the_others(app, client, sam):
    owner = make_account("dana@example.com")
    conversation = give_them_everything(app, owner)
    ask(sam, "Where is my order #1042?")
    remember(SessionScope.for_user(sam), "Likes parcels", app.config, source="hand")
    others = snapshot(sam)
    user_id, conversation_ids = owner.id, {conversation.id}
    turn_ids = {t.id for t in conversation.turns}
    order_ids = {o.id for o in Order.query.filter_by(customer_id=owner.id)}
    assert references(user_id, conversation_ids, turn_ids, order_ids, "dana@example.com")

    sign_in(client, "dana@example.com")
    refused = client.post("/account/delete", data={"confirm": "no"})
    assert refused.status_code == 422 and find_user("dana@example.com") is not None
    done = client.post("/account/delete", data={"confirm": "DELETE"})
    assert done.status_code == 200 and "Your data was deleted" in done.text

    assert references(user_id, conversation_ids, turn_ids, order_ids, "dana@example.com") == []
    assert snapshot(sam) == others
    entry = AuditEntry.query.filter_by(action="deleted customer data").one()
    assert entry.customer_id is None and "1 conversation," in entry.detail
    assert AuditEntry.query.filter_by(action="opened conversation").one().conversation_id is None


def test_users_delete_does_the_same_from_the_command_line(app, runner):
    owner = make_account("dana@example.com")
    conversation = give_them_everything(app, owner)
    user_id, conversation_id = owner.id, conversation.id
    turn_ids = {t.id for t in conversation.turns}
    order_ids = {o.id for o in Order.query.filter_by(customer_id=user_id)}
    run(runner, "users", "delete", "dana@example.com")
    assert references(user_id, {conversation_id}, turn_ids, order_ids, "dana@example.com") == []
    assert db.session.get(User, user_id) is None


def test_download_my_data_is_a_json_file_of_everything_about_them(app, client):
    owner = make_account("dana@example.com")
    conversation = give_them_everything(app, owner)
    sign_in(client, "dana@example.com")
    response = client.get("/account/data.json")
    assert response.status_code == 200 and "attachment" in response.headers["Content-Disposition"]
    data = response.get_json()
    assert data["account"]["email"] == "dana@example.com"
    assert [c["id"] for c in data["conversations"]] == [conversation.id]
    assert {m["content"] for m in data["memories"]} >= {f"Has a cat called {MARKER}", "Prefers email"}
    gift = next(m for m in data["memories"] if m["scope"] == "order #1041")
    assert [h["content"] for h in gift["history"]] == ["Order 1041 is a gift"]
    assert data["tickets"][0]["summary"] == MARKER


def test_a_guest_can_delete_their_data_too(guest):
    from .support import guest_user
    visitor = guest_user(guest)
    ask(visitor, "Hello there")
    assert guest.post("/account/delete", data={"confirm": "DELETE"}).status_code == 200
    assert db.session.get(User, visitor.id) is None


def test_a_shop_wide_memory_from_their_conversation_is_blanked_in_what_others_were_sent(app, sam):
    owner = make_account("dana@example.com")
    _, theirs, _ = ask(owner, "Do you ship to Zanzibar?")
    remember(SessionScope.for_user(owner), f"Ships to {MARKER} take 9 days", app.config,
             source="distilled", personal=False, conversation_id=theirs.id)
    _, others, _ = ask(sam, "How long does shipping take?")
    sent = lambda: [t for (t,) in db.session.execute(  # noqa: E731
        select(RequestText.text).where(RequestText.conversation_id == others.id))]
    assert any(MARKER in t for t in sent())  # the memory went into Sam's prompt
    counts = delete_user_data(owner, "test")
    assert not any(MARKER in t for t in sent()) and any(REDACTED in t for t in sent())
    assert counts["redacted_texts"] >= 1
    sent_then = rebuild(others.turns[0])  # Sam's viewer still shows it, blanked, and says so
    assert any(REDACTED in m["content"] for s in sent_then.sections for m in s.messages)
    assert any("deleted customer's memory is blanked" in p for p in sent_then.problems)


def file_bytes(app) -> bytes:
    path = app.config["SQLALCHEMY_DATABASE_URI"].removeprefix("sqlite:///")
    found = b""
    for name in (path, path + "-wal"):
        try:
            with open(name, "rb") as handle:
                found += handle.read()
        except FileNotFoundError:
            pass
    return found


def test_delete_my_data_leaves_no_word_in_the_search_index_or_the_file(app, client):
    owner = make_account("dana@example.com")
    give_them_everything(app, owner)
    db.session.commit()
    assert MARKER.encode() in file_bytes(app)
    sign_in(client, "dana@example.com")
    assert client.post("/account/delete", data={"confirm": "DELETE"}).status_code == 200
    for shadow in ("turns_fts_data", "memories_fts_data"):
        blobs = db.session.execute(text(f"SELECT block FROM {shadow}")).scalars().all()
        assert not any(MARKER.encode() in (b or b"") for b in blobs), shadow
    assert MARKER.encode() not in file_bytes(app)  # nor in freed pages, nor in the WAL


def test_a_deleted_staff_member_leaves_no_email_in_the_audit_log(app, client, alex):
    _, conversation, _ = ask(alex, "Where is my order #1041?")
    pat = make_account("pat@example.com", "customer")
    pat_id = pat.id
    assert app.test_cli_runner().invoke(args=["users", "set-role", "pat@example.com", "staff"]).exit_code == 0
    sign_in(client, "pat@example.com")
    assert client.get(f"/staff/c/{conversation.id}").status_code == 200  # audited, by pat
    admin = app.test_client()
    make_account("ada@example.com", "admin")
    sign_in(admin, "ada@example.com")
    assert "pat@example.com" in admin.get("/staff/audit").text  # shown while the account exists

    assert client.post("/account/delete", data={"confirm": "DELETE"}).status_code == 200
    assert references(pat_id, set(), set(), set(), "pat@example.com") == []  # every table
    log = admin.get("/staff/audit").text
    entry = AuditEntry.query.filter_by(action="opened conversation").one()
    assert "pat@example.com" not in log and f"a deleted account · {entry.actor_digest}" in log
    from webapp.audit import email_digest
    assert entry.actor_digest == email_digest("pat@example.com")  # "was it pat?" still answers
