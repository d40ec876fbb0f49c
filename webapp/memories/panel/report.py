"""The consolidation report: per scope, what memory writes did over a period — memories added,
edited, superseded, merged and deleted — for the shop's staff (`flask memories report`, the
staff page /staff/memory-report)."""
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select

from ...extensions import db
from ...models import User
from ..models import Memory, MemoryRevision
from ..store.scopes import scope_label

COLUMNS = ("added", "edited", "superseded", "merged", "deleted")


@dataclass
class ScopeLine:
    scope: str
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COLUMNS, 0))
    changes: list[MemoryRevision] = field(default_factory=list)  # with their old text


def scope_of(row, names: dict[int, str]) -> str:
    """'workspace · shared', 'order #1042 · personal to Alex Rivera'."""
    who = "shared" if row.subject_id is None else \
        f"personal to {names.get(row.subject_id) or 'a deleted person'}"
    return f"{scope_label(row)} · {who}"


def consolidation_report(tenant_id: int, since: datetime) -> list[ScopeLine]:
    """Every scope of the tenant with a change since `since`, in scope order."""
    revisions = list(db.session.scalars(select(MemoryRevision).where(
        MemoryRevision.tenant_id == tenant_id, MemoryRevision.created_at >= since)
        .order_by(MemoryRevision.id)))
    added = list(db.session.scalars(select(Memory).where(
        Memory.tenant_id == tenant_id, Memory.created_at >= since).order_by(Memory.id)))
    subjects = {row.subject_id for row in (*revisions, *added) if row.subject_id is not None}
    names = dict(db.session.execute(select(User.id, User.name).where(User.id.in_(subjects))).all()) \
        if subjects else {}
    lines: dict[str, ScopeLine] = {}
    for memory in added:
        key = scope_of(memory, names)
        lines.setdefault(key, ScopeLine(key)).counts["added"] += 1
    for row in revisions:
        key = scope_of(row, names)
        line = lines.setdefault(key, ScopeLine(key))
        line.counts[row.action] += 1
        if row.content is not None:
            line.changes.append(row)
    return [lines[key] for key in sorted(lines)]
