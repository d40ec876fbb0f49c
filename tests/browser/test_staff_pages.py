"""Accounts in a real browser: staff reach a customer's viewer (nobody else does), share links
work signed out until revoked or expired, and Delete my data leaves nothing of the customer."""
import re
import secrets
from datetime import timedelta

from playwright.sync_api import expect

from webapp.extensions import db
from webapp.models import ShareLink, User, utcnow

from tests.accounts_support import PASSWORD, make_account
from tests.support import ask
from tests.test_data_rights import give_them_everything, references


def accounts(live_app, *specs):
    """Make (email, role, tenant) accounts with unique emails; return the emails."""
    tag = secrets.token_hex(3)
    emails = []
    with live_app.app_context():
        for name, role, tenant in specs:
            emails.append(f"{name}-{tag}@example.com")
            make_account(emails[-1], role, tenant)
        db.session.remove()
    return emails


def customer_conversation(live_app, email, question="Where is my order #1041?"):
    with live_app.app_context():
        user = db.session.scalar(db.select(User).where(User.email == email))
        _, conversation, _ = ask(user, question)
        conversation_id = conversation.id
        db.session.remove()
    return conversation_id


def sign_in(page, email):
    page.goto("/login")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def test_staff_sign_in_land_on_the_console_and_open_a_customers_viewer(page, live_app, artifacts):
    customer, staff = accounts(live_app, ("kim", "customer", "demo"), ("pat", "staff", "demo"))
    conversation_id = customer_conversation(live_app, customer)
    sign_in(page, staff)
    expect(page).to_have_url(re.compile(r"/staff$"))
    row = page.locator("#conversations tr", has_text=customer)
    expect(row).to_contain_text("Where is my order #1041")
    page.screenshot(path=f"{artifacts}/staff-console.png", full_page=True)
    row.get_by_role("link", name="viewer").click()
    expect(page).to_have_url(re.compile(rf"/c/{conversation_id}/viewer$"))
    expect(page.locator("h1")).to_contain_text("Where is my order #1041")
    expect(page.get_by_role("button", name="Create share link")).to_be_visible()


def test_another_customer_and_another_shops_staff_get_404_and_a_guest_the_sign_in(new_page,
                                                                                   live_app):
    owner, other, stranger = accounts(live_app, ("kim", "customer", "demo"),
                                      ("lee", "customer", "demo"), ("eve", "staff", "shop2"))
    viewer = f"/c/{customer_conversation(live_app, owner)}/viewer"
    owner_page = new_page()
    sign_in(owner_page, owner)
    assert owner_page.goto(viewer).status == 200
    for email in (other, stranger):
        page = new_page()
        sign_in(page, email)
        assert page.goto(viewer).status == 404, email
    guest = new_page()
    guest.goto(viewer)
    expect(guest.get_by_role("heading", name="Sign in")).to_be_visible()
    assert guest.url.endswith(f"/login?next={viewer}")


def test_a_share_link_works_signed_out_until_revoked_or_expired(new_page, live_app, artifacts):
    customer, staff = accounts(live_app, ("kim", "customer", "demo"), ("pat", "staff", "demo"))
    conversation_id = customer_conversation(live_app, customer)
    page = new_page()
    sign_in(page, staff)
    page.goto(f"/c/{conversation_id}/viewer")
    page.get_by_role("button", name="Create share link").click()
    links = page.locator("#share-links tr", has_text="Where is my order #1041")
    url = links.first.get_by_label("Share link").input_value()

    stakeholder = new_page()
    assert stakeholder.goto(url).status == 200
    expect(stakeholder.locator("h1")).to_contain_text("Where is my order #1041")
    expect(stakeholder.locator("main form")).to_have_count(0)
    stakeholder.screenshot(path=f"{artifacts}/share-link-viewer.png", full_page=True)

    links.first.get_by_role("button", name="Revoke").click()
    expect(page.locator("#share-links")).to_contain_text("revoked")
    assert new_page().goto(url).status == 404

    page.goto(f"/c/{conversation_id}/viewer")
    page.get_by_role("button", name="Create share link").click()
    fresh = page.locator("#share-links tr", has_text="active").first.get_by_label("Share link")
    second = fresh.input_value()
    assert new_page().goto(second).status == 200
    with live_app.app_context():
        newest = db.session.scalar(db.select(ShareLink).order_by(ShareLink.id.desc()))
        newest.expires_at = utcnow() - timedelta(seconds=1)
        db.session.commit()
        db.session.remove()
    assert new_page().goto(second).status == 404


def test_delete_my_data_leaves_no_row_of_the_customer(page, live_app):
    customer, other = accounts(live_app, ("dana", "customer", "demo"), ("sam", "customer", "demo"))
    with live_app.app_context():
        user = db.session.scalar(db.select(User).where(User.email == customer))
        conversation = give_them_everything(live_app, user)
        ids = (user.id, {conversation.id}, {t.id for t in conversation.turns})
        from webapp.shop.models import Order
        orders = {o.id for o in Order.query.filter_by(customer_id=user.id)}
        db.session.remove()
    others = customer_conversation(live_app, other, "Where is my order #1042?")
    sign_in(page, customer)
    page.goto("/account")
    page.get_by_label("Type DELETE to confirm").fill("DELETE")
    page.get_by_role("button", name="Delete my data").click()
    expect(page.get_by_role("status").filter(has_text="Deleted")).to_contain_text(
        "Deleted 1 conversation with")
    with live_app.app_context():
        assert references(*ids, orders, customer) == []
        assert db.session.get(User, ids[0]) is None
        from webapp.models import Conversation
        assert db.session.get(Conversation, others) is not None
        db.session.remove()


def test_staff_pages_and_a_share_link_do_not_scroll_sideways_on_a_phone(new_page, live_app,
                                                                        artifacts):
    customer, staff = accounts(live_app, ("kim", "customer", "demo"), ("pat", "admin", "demo"))
    conversation_id = customer_conversation(live_app, customer)
    page = new_page(360, 740)
    sign_in(page, staff)
    page.goto(f"/c/{conversation_id}/viewer")
    page.get_by_role("button", name="Create share link").click()
    url = page.locator("#share-links tr", has_text="active").first.get_by_label(
        "Share link").input_value()
    for path in ["/staff", "/staff/audit", "/staff/settings", f"/staff/c/{conversation_id}",
                 f"/c/{conversation_id}/viewer", "/", "/memories", "/account", url]:
        assert page.goto(path).status == 200, path
        width = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
        assert width[0] <= width[1], (path, width)
        if path == "/staff":
            page.screenshot(path=f"{artifacts}/staff-console-phone.png")
