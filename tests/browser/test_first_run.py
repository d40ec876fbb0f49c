"""The first run of a demo: `init-db --demo` prints a login for every demo account, and each one
signs in in a browser (1280 and 390 px); the demo viewer's printed address and one-time link open
it for a visitor who is not signed in."""
import re

import pytest
from playwright.sync_api import expect


SIZES = pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["desktop", "phone"])


@pytest.fixture(scope="module")
def printed(live_app):
    return live_app.test_cli_runner().invoke(args=["init-db", "--demo"]).output


@pytest.fixture(scope="module")
def printed_logins(printed):
    return re.findall(r"Demo (\w+) (\S+@\S+), password: (\S+)", printed)


def shows_the_viewer(page, viewer):
    expect(page).to_have_url(re.compile(f"{viewer}$"))
    for fate in ("FULL", "COMPACTED", "SUMMARIZED", "DROPPED"):
        expect(page.locator(f'[data-fate="{fate}"]').first).to_be_attached()
    expect(page.locator(".whoami")).to_contain_text("Alex")


def test_init_db_demo_prints_staff_admin_and_customer_logins(printed_logins):
    assert {role for role, _, _ in printed_logins} == {"staff", "admin", "customer"}
    assert {email for _, email, _ in printed_logins} >= {"alex@example.com", "sam@example.com"}


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["desktop", "phone"])
def test_every_printed_login_signs_in(new_page, printed_logins, size):
    for role, email, password in printed_logins:
        page = new_page(*size)
        page.goto("/login")
        page.get_by_label("Email").fill(email)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Sign in").click()
        expect(page.locator(".whoami-bar").get_by_role("button", name="Sign out")).to_be_visible()
        if role == "customer":
            expect(page.locator(".whoami")).to_contain_text(re.compile(r"Alex|Sam"))


@SIZES
def test_a_signed_out_visitor_of_the_printed_viewer_link_reaches_it_after_signing_in(
        new_page, printed, printed_logins, size):
    viewer = re.search(r"https?://\S+?(/c/[0-9a-f]{32}/viewer) \(sign in as alex@", printed).group(1)
    password = next(p for _, email, p in printed_logins if email == "alex@example.com")
    page = new_page(*size)
    page.goto(viewer)
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.get_by_text("Sign in to open the page you followed")).to_be_visible()
    page.get_by_label("Email").fill("alex@example.com")
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    shows_the_viewer(page, viewer)


@SIZES
def test_the_printed_one_time_link_opens_the_demo_viewer_signed_in(new_page, live_app, size):
    output = live_app.test_cli_runner().invoke(args=["init-db", "--demo"]).output  # a new link
    viewer = re.search(r"(/c/[0-9a-f]{32}/viewer) \(sign in as alex@", output).group(1)
    link = re.search(r"in one click: https?://[^/]+(/signin/\S+)", output).group(1)
    page = new_page(*size)
    page.goto(link)
    page.get_by_role("button", name="Sign in and open the conversation").click()
    shows_the_viewer(page, viewer)
