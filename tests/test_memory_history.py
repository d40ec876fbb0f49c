"""Memory history: edits, supersessions and merges keep the old text; deleting takes it away."""
from datetime import timedelta

from sqlalchemy import select

from webapp.accounts import get_or_create_tenant, get_or_create_user
from webapp.accounts.personal_data import delete_user_data, export_user_data
from webapp.extensions import db
from webapp.memories.distiller.distil import distil_conversation
from webapp.memories.models import MemoryRevision
from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.revisions import history_of
from webapp.memories.store.rows import (delete_memory, newest, remember, remember_for_everyone,
                                   update_content)

from .accounts_support import fresh_request_globals, make_account, sign_in
from .support import ask, guest_user, run

HTMX = {"HX-Request": "true"}


def contents(user):
    return [m.content for m in newest(SessionScope.for_user(user), 50)]


def revisions():
    db.session.expire_all()
    return list(db.session.scalars(select(MemoryRevision).order_by(MemoryRevision.id)))


def note(user, text, config, **placement):
    return remember(SessionScope.for_user(user), text, config, source="hand", **placement)[0]


def test_an_edit_in_the_panel_keeps_the_old_text_in_its_history(app, guest):
    memory = note(guest_user(guest), "Leave parcels at the back door.", app.config)
    page = guest.post(f"/memories/{memory.id}", data={"content": "Leave parcels with Ana."},
                      headers=HTMX).text
    assert "History (1 earlier version)" in page and "Edited by you" in page
    assert page.index("Leave parcels with Ana.") < page.index("Leave parcels at the back door.")
    assert [(r.action, r.content, r.changed_by) for r in revisions()] == [
        ("edited", "Leave parcels at the back door.", "person")]


def test_saving_the_same_text_adds_no_history(app, guest):
    memory = note(guest_user(guest), "Leave parcels at the back door.", app.config)
    guest.post(f"/memories/{memory.id}", data={"content": "Leave parcels at the back door."})
    assert revisions() == []


def test_the_distiller_supersedes_a_contradicted_preference(app, alex):
    _, first, _ = ask(alex, "I prefer email over phone.")
    distil_conversation(first.id)
    _, second, _ = ask(alex, "Actually, please call me instead.")
    assert distil_conversation(second.id) == "superseded 1"
    assert contents(alex) == ["Prefers phone calls."]  # one memory, not both
    [row] = revisions()
    assert (row.action, row.content, row.changed_by) == ("superseded", "Prefers email over phone.",
                                                         "distiller")
    assert (row.conversation_id, row.turn_seq) == (second.id, 0)


def test_a_supersession_shows_in_the_panel_with_its_source_message(app, guest):
    visitor = guest_user(guest)
    _, first, _ = ask(visitor, "I prefer email over phone.")
    distil_conversation(first.id)
    _, second, _ = ask(visitor, "Please call me instead.")
    distil_conversation(second.id)
    page = guest.get("/memories").text
    assert "Prefers phone calls." in page and "Prefers email over phone." in page
    assert "Replaced after a conversation" in page
    assert f'href="/c/{second.id}#turn-1-question">message 1</a>' in page


def test_the_tool_copy_the_distiller_merges_is_kept_as_history(app, alex):
    _, conversation, _ = ask(alex, "Remember that we always pay by invoice.")
    assert distil_conversation(conversation.id) == "wrote 1 memory, merged 1"
    assert contents(alex) == ["We always pay by invoice."]
    assert [(r.action, r.changed_by) for r in revisions()] == [("merged", "distiller")]


def test_deleting_a_memory_takes_its_history_and_leaves_a_textless_record(app, guest):
    memory = note(guest_user(guest), "Leave parcels at the back door.", app.config)
    guest.post(f"/memories/{memory.id}", data={"content": "Leave parcels with Ana."})
    guest.post(f"/memories/{memory.id}/delete")
    assert [(r.action, r.memory_id, r.content) for r in revisions()] == [("deleted", None, None)]
    assert "back door" not in guest.get("/memories").text


def test_nobody_else_sees_a_memorys_history(app, guest, alex):
    memory = note(alex, "Prefers carrier pigeons.", app.config, word="account", personal=False)
    update_content(memory, "Prefers smoke signals.", app.config)
    assert "carrier pigeons" not in guest.get("/memories").text  # another customer
    shared = remember_for_everyone(alex.tenant_id, "Closes at noon.", app.config)[0]
    update_content(shared, "Closes at five.", app.config)
    assert "Closes at noon." in guest.get("/memories").text  # the shop's own: everyone's
    kim = get_or_create_user(get_or_create_tenant("acme"), "kim@acme.test", "Kim")
    db.session.commit()
    assert history_of([memory.id, shared.id]) and not [
        m for m in newest(SessionScope.for_user(kim), 50)]  # another tenant: none of it applies


