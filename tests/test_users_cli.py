"""`flask users …` and init-db --demo's team: add, list, set-role, reset-password, delete."""
import re

from webapp.accounts import find_user
from webapp.accounts.passwords import check_password
from webapp.models import AuditEntry

from .support import run


def printed_password(output: str) -> str:
    return re.search(r"[Pp]assword: (\S+)", output).group(1)


def test_add_prints_a_generated_password_that_signs_in(runner):
    output = run(runner, "users", "add", "Pat@Example.com", "--role", "staff")
    user = find_user("pat@example.com")
    assert user.role == "staff" and user.tenant.slug == "demo"
    assert check_password(user, printed_password(output))


def test_add_reads_the_password_from_stdin_and_makes_the_tenant(runner):
    result = runner.invoke(args=["users", "add", "ana@shop2.example", "--role", "admin",
                                 "--tenant", "shop2", "--password-stdin"],
                           input="a long enough secret\n")
    assert result.exit_code == 0, result.output
    assert "Password:" not in result.output
    user = find_user("ana@shop2.example")
    assert user.tenant.slug == "shop2" and check_password(user, "a long enough secret")


def test_add_refuses_a_duplicate_a_bad_role_and_a_short_password(runner):
    assert runner.invoke(args=["users", "add", "alex@example.com"]).exit_code != 0
    assert runner.invoke(args=["users", "add", "x@example.com", "--role", "owner"]).exit_code != 0
    short = runner.invoke(args=["users", "add", "x@example.com", "--password-stdin"], input="short\n")
    assert short.exit_code != 0 and "10 to 200" in short.output and find_user("x@example.com") is None


def test_list_shows_roles_and_set_role_changes_one_with_an_audit_entry(runner, app):
    run(runner, "users", "add", "pat@example.com", "--role", "staff")
    run(runner, "users", "set-role", "pat@example.com", "admin")
    listing = run(runner, "users", "list")
    assert re.search(r"pat@example.com\s+admin\s+demo", listing)
    assert re.search(r"alex@example.com\s+customer\s+demo", listing)
    assert AuditEntry.query.filter_by(action="changed role").count() == 1


def test_reset_password_prints_a_new_one(runner):
    first = printed_password(run(runner, "users", "add", "pat@example.com"))
    second = printed_password(run(runner, "users", "reset-password", "pat@example.com"))
    user = find_user("pat@example.com")
    assert first != second and check_password(user, second) and not check_password(user, first)


def test_delete_removes_the_account(runner):
    output = run(runner, "users", "delete", "sam@example.com")
    assert "Deleted sam@example.com" in output and find_user("sam@example.com") is None
    assert runner.invoke(args=["users", "delete", "sam@example.com"]).exit_code != 0


def test_init_db_demo_creates_the_staff_account_and_prints_its_password(runner):
    output = run(runner, "init-db", "--demo")
    staff = find_user("staff@example.com")
    password = re.search(r"staff@example.com, password: (\S+)", output).group(1)
    assert staff.role == "staff" and check_password(staff, password)
    again = run(runner, "init-db", "--demo")
    assert "staff@example.com exists" in again and check_password(find_user("staff@example.com"), password)
