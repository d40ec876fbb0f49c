"""The first run of a demo: `init-db --demo` prints a login for every demo account, and each one
signs in in a browser (1280 and 390 px)."""
import re

import pytest
from playwright.sync_api import expect


@pytest.fixture(scope="module")
def printed_logins(live_app):
    output = live_app.test_cli_runner().invoke(args=["init-db", "--demo"]).output
    return re.findall(r"Demo (\w+) (\S+@\S+), password: (\S+)", output)


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