def test_the_report_lists_per_scope_what_changed_over_the_period(app, runner, alex):
    _, first, _ = ask(alex, "I prefer email over phone.")
    distil_conversation(first.id)
    _, second, _ = ask(alex, "Please call me instead.")
    distil_conversation(second.id)
    gone = remember_for_everyone(alex.tenant_id, "The shop closes on Sundays.", app.config)[0]
    delete_memory(gone)
    printed = run(runner, "memories", "report", "--days", "7")
    assert "workspace · personal to Alex Rivera: 1 added, 0 edited, 1 superseded" in printed
    assert "was 'Prefers email over phone.'" in printed
    assert "workspace · shared: 0 added, 0 edited, 0 superseded, 0 merged, 1 deleted" in printed
    old = revisions()[0]
    old.created_at -= timedelta(days=30)
    db.session.commit()
    assert "was 'Prefers email over phone.'" not in run(runner, "memories", "report", "--days", "7")


def test_the_report_is_a_staff_page_and_nobody_elses(app, client, alex):
    _, first, _ = ask(alex, "I prefer email over phone.")
    distil_conversation(first.id)
    _, second, _ = ask(alex, "Please call me instead.")
    distil_conversation(second.id)
    make_account("pat@example.com", "staff")
    make_account("cleo@example.com")
    make_account("olga@acme.test", "staff", tenant="acme")
    for email, status in (("cleo@example.com", 404), ("olga@acme.test", 200),
                          ("pat@example.com", 200)):
        sign_in(client, email)
        response = client.get("/staff/memory-report")
        assert response.status_code == status
        assert ("Prefers email over phone." in response.text) == (email == "pat@example.com")
        client.post("/logout")


def test_download_my_data_carries_each_memorys_history(app, alex):
    memory = note(alex, "Prefers email over phone.", app.config)
    update_content(memory, "Prefers phone calls.", app.config)
    [exported] = export_user_data(alex)["memories"]
    assert exported["content"] == "Prefers phone calls."
    assert [(h["action"], h["content"]) for h in exported["history"]] == [
        ("edited", "Prefers email over phone.")]


def test_delete_my_data_removes_the_history_of_their_memories(app, alex, sam):
    mine = note(alex, "Prefers email over phone.", app.config)
    account = note(alex, "We bill fortnightly.", app.config, word="account", personal=False)
    theirs = note(sam, "Prefers letters.", app.config)
    for memory in (mine, account, theirs):
        update_content(memory, memory.content + " Really.", app.config)
    delete_memory(account)
    delete_user_data(alex, "test")
    assert [(r.memory_id, r.content) for r in revisions()] == [(theirs.id, "Prefers letters.")]


def test_the_memory_export_carries_the_history_and_only_the_visitors(app, guest, alex):
    memory = note(guest_user(guest), "Leave parcels at the back door.", app.config)
    guest.post(f"/memories/{memory.id}", data={"content": "Leave parcels with Ana."})
    note(alex, "Prefers carrier pigeons.", app.config)
    response = guest.get("/memories/export.json")
    assert response.headers["Content-Disposition"].startswith("attachment")
    [exported] = response.get_json()["memories"]
    assert exported["content"] == "Leave parcels with Ana."
    assert [(h["action"], h["content"], h["changed_by"]) for h in exported["history"]] == [
        ("edited", "Leave parcels at the back door.", "person")]


def test_flask_memories_export_prints_the_same(app, runner, alex):
    memory = note(alex, "Prefers email over phone.", app.config)
    update_content(memory, "Prefers phone calls.", app.config)
    printed = run(runner, "memories", "export", "--user", "alex@example.com")
    assert '"content": "Prefers email over phone."' in printed and '"action": "edited"' in printed


def test_an_admins_edit_of_a_shared_memory_is_the_shops_in_the_panel(app, guest):
    shared = remember_for_everyone(guest_user(guest).tenant_id, "Closes at noon.", app.config)[0]
    make_account("ada@example.com", "admin")
    admin = app.test_client()
    sign_in(admin, "ada@example.com")
    admin.post(f"/staff/memories/{shared.id}", data={"content": "Closes at five."})
    fresh_request_globals()
    page = guest.get("/memories").text
    assert "Closes at five." in page and "Closes at noon." in page and "Edited by the shop" in page


def test_the_distiller_is_offered_what_it_may_supersede_and_nothing_of_the_shops(app, alex):
    from webapp.memories.distiller.distil import known_memories, output_schema, system_prompt
    mine = note(alex, "Prefers email over phone.", app.config)
    remember_for_everyone(alex.tenant_id, "The shop closes on Sundays.", app.config)
    _, conversation, _ = ask(alex, "Hi")
    scope = SessionScope.for_user(alex)
    known = known_memories(scope)
    prompt = system_prompt(conversation, scope, app.config, known)
    assert f"[memory {mine.id}] Prefers email over phone." in prompt and "Sundays" not in prompt
    item = output_schema(scope, known)["properties"]["memories"]["items"]["properties"]
    assert item["supersedes"]["enum"] == [mine.id]
