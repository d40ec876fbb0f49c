"""The staff console: the tenant's conversations, filters, search, pages, read-only views, audit."""
import re
from datetime import timedelta

import pytest

from webapp.extensions import db
from webapp.models import AuditEntry, User, utcnow

from .accounts_support import make_account, sign_in
from .support import ask


@pytest.fixture
def staff(app, client):
    make_account("pat@example.com", "staff")
    sign_in(client, "pat@example.com")
    return client


def titles(page) -> list[str]:
    return re.findall(r'/staff/c/[0-9a-f]{32}">([^<]+)</a>', page.text)


def test_the_console_lists_the_tenants_conversations_newest_first(staff, alex, sam):
    ask(alex, "Where is my order #1041?")
    ask(sam, "How long does shipping take?")
    stranger = make_account("eve@shop2.example", tenant="shop2")
    ask(stranger, "What is your refund policy?")
    page = staff.get("/staff")
    assert titles(page) == ["How long does shipping take", "Where is my order #1041"]
    assert "sam@example.com" in page.text and "eve@shop2.example" not in page.text
    assert "compact" in page.text and "answered" in page.text


def test_filters_by_customer_outcome_length_and_date(staff, alex, sam):
    _, failed, _ = ask(alex, "Where is my order #1041?")
    failed.turns[0].outcome = "api_error"
    ask(sam, "How long does shipping take?")
    _, long_one, _ = ask(sam, "Where is my order #1042?")
    ask(sam, "And my order #1043?", conversation=long_one)
    db.session.commit()
    assert titles(staff.get("/staff?outcome=errors")) == ["Where is my order #1041"]
    assert titles(staff.get("/staff?customer=SAM")) == ["Where is my order #1042",
                                                        "How long does shipping take"]
    assert titles(staff.get("/staff?min_turns=2")) == ["Where is my order #1042"]
    tomorrow = (utcnow() + timedelta(days=1)).date().isoformat()
    assert titles(staff.get(f"/staff?since={tomorrow}")) == []
    assert len(titles(staff.get(f"/staff?until={tomorrow}"))) == 3


def test_full_text_search_finds_conversations_by_what_was_said(staff, alex, sam):
    ask(alex, "Where is my order #1041?")
    ask(sam, "Do you sell umbrellas?")
    assert titles(staff.get("/staff?q=umbrella")) == ["Do you sell umbrellas"]
    assert titles(staff.get("/staff?q=zebra")) == []


@pytest.mark.parametrize("query", ["outcome=maybe", "min_turns=-1", "min_turns=99999999999999999999",
                                   "since=yesterday", "page=0"])
def test_a_bad_filter_says_what_to_fix(staff, query):
    response = staff.get(f"/staff?{query}")
    assert response.status_code == 400 and "filter like that" in response.text


def test_the_console_pages_through_big_tenants(staff, app, alex):
    app.config["NIMBUS_CONSOLE_PAGE_SIZE"] = 2
    for number in (1041, 1042, 1043):
        ask(alex, f"Where is my order #{number}?")
    first, second = staff.get("/staff"), staff.get("/staff?page=2")
    assert len(titles(first)) == 2 and "older →" in first.text
    assert titles(second) == ["Where is my order #1041"] and "older →" not in second.text


def test_staff_open_a_conversation_read_only_and_every_opening_is_audited(staff, alex):
    _, conversation, _ = ask(alex, "Where is my order #1041?")
    page = staff.get(f"/staff/c/{conversation.id}")
    assert page.status_code == 200 and "Where is my order #1041?" in page.text
    assert 'method="post"' not in page.text.replace(
        'action="/logout"', "").split("<main")[1].split("</main>")[0]
    assert staff.get(f"/c/{conversation.id}/viewer").status_code == 200
    entries = AuditEntry.query.filter_by(action="opened conversation").all()
    assert len(entries) == 2 and {db.session.get(User, e.actor_id).email for e in entries} == {"pat@example.com"}
    assert all(e.customer_id == alex.id and e.conversation_id == conversation.id for e in entries)


def test_a_customer_opening_their_own_conversation_is_not_audited(guest):
    from .support import guest_user
    _, conversation, _ = ask(guest_user(guest), "Hello")
    assert guest.get(f"/c/{conversation.id}/viewer").status_code == 200
    assert AuditEntry.query.count() == 0


def test_staff_preview_what_if_but_only_admins_apply(staff, app, alex):
    _, conversation, _ = ask(alex, "Where is my order #1041?")
    preview = staff.get(f"/c/{conversation.id}/viewer?budget=300")
    assert preview.status_code == 200 and "What-if preview" in preview.text
    assert "Apply to this conversation" not in preview.text
    assert staff.post(f"/c/{conversation.id}/viewer/settings", data={"budget": "300"}).status_code == 404
    admin = app.test_client()
    make_account("ada@example.com", "admin")
    sign_in(admin, "ada@example.com")
    assert "Apply to this conversation" in admin.get(f"/c/{conversation.id}/viewer?budget=300").text
    assert admin.post(f"/c/{conversation.id}/viewer/settings", data={"budget": "300"}).status_code == 303


def test_admins_read_the_audit_log(app, alex):
    from .support import ask as run_turn
    _, conversation, _ = run_turn(alex, "Hello")
    make_account("ada@example.com", "admin")
    admin = app.test_client()
    sign_in(admin, "ada@example.com")
    admin.get(f"/staff/c/{conversation.id}")
    log = admin.get("/staff/audit")
    assert log.status_code == 200 and "opened conversation" in log.text
    assert "ada@example.com" in log.text and "alex@example.com" in log.text
