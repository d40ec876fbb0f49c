"""IDOR: every route of the app, walked as each role of two tenants, answers as the policy says.

Tenant demo has the owner (a customer), another customer, a guest, staff and an admin; tenant
shop2 has its own customer, staff and admin. Refusals must be 404 (an id says nothing), and nothing is a 500;
a guest asking for a page is sent to sign in with `next=` back instead (for any id alike).
"""
import shutil

import pytest
from flask import g

from webapp.extensions import db
from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.rows import remember
from webapp.models import Import, ShareLink, utcnow

from .accounts_support import make_account, sign_in
from .support import ask, make_app, wait_for_replies

ACTORS = ("owner", "customer", "guest", "staff", "admin", "customer_b", "staff_b", "admin_b")
EVERYONE = set(ACTORS)
TENANT_STAFF = {"staff", "admin"}
ANY_STAFF = {"staff", "admin", "staff_b", "admin_b"}
# Who may reach each route with the demo tenant's ids in it; everybody else must get 404.
MATRIX = {
    "chat.show_conversation": {"owner"}, "chat.send_message": {"owner"},
    "chat.stream_reply": {"owner"}, "chat.stop_reply": {"owner"},
    "chat.rename_conversation": {"owner"}, "chat.mark_conversation_deleted": {"owner"},
    "chat.show_turns": {"owner"}, "chat.edit_title": {"owner"}, "chat.show_item": {"owner"},
    "chat.restore_conversation": {"owner"}, "chat.mark_turn": {"owner", "admin"},
    "chat.pin_conversation": {"owner"}, "chat.archive_conversation": {"owner"},
    "chat.share_conversation": {"owner"}, "chat.revoke_share": {"owner"},
    "chat.give_feedback": {"owner"}, "staff.show_feedback": ANY_STAFF,
    "chat.show_summary": {"owner"} | TENANT_STAFF, "chat.edit_summary": {"owner", "admin"},
    "chat.summarize_up_to": {"owner", "admin"},
    # A turn's versions (regenerate, edit, switch): only its owner makes or chooses them.
    "chat.regenerate_answer": {"owner"}, "chat.edit_question": {"owner"},
    "chat.switch_version": {"owner"},
    "chat.show_memories_used": {"owner"} | TENANT_STAFF,
    "viewer.show": {"owner"} | TENANT_STAFF, "viewer.show_json": {"owner"} | TENANT_STAFF,
    "viewer.apply_settings": {"owner", "admin"},
    "viewer.show_sent": {"owner"} | TENANT_STAFF, "viewer.show_sent_json": {"owner"} | TENANT_STAFF,
    "viewer.find": {"owner"} | TENANT_STAFF, "viewer.compare": {"owner"} | TENANT_STAFF,
    "viewer.compare_branches": {"owner"} | TENANT_STAFF,
    "viewer.download": {"owner"} | TENANT_STAFF, "transfer.export": {"owner"} | TENANT_STAFF,
    "memories.edit_memory": {"owner"}, "memories.delete_memory_view": {"owner"},
    "memories.decide_branch_memory": {"owner"},  # keep or drop one learned on a branch left
    "staff.show_console": ANY_STAFF, "staff.show_conversation": TENANT_STAFF,
    "staff.show_audit": {"admin", "admin_b"}, "memory_report.show_report": ANY_STAFF, "shares.create": TENANT_STAFF,
    "shares.revoke": TENANT_STAFF,
    "settings.show_settings": {"admin", "admin_b"}, "settings.save": {"admin", "admin_b"},
    "settings.add_shared_memory": {"admin", "admin_b"},
    "settings.edit_shared_memory": {"admin"}, "settings.delete_shared_memory": {"admin"},
    # Each person's own things, no id: everybody reaches their own.
    "chat.show_page": EVERYONE, "chat.start_conversation": EVERYONE,
    "chat.show_more_conversations": EVERYONE,  # the next page of one's own sidebar
    "memories.show_panel": EVERYONE, "memories.add_memory": EVERYONE,
    "memories.set_sharing": EVERYONE, "memories.search_history": EVERYONE,
    "memories.export_memories_view": EVERYONE,
    "personal_data.show_account": EVERYONE, "personal_data.download_data": EVERYONE,
    "personal_data.delete_data": EVERYONE, "chat.set_trim_notes": EVERYONE,
    "transfer.show_import": EVERYONE, "transfer.upload": EVERYONE,  # into their own account
    "transfer.show_progress": {"owner"}, "transfer.progress": {"owner"},  # an upload: its uploader's
    # Public: signing in, and a share link (the token is the permission).
    "accounts.login": EVERYONE, "accounts.logout": EVERYONE, "accounts.signup": EVERYONE,
    "share.show_shared": EVERYONE, "static": EVERYONE,
    # A one-time sign-in link: the token is the permission (a made-up one is 410, not 404).
    "sign_in_link.confirm": EVERYONE, "sign_in_link.redeem": EVERYONE,
}
# Run last, in this order, each on its own resource: they destroy what they reach.
DESTRUCTIVE = ["accounts.logout", "chat.revoke_share", "shares.revoke", "settings.delete_shared_memory",
               "memories.delete_memory_view", "chat.mark_conversation_deleted"]


