"""One spelling per email address, so a lookalike cannot open a second account under the same
name: NFKC (fullwidth letters, NFC/NFD accents), zero-width characters removed, lower case,
checked by email-validator; a local part or domain mixing scripts (a Cyrillic "о" among Latin
letters) is refused, and so is an address that reads as an existing account's once lookalike
letters are read as the Latin ones they copy ("сосо@" in Cyrillic, "ċoco@", beside "coco@").
And the user an address names (find_user), which every package's commands look up.
"""
import unicodedata

from email_validator import EmailNotValidError, validate_email
from sqlalchemy import select

from ..extensions import db
from ..models import User

MAX_EMAIL_CHARS = 320
INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
SCRIPTS = ("LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "HEBREW", "ARABIC", "CJK", "HIRAGANA",
           "KATAKANA", "HANGUL", "DEVANAGARI", "THAI", "GEORGIAN")


# Letters of other scripts drawn like Latin ones (after accents are taken off), from Unicode's
# confusables list: enough to read a whole-script lookalike as the address it copies.
LOOKALIKES = str.maketrans({
    "а": "a", "с": "c", "ԁ": "d", "е": "e", "һ": "h", "і": "i", "ј": "j", "к": "k",
    "ӏ": "l", "о": "o", "р": "p", "ԛ": "q", "ѕ": "s", "т": "t", "у": "y", "х": "x", "ԝ": "w",
    "α": "a", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
    "χ": "x", "ı": "i", "ɡ": "g", "ℓ": "l"})


def read_as_latin(email: str) -> str:
    """The address with accents taken off and lookalike letters read as the Latin ones."""
    bare = "".join(c for c in unicodedata.normalize("NFKD", email) if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", bare).translate(LOOKALIKES)


class InvalidEmail(ValueError):
    """An address that cannot be an account's; the message says why."""


def canonical(raw: str | None) -> str:
    """The address as stored and looked up: NFKC, no invisible characters, lower case. Never
    refuses: signing in with a lookalike finds nobody rather than failing loudly."""
    return unicodedata.normalize("NFKC", (raw or "").translate(INVISIBLE)).strip().lower()


def find_user(email: str) -> User | None:
    return db.session.scalar(select(User).where(User.email == canonical(email)))


def scripts_of(text: str) -> set[str]:
    found = set()
    for char in text:
        if char.isalpha():
            name = unicodedata.name(char, "")
            found.update(script for script in SCRIPTS if name.startswith(script))
    return found


def normalize_email(raw: str | None) -> str:
    """The canonical address for a new account; raises InvalidEmail for what cannot be one."""
    email = canonical(raw)
    if not email or len(email) > MAX_EMAIL_CHARS:
        raise InvalidEmail("give an email address like you@example.com")
    try:
        email = validate_email(email, check_deliverability=False).normalized.lower()
    except EmailNotValidError as problem:
        raise InvalidEmail(f"{problem}".rstrip(".")) from None
    local, _, domain = email.rpartition("@")
    if any(len(scripts_of(part)) > 1 for part in (local, *domain.split("."))):
        raise InvalidEmail("that address mixes letters of different alphabets (a lookalike of "
                           "another address); type it again in one alphabet")
    return email
