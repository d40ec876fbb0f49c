"""One-time sign-in links: `flask ask` and `chat` print one, so the terminal's conversation opens
in the browser signed in as its owner. A link is single use, minutes long, stored only as a hash,
for customers only, and signs in on a POST from its confirmation page (never on the GET a link
preview or an attacker's image tag could make).
"""
import hashlib
import secrets
from datetime import datetime, timedelta

from flask import Blueprint, redirect, render_template, session
from sqlalchemy import ForeignKey, String, delete, select, update
from sqlalchemy.orm import Mapped, mapped_column, relationship

from ..extensions import db
from ..models import User, utcnow
from ..security import safe_next
from .sign_in import sign_in

bp = Blueprint("sign_in_link", __name__)


class SignInLink(db.Model):
    __tablename__ = "sign_in_links"
    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)  # sha256 of the token
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    next_path: Mapped[str] = mapped_column(String(200))  # a path on this site, made by the CLI
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]

    user: Mapped[User] = relationship()


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_link(user: User, next_path: str, config) -> str | None:
    """A new link's full address, or None for an account a link may not sign in (staff)."""
    if user.is_staff:
        return None
    now = utcnow()
    db.session.execute(delete(SignInLink).where(SignInLink.expires_at < now))  # tidy as we go
    token = secrets.token_urlsafe(32)
    db.session.add(SignInLink(token_hash=digest(token), user_id=user.id, next_path=next_path,
                              created_at=now,
                              expires_at=now + timedelta(minutes=config["NIMBUS_SIGN_IN_LINK_MINUTES"])))
    db.session.commit()
    return f"{config['NIMBUS_PUBLIC_URL'].rstrip('/')}/signin/{token}"


def usable(token: str) -> SignInLink | None:
    """The unspent, unexpired link a token names; a made-up token finds nothing."""
    if not token or len(token) > 100:
        return None
    return db.session.scalar(select(SignInLink).where(
        SignInLink.token_hash == digest(token), SignInLink.used_at.is_(None),
        SignInLink.expires_at > utcnow()))


def gone():
    """One answer for used, expired and unknown links: a link says nothing about others."""
    return render_template("accounts/sign_in_link.html", link=None), 410


@bp.get("/signin/<token>")
def confirm(token):
    """Ask before signing in: the link is spent only by the button's POST."""
    link = usable(token)
    return gone() if link is None else render_template("accounts/sign_in_link.html", link=link)


@bp.post("/signin/<token>")
def redeem(token):
    """Spend the link (once, even if two requests race) and sign its owner in."""
    link = usable(token)
    if link is None:
        return gone()
    spent = db.session.execute(update(SignInLink).where(
        SignInLink.id == link.id, SignInLink.used_at.is_(None)).values(used_at=utcnow()))
    db.session.commit()
    if spent.rowcount != 1 or link.user.is_staff:
        return gone()
    session.clear()  # nothing of the session before signing in carries over
    sign_in(link.user)
    return redirect(safe_next(link.next_path) or "/", 303)
