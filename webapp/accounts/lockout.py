"""Lock-out after failed sign-ins, per account *and* address: an attacker who knows an email locks
only their own address out of that account, and its owner still signs in from anywhere else. A
far higher ceiling per account, over all addresses, still slows an attack spread over many; it
locks the account for everybody (on the user row, so every worker sees it at once)."""
from datetime import timedelta

from ..models import User, utcnow
from ..security import shared_counters as counters


def window(config, failures: int) -> str:
    return f"{failures} per {config['NIMBUS_LOGIN_LOCK_MINUTES']} minutes"


def is_locked(user: User, address: str, config) -> bool:
    """Whether this account refuses every password from this address just now."""
    if user.locked_until is not None and user.locked_until > utcnow():
        return True
    return counters().spent(window(config, config["NIMBUS_LOGIN_MAX_FAILURES"]),
                            "sign-in-failures", str(user.id), address)


def count_failure(user: User, address: str, config) -> None:
    """Count a wrong password; past the account's ceiling, lock it for everybody a while."""
    user.failed_logins += 1
    counters().spend(window(config, config["NIMBUS_LOGIN_MAX_FAILURES"]),
                     "sign-in-failures", str(user.id), address)
    ceiling = window(config, config["NIMBUS_LOGIN_ACCOUNT_MAX_FAILURES"])
    counters().spend(ceiling, "account-failures", str(user.id))
    if counters().spent(ceiling, "account-failures", str(user.id)):
        user.locked_until = utcnow() + timedelta(minutes=config["NIMBUS_LOGIN_LOCK_MINUTES"])
        user.failed_logins = 0
        counters().forget(ceiling, "account-failures", str(user.id))


def forget_failures(user: User, address: str, config) -> None:
    """A right password from this address: its earlier mistakes no longer count."""
    user.failed_logins, user.locked_until = 0, None
    counters().forget(window(config, config["NIMBUS_LOGIN_MAX_FAILURES"]),
                      "sign-in-failures", str(user.id), address)
