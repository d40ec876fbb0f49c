"""Accounts for tests: make a customer, staff member or admin in a tenant, and sign a client in."""
import re

from flask import g

from webapp.accounts import get_or_create_tenant
from webapp.accounts.passwords import set_password
from webapp.extensions import db
from webapp.models import User

PASSWORD = "correct horse battery"


def make_account(email: str, role: str = "customer", tenant: str = "demo",
                 password: str = PASSWORD) -> User:
    user = User(tenant_id=get_or_create_tenant(tenant).id, email=email, name=email.split("@")[0],
                role=role)
    set_password(user, password)
    db.session.add(user)
    db.session.commit()
    return user


def fresh_request_globals() -> None:
    """Tests keep one app context, so g outlives a request: forget the cached user and token
    that another client's request left there (a real server starts each request afresh)."""
    for name in ("csrf_token", "_login_user"):
        g.pop(name, None)


def csrf_token(client, path: str = "/login") -> str:
    fresh_request_globals()
    page = client.get(path)
    return re.search(r'name="csrf-token" content="([^"]+)"', page.text).group(1)


def sign_in(client, email: str, password: str = PASSWORD, remember: bool = False, **extra):
    """Sign in through /login as a browser does; the client then sends the CSRF token itself."""
    token = csrf_token(client)
    client.environ_base["HTTP_X_CSRFTOKEN"] = token
    form = {"email": email, "password": password, "csrf_token": token, **extra}
    if remember:
        form["remember"] = "1"
    response = client.post("/login", data=form)
    fresh_request_globals()
    if response.status_code == 303:  # signing in starts a new session, with a new token
        client.environ_base["HTTP_X_CSRFTOKEN"] = csrf_token(client, "/account")
        fresh_request_globals()
    return response


def refused(response) -> bool:
    """Refused as the access rules say: a 404, or for a guest's page a trip to sign in and back."""
    location = response.headers.get("Location", "")
    return response.status_code == 404 or (response.status_code == 302
                                           and location.startswith("/login?next=/"))
