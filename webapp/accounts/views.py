"""Sign in, sign out and sign up: /login, /logout, /signup. A guest who signs up keeps their chats."""
from flask import (Blueprint, current_app, g, redirect, render_template, request, session,
                   url_for)
from flask_login import logout_user

from .sign_in import sign_in
from ..extensions import db
from ..models import User, new_session_token
from .users import get_or_create_tenant
from .emails import InvalidEmail, find_user, normalize_email, read_as_latin
from .passwords import InvalidPassword, authenticate, set_password
from ..security import safe_next

bp = Blueprint("accounts", __name__)
MAX_EMAIL_CHARS = 320


def landing(user: User) -> str:
    """Staff and admins land on the console; customers on the chat."""
    return url_for("staff.show_console") if user.is_staff else url_for("chat.show_page")


def signed_in_account():
    return g.user if g.user is not None and not g.user.is_guest else None


@bp.route("/login", methods=["GET", "POST"])
def login():
    """Sign in with email and password; repeated failures lock the account, from that address,
    for a while."""
    if request.method == "GET":
        return render_template("accounts/login.html", next=safe_next(request.args.get("next")))
    email = request.form.get("email", "").strip().lower()[:MAX_EMAIL_CHARS]
    user = find_user(email) if email else None
    if user is not None and user.is_guest:
        user = None  # guests have no password: the name is only theirs in one browser
    user, error = authenticate(user, request.form.get("password", "")[:1000], current_app.config,
                               request.remote_addr or "")  # the proxy's client with NIMBUS_PROXY_HOPS
    if error:
        return render_template("accounts/login.html", error=error, email=email,
                               next=safe_next(request.form.get("next"))), 401
    session.clear()  # nothing of the session before signing in carries over
    sign_in(user, remember=request.form.get("remember") == "1")
    return redirect(safe_next(request.form.get("next")) or landing(user), 303)


@bp.post("/logout")
def logout():
    """Sign out of this browser (a guest starts afresh on the next visit); a new session token
    makes every cookie saved before it, here or copied elsewhere, sign nobody in."""
    if g.user is not None:
        g.user.session_token = new_session_token()
        db.session.commit()
    logout_user()
    session.clear()
    return redirect(url_for(".login"), 303)


@bp.route("/signup", methods=["GET", "POST"])
def signup():
    """Create a customer account; a guest's conversations and memories become the account's."""
    if signed_in_account() is not None:
        return redirect(landing(g.user), 303)
    if not current_app.config["NIMBUS_SIGNUP"]:
        return render_template("accounts/signup.html", closed=True), 403
    if request.method == "GET":
        return render_template("accounts/signup.html")
    email = request.form.get("email", "").strip()[:MAX_EMAIL_CHARS + 1]
    name = " ".join(request.form.get("name", "").split())[:200]
    try:
        email = normalize_email(email)  # one spelling: a lookalike finds the account it copies
        error = signup_error(email, name)
    except InvalidEmail as problem:
        error = f"Not signed up: {problem}."
    user = g.user if g.user is not None else User(
        tenant_id=get_or_create_tenant(current_app.config["NIMBUS_DEMO_TENANT"]).id)
    if error is None:
        try:
            set_password(user, request.form.get("password", ""))
        except InvalidPassword as problem:
            error = f"Not signed up: {problem}."
    if error:
        db.session.rollback()
        return render_template("accounts/signup.html", error=error, email=email, name=name), 422
    user.email, user.name, user.is_guest, user.role = email, name, False, "customer"
    db.session.add(user)
    db.session.commit()
    sign_in(user)
    return redirect(url_for("chat.show_page"), 303)


def signup_error(email: str, name: str) -> str | None:
    if "@" not in email or len(email) > MAX_EMAIL_CHARS or " " in email:
        return "Not signed up: give an email address like you@example.com."
    if email.endswith("@guests.invalid"):
        return "Not signed up: that address is reserved for guests."
    if not name:
        return "Not signed up: tell us your name."
    if find_user(email) is not None:
        return "Not signed up: there already is an account with that email. Sign in instead."
    latin = read_as_latin(email)
    if latin != email and find_user(latin) is not None:
        return ("Not signed up: that address looks like an existing account's (its letters read "
                "as Latin ones). Type your address again, or sign in.")
    return None
