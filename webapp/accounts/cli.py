"""`flask --app webapp users …`: add, list, change and delete accounts from the terminal."""
import sys

import click
from flask import current_app
from sqlalchemy import select

from ..plurals import plural
from ..cli_helpers import add_command
from ..extensions import db
from ..models import ROLES, Tenant, User
from .users import get_or_create_tenant
from .emails import InvalidEmail, find_user, normalize_email
from .passwords import InvalidPassword, generate_password, set_password


def init_app(app) -> None:
    add_command(app, users)


@click.group()
def users():
    """Manage accounts: customers, staff and admins of a tenant."""


def read_password(from_stdin: bool) -> tuple[str, bool]:
    """(password, generated?): one line from stdin, or a new random one."""
    if not from_stdin:
        return generate_password(), True
    return sys.stdin.readline().rstrip("\r\n"), False


def existing(email: str) -> User:
    user = find_user(email)
    if user is None or user.is_guest:
        raise click.ClickException(f"no account {email}")
    return user


@users.command("add")
@click.argument("email")
@click.option("--role", type=click.Choice(ROLES), default="customer", show_default=True)
@click.option("--tenant", "tenant_slug", default=None, metavar="NAME",
              help="The tenant (shop) it belongs to; created if new (default: the demo shop).")
@click.option("--name", default=None, help="Display name (default: the part before the @).")
@click.option("--password-stdin", is_flag=True, help="Read the password from stdin instead.")
def add_user(email, role, tenant_slug, name, password_stdin):
    """Create an account and print its generated password (or read one with --password-stdin)."""
    try:
        email = normalize_email(email)
    except InvalidEmail as problem:
        raise click.ClickException(f"{email!r} is not an email address: {problem}") from None
    if find_user(email) is not None:
        raise click.ClickException(f"{email} already has an account")
    tenant = get_or_create_tenant((tenant_slug or current_app.config["NIMBUS_DEMO_TENANT"]).strip())
    user = User(tenant_id=tenant.id, email=email, name=name or email.split("@")[0], role=role)
    password, generated = read_password(password_stdin)
    try:
        set_password(user, password)
    except InvalidPassword as error:
        db.session.rollback()
        raise click.ClickException(f"not added: {error}") from None
    db.session.add(user)
    db.session.commit()
    click.echo(f"Added {role} {email} in tenant {tenant.slug}.")
    if generated:
        click.echo(f"Password: {password}")


@users.command("list")
@click.option("--tenant", "tenant_slug", default=None, metavar="NAME", help="Only this tenant.")
@click.option("--guests", is_flag=True, help="Include guests (one per browser).")
def list_users(tenant_slug, guests):
    """List accounts: email, role, tenant, and whether it is locked."""
    query = select(User, Tenant).join(Tenant, Tenant.id == User.tenant_id).order_by(Tenant.slug, User.email)
    if tenant_slug:
        query = query.where(Tenant.slug == tenant_slug)
    if not guests:
        query = query.where(User.is_guest.is_(False))
    from ..models import utcnow
    for user, tenant in db.session.execute(query):
        locked = " (locked)" if user.locked_until and user.locked_until > utcnow() else ""
        kind = "guest" if user.is_guest else user.role
        click.echo(f"{user.email:<40} {kind:<9} {tenant.slug}{locked}")


@users.command("set-role")
@click.argument("email")
@click.argument("role", type=click.Choice(ROLES))
def set_role(email, role):
    """Give an account another role in its tenant."""
    from ..audit import record
    user = existing(email)
    before, user.role = user.role, role
    record(None, "changed role", customer=user, tenant_id=user.tenant_id, commit=False,
           detail=f"{before} → {role}, from the command line")  # who: the customer column
    db.session.commit()
    click.echo(f"{user.email} is now {role} in tenant {user.tenant.slug}.")


@users.command("reset-password")
@click.argument("email")
@click.option("--password-stdin", is_flag=True, help="Read the password from stdin instead.")
def reset_password(email, password_stdin):
    """Set a new password (printed when generated); signs the account out everywhere."""
    user = existing(email)
    password, generated = read_password(password_stdin)
    try:
        set_password(user, password)
    except InvalidPassword as error:
        raise click.ClickException(f"not changed: {error}") from None
    db.session.commit()
    click.echo(f"New password set for {user.email}." + (f"\nPassword: {password}" if generated else ""))


@users.command("delete")
@click.argument("email")
def delete_user(email):
    """Delete an account and all its data (as "Delete my data" does), leaving an audit entry."""
    from .personal_data import delete_user_data
    user = find_user(email)
    if user is None:
        raise click.ClickException(f"no account {email}")
    counts = delete_user_data(user, "an operator, from the command line")
    click.echo(f"Deleted {email}: {plural(counts['conversations'], 'conversation')}, "
               f"{plural(counts['turns'], 'turn')}, {plural(counts['memories'], 'memory')}.")


def ensure_demo_team(config) -> list[str]:
    """The demo's staff, admin and customer logins; lines to print (a password only when it is new)."""
    tenant = get_or_create_tenant(config["NIMBUS_DEMO_TENANT"])
    lines = []
    for email, role in ((config["NIMBUS_DEMO_STAFF"], "staff"), ("admin@example.com", "admin")):
        if find_user(email) is not None:
            lines.append(f"Demo {role} {email} exists (reset its password with "
                         f"`flask --app webapp users reset-password {email}`).")
            continue
        password = generate_password()
        user = User(tenant_id=tenant.id, email=email, name=f"Demo {role}", role=role)
        set_password(user, password)
        db.session.add(user)
        lines.append(f"Demo {role} {email}, password: {password}")
    from ..shop import DEMO_CUSTOMERS
    for email, _ in DEMO_CUSTOMERS:  # seed_demo made them; a password lets them sign in
        customer = find_user(email)
        if customer is None:
            continue
        if customer.password_hash:
            lines.append(f"Demo customer {email} exists (reset its password with "
                         f"`flask --app webapp users reset-password {email}`).")
            continue
        password = generate_password()
        set_password(customer, password)
        lines.append(f"Demo customer {email}, password: {password}")
    db.session.commit()
    return lines
