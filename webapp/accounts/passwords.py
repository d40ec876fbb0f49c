"""Passwords: argon2id hashes (argon2-cffi's current defaults), generated passwords, sign-in checks.

Repeated failures lock the account for a while, from the address they came from (lockout.py).
"""
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from ..extensions import db
from .lockout import count_failure, forget_failures, is_locked
from ..models import User, new_session_token, utcnow

hasher = PasswordHasher()
MIN_PASSWORD_CHARS = 10
MAX_PASSWORD_CHARS = 200
# Verified against when the email is unknown, so a wrong email takes as long as a wrong password.
DUMMY_HASH = hasher.hash(secrets.token_hex(8))


WRONG = "That email and password do not match an account."


class InvalidPassword(ValueError):
    """A password too short or too long to be set."""


def generate_password() -> str:
    return secrets.token_urlsafe(12)


def set_password(user: User, password: str) -> None:
    """Hash and set a new password; every browser signed in as this user is signed out."""
    if not MIN_PASSWORD_CHARS <= len(password or "") <= MAX_PASSWORD_CHARS:
        raise InvalidPassword(f"a password needs {MIN_PASSWORD_CHARS} to {MAX_PASSWORD_CHARS} "
                              "characters")
    user.password_hash = hasher.hash(password)
    user.session_token = new_session_token()
    user.failed_logins, user.locked_until = 0, None


def check_password(user: User | None, password: str) -> bool:
    """True if the password is this user's; upgrades an outdated hash on the way."""
    if user is None or not user.password_hash:
        try:
            hasher.verify(DUMMY_HASH, password or "")
        except VerificationError:
            pass
        return False
    try:
        hasher.verify(user.password_hash, password or "")
    except (VerificationError, InvalidHashError):
        return False
    if hasher.check_needs_rehash(user.password_hash):
        user.password_hash = hasher.hash(password)
    return True


def authenticate(user: User | None, password: str, config,
                 address: str) -> tuple[User | None, str | None]:
    """(user, None) on success; (None, what to tell the person) otherwise. Commits the counter.
    `address` is the client's IP: a lock-out holds for that account from that address."""
    if user is not None and is_locked(user, address, config):
        check_password(None, password)  # as long as a wrong password takes
        # Said exactly like a wrong password: a different answer would tell which accounts exist.
        return None, WRONG
    if not check_password(user, password):
        if user is not None:
            count_failure(user, address, config)
            db.session.commit()
        return None, WRONG
    forget_failures(user, address, config)
    user.last_login_at = utcnow()
    db.session.commit()
    return user, None
