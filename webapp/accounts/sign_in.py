"""Who is asking: a signed-in account (Flask-Login), else a guest of the demo shop per browser.

The guest is an ordinary customer row kept in a long remember cookie, so closing the browser keeps
their conversations; `NIMBUS_GUESTS = False` sends everybody who is not signed in to /login.
A new browser reading pages costs nothing: it is a guest not yet stored, named by a token in its
signed session cookie, and becomes a row with its first write (a message, a memory, an import),
so a room of a hundred people behind one address can open the chat at the same minute.
"""
import re
import secrets
from datetime import timedelta

from flask import current_app, g, redirect, request, session, url_for
from flask_login import LoginManager, current_user, login_user
from sqlalchemy import select
from sqlalchemy.orm import joinedload

from .users import create_guest
from ..extensions import db
from ..models import Tenant, User
from ..security import refuse_new_guest, whole_number

login_manager = LoginManager()
login_manager.login_view = "accounts.login"
login_manager.login_message = "Please sign in to continue."
# Reachable without any user, and never worth creating a guest for.
PUBLIC_ENDPOINTS = {"static", "accounts.login", "accounts.logout", "accounts.signup"}
PUBLIC_BLUEPRINTS = {"share", "sign_in_link"}
READS = {"GET", "HEAD", "OPTIONS"}  # a visitor who only reads is not stored yet
GUEST_TOKEN = re.compile(r"[0-9a-f]{12}")


def init_app(app) -> None:
    app.config["PERMANENT_SESSION_LIFETIME"] = timedelta(hours=app.config["NIMBUS_SESSION_HOURS"])
    app.config["REMEMBER_COOKIE_DURATION"] = timedelta(days=app.config["NIMBUS_REMEMBER_DAYS"])
    # The remember cookie carries the sign-in (and a guest) as the session cookie does: same rules.
    app.config.setdefault("REMEMBER_COOKIE_SAMESITE", "Lax")
    app.config.setdefault("REMEMBER_COOKIE_HTTPONLY", True)
    app.config.setdefault("REMEMBER_COOKIE_SECURE", bool(app.config.get("SESSION_COOKIE_SECURE")))
    login_manager.init_app(app)
    app.before_request(load_user)


@login_manager.user_loader
def load_account(user_id: str):
    """The user of a session or remember cookie; a changed session token signs the browser out."""
    number, _, token = str(user_id).partition(":")
    if whole_number(number) is None:
        return None
    user = db.session.get(User, whole_number(number), options=[joinedload(User.tenant)])  # one read
    # An empty token never matches: accounts upgraded from before issue11 once all had "".
    if user is None or not token or not secrets.compare_digest(user.session_token or "", token):
        return None
    return user


@login_manager.unauthorized_handler
def ask_to_sign_in():
    """To /login and back; an htmx request is told to load the page whole, not swap it in."""
    target = url_for(login_manager.login_view, next=request.full_path.rstrip("?"))
    if request.headers.get("HX-Request"):
        return "", 401, {"HX-Redirect": target}
    return redirect(target)


def sign_in(user: User, remember: bool = False, days: float | None = None) -> None:
    """Start a signed-in session: idle for NIMBUS_SESSION_HOURS, or remembered for longer."""
    login_user(user, remember=remember,
               duration=timedelta(days=days) if days is not None else None)
    session.permanent = True


def load_user():
    """Put the request's user in g.user: the account, a (new) guest, or None on public pages."""
    g.user = None
    g.pop("_login_user", None)  # Flask-Login's cache; an app context can outlive one request
    if request.endpoint in (None, "static"):
        return None
    if current_user.is_authenticated:
        g.user = current_user._get_current_object()
        return None
    if request.endpoint in PUBLIC_ENDPOINTS or request.blueprint in PUBLIC_BLUEPRINTS:
        return None
    if not current_app.config["NIMBUS_GUESTS"]:
        return login_manager.unauthorized()
    if request.method in READS:
        g.user = unstored_guest()
        if g.user is not None:
            return None
    refused = refuse_new_guest()  # a script without cookies would make a guest per write
    if refused is not None:
        return refused  # before anything is written: a refused visitor leaves no row
    g.user = create_guest(current_app.config["NIMBUS_DEMO_TENANT"], guest_token())
    sign_in(g.user, remember=True, days=current_app.config["NIMBUS_GUEST_DAYS"])
    return None


def guest_token() -> str:
    """This browser's guest token, kept in its signed session cookie until the guest is stored."""
    token = session.get("guest_token")
    if not isinstance(token, str) or not GUEST_TOKEN.fullmatch(token):
        token = session["guest_token"] = secrets.token_hex(6)
    return token


def unstored_guest() -> User | None:
    """The guest this browser will be, not added to the database: its pages list no conversation,
    memory or order yet. None on a first run, before the demo shop exists."""
    tenant = db.session.scalar(select(Tenant).where(
        Tenant.slug == current_app.config["NIMBUS_DEMO_TENANT"]))
    if tenant is None:
        return None
    token = guest_token()
    return User(tenant=tenant, tenant_id=tenant.id, email=f"guest-{token}@guests.invalid",
                name=f"Guest {token[:4]}", is_guest=True, role="customer")