@pytest.fixture
def world(tmp_path, migrated_database):
    shutil.copy(migrated_database, tmp_path / "nimbus.db")
    app = make_app(tmp_path / "nimbus.db")
    app.config["WTF_CSRF_ENABLED"] = False  # this test is about access, CSRF has its own
    with app.app_context():
        owner = make_account("owner@example.com")
        make_account("other@example.com")
        make_account("staff-a@example.com", "staff")
        make_account("admin-a@example.com", "admin")
        make_account("customer-b@example.com", tenant="shop2")
        make_account("staff-b@example.com", "staff", tenant="shop2")
        make_account("admin-b@example.com", "admin", tenant="shop2")
        _, conversation, _ = ask(owner, "Where is my order #1041?")
        memory, _ = remember(SessionScope.for_user(owner), "Prefers email", app.config, source="hand")
        shared, _ = remember(SessionScope(owner.tenant_id, None), "Ships from Lisbon", app.config,
                             source="hand", personal=False)
        link = ShareLink(conversation_id=conversation.id, expires_at=utcnow().replace(year=2100))
        upload = Import(user_id=owner.id, owner_id=owner.id, tenant_id=owner.tenant_id,
                        options={"format": "auto", "files": []})
        db.session.add_all([link, upload])
        db.session.commit()
        clients = {}
        for actor, email in (("owner", "owner@example.com"), ("customer", "other@example.com"),
                             ("staff", "staff-a@example.com"), ("admin", "admin-a@example.com"),
                             ("customer_b", "customer-b@example.com"),
                             ("staff_b", "staff-b@example.com"), ("admin_b", "admin-b@example.com")):
            clients[actor] = app.test_client()
            assert sign_in(clients[actor], email).status_code == 303
        clients["guest"] = app.test_client()
        clients["guest"].get("/")
        from webapp.staff.shares import serializer
        values = {"conversation_id": conversation.id, "seq": 0, "number": 1, "link_id": link.id,
                  "token": serializer().dumps([link.id, link.key]), "filename": "css/base.css",
                  "import_id": upload.id, "position": 1}
        yield app, clients, values, {"memories": memory.id, "settings": shared.id}
        wait_for_replies(app)
        db.session.remove()
        db.engine.dispose()


def routes(app):
    """(endpoint, rule, method) for every route, destructive ones last."""
    found = [(rule.endpoint, rule, method) for rule in app.url_map.iter_rules()
             for method in sorted(rule.methods - {"HEAD", "OPTIONS"})]
    return sorted(found, key=lambda r: (DESTRUCTIVE.index(r[0]) if r[0] in DESTRUCTIVE else -1,
                                        r[0], r[2]))


def test_every_route_answers_each_role_as_the_policy_says(world):
    app, clients, values, memory_ids = world
    checked = 0
    for endpoint, rule, method in routes(app):
        allowed = MATRIX.get(endpoint)
        assert allowed is not None, f"{endpoint} ({rule}) is missing from the access matrix"
        params = {**values, "memory_id": memory_ids.get(endpoint.split(".")[0], 0),
                  "fmt": "markdown"}
        url = rule.build({k: params[k] for k in rule.arguments}, append_unknown=False)[1]
        # Refused actors first: the allowed ones may change what the others would see.
        for actor in sorted(ACTORS, key=lambda a: a in allowed):
            if endpoint == "personal_data.delete_data" or (endpoint == "accounts.logout" and actor != "guest"):
                continue  # own-account routes: covered in test_data_rights / test_accounts
            for name in ("csrf_token", "_login_user"):
                g.pop(name, None)
            response = clients[actor].open(url, method=method, data={})
            response.close()
            assert response.status_code < 500, (endpoint, actor, response.status_code)
            if actor in allowed:
                assert response.status_code != 404, (endpoint, method, actor)
            elif actor == "guest" and response.status_code == 302:
                assert method == "GET" and response.headers["Location"].startswith(
                    "/login?next="), (endpoint, actor, response.headers["Location"])
            else:
                assert response.status_code == 404, (endpoint, method, actor, response.status_code)
            checked += 1
    assert checked > 200
