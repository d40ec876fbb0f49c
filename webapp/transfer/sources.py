"""Which imported conversations a person already has, so a retried upload adds no copies.

A conversation is known by its source app's own id ("chatgpt:6f1…", "claude:<uuid>"), or, in
formats that give none (OpenAI messages, ShareGPT, JSON Lines), by a digest of its words. The key
is stored on the imported conversation and compared within its owner's live conversations only:
another person may import the same file, and a deleted copy may be imported again.
"""
import hashlib
import json

from sqlalchemy import select

from ..extensions import db
from ..models import Conversation, User
from .importer import Checked

KEY_CHARS = 100  # conversations.import_key
LOOKUP_BATCH = 500  # keys per query: well under every database's bound-parameter limit


def source_key(app: str, source_id) -> str:
    """'chatgpt:<id>' for a record's own id; '' when it has none that names it."""
    if isinstance(source_id, bool) or not isinstance(source_id, (str, int)):
        return ""
    text = str(source_id).strip()
    if not text:
        return ""
    key = f"{app}:{text}"
    return key if len(key) <= KEY_CHARS else f"{app}:sha256:{digest(text)}"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def import_key(checked: Checked) -> str:
    """The record's source key, or the digest of its title, instructions and messages."""
    if checked.source:
        return checked.source
    words = json.dumps([checked.title, checked.instructions,
                        [record["messages"] for record in checked.raw]],
                       sort_keys=True, ensure_ascii=False, default=str)
    return f"sha256:{digest(words)}"


def not_yet_imported(checked: list[Checked], owner: User, seen: set | None = None
                     ) -> tuple[list[Checked], int]:
    """The conversations `owner` does not have yet, each keyed for storing, and how many were
    left out: imported before, or a second record with the same source id within these files
    (two records of the same words, in a data set, are both kept). (The conversation a Nimbus
    export was made from is no import: importing its export beside it makes a copy, on purpose.) `seen` holds the source keys of the same
    import's earlier batches, and gains these."""
    keys = [import_key(one) for one in checked]
    known = seen if seen is not None else set()
    for start in range(0, len(keys), LOOKUP_BATCH):
        known.update(db.session.scalars(select(Conversation.import_key).where(
            Conversation.user_id == owner.id, Conversation.deleted_at.is_(None),
            Conversation.import_key.in_(keys[start:start + LOOKUP_BATCH]))))
    fresh = []
    for one, key in zip(checked, keys):
        if key not in known:
            if one.source:
                known.add(key)
            one.source = key
            fresh.append(one)
    return fresh, len(checked) - len(fresh)
