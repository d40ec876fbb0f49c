"""Who is asking: a signed-in account (Flask-Login), else a guest of the demo shop per browser.

The guest is an ordinary customer row kept in a long remember cookie, so closing the browser keeps
their conversations; `NIMBUS_GUESTS = False` sends everybody who is not signed in to /login.
"""
import secrets
from datetime import timedelta

from flask import current_app, g, redirect, request, session, url_for
from flask_login import LoginManager, current_user, login_user

from .users import create_guest
from ..extensions import db
from ..models import User
from ..security.limits import refuse_new_guest
from ..security.validation import whole_number

login_manager = LoginManager()
login_manager.login_view = "accounts.login"
login_manager.login_message = "Please sign in to continue."
# Reachable without any user, and never worth creating a guest for.
PUBLIC_ENDPOINTS = {"static", "accounts.login", "accounts.logout", "accounts.signup"}
PUBLIC_BLUEPRINTS = {"share", "sign_in_link"}


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
    user = db.session.get(User, whole_number(number))
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
    refused = refuse_new_guest()  # a script without cookies would make a guest per request
    if refused is not None:
        return refused  # before anything is written: a refused visitor leaves no row
    g.user = create_guest(current_app.config["NIMBUS_DEMO_TENANT"])
    sign_in(g.user, remember=True, days=current_app.config["NIMBUS_GUEST_DAYS"])
    return None
