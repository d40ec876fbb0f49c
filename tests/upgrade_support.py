"""Databases at a past revision, filled with rows valid at that revision, for the upgrade suite.

The fill reads the schema as it stands at the revision (reflected), so a table or column that a
future migration adds is filled too without a line here: each column gets a value of its type,
a foreign key points at a row of the table it refers to, and a row's tenant is its parent's.
REALISTIC gives the columns the app reads a value it would have stored itself (a tool turn's
messages, a hashed password, an order's status); NOT_SET leaves columns that would change what
the app shows (a deletion, a lock-out) empty.
"""
import json
from datetime import datetime, timedelta

from alembic.script import ScriptDirectory
from flask_migrate import upgrade
from sqlalchemy import (JSON, Boolean, DateTime, Float, Integer, LargeBinary, MetaData, String,
                        Text, inspect, select)

from webapp.accounts.passwords import hasher
from webapp.database import MIGRATIONS
from webapp.extensions import db

PASSWORD = "upgrade horse battery"
BASE_TIME = datetime(2026, 3, 14, 9, 30)
ROWS = {"tenants": 2, "users": 4, "conversations": 4, "turns": 8}  # else 3 (fewer if keyed by a parent)
GUEST_ROW = 3  # users row 3 is a guest


def past_revisions() -> list[str]:
    """Every revision but the newest, oldest first."""
    script = ScriptDirectory(MIGRATIONS)
    revisions = [r.revision for r in script.walk_revisions()][::-1]
    return revisions[:-1]


def tool_turn(i: int) -> list[dict]:
    """A turn as the agent stores it: question, a tool call, its result, the answer."""
    number = 1041 + i % 5
    return [
        {"role": "user", "content": f"Where is my order #{number}? ({i}) ünïcödé ✓"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": f"call_{i}", "name": "get_order", "arguments": {"number": number}}]},
        {"role": "tool", "tool_call_id": f"call_{i}", "name": "get_order",
         "content": json.dumps({"number": number, "status": "shipped", "item": "Trail shoes"})},
        {"role": "assistant", "content": f"Order #{number} shipped on March {i + 1}: parcel{i}."},
    ]


def user_email(i, row):
    return f"customer{i}@shop{row['tenant_id']}.example"


REALISTIC = {
    ("tenants", "slug"): lambda i, row: f"shop{i}",
    ("tenants", "name"): lambda i, row: f"Shop Number {i} — Ünïcode",
    ("tenants", "settings"): lambda i, row: {"summary_style": "bullets"} if i else {},
    ("users", "email"): user_email,
    ("users", "name"): lambda i, row: f"Customer {i} Çağrı",
    ("users", "is_guest"): lambda i, row: i == GUEST_ROW,
    ("users", "role"): lambda i, row: "staff" if i == 1 else "customer",
    ("users", "password_hash"): lambda i, row: None if i == GUEST_ROW else hasher.hash(PASSWORD),
    ("users", "failed_logins"): lambda i, row: 0,
    ("users", "session_token"): lambda i, row: "",  # as issue11 left every account
    ("conversations", "id"): lambda i, row: f"{i:02d}" + "c0ffee" * 5,
    ("conversations", "title"): lambda i, row: f"Order question {i} 📦",
    ("conversations", "strategy"): lambda i, row: ("compact", "window", "hybrid", "time")[i % 4],
    ("conversations", "settings"): lambda i, row: {},
    ("conversations", "turn_count"): lambda i, row: 2,
    ("conversations", "token_ratio"): lambda i, row: 1.25,
    ("turns", "seq"): lambda i, row: i // ROWS["conversations"],
    ("turns", "messages"): lambda i, row: tool_turn(i),
    ("turns", "compact"): lambda i, row: [tool_turn(i)[0], tool_turn(i)[-1]],
    ("turns", "question"): lambda i, row: tool_turn(i)[0]["content"],
    ("turns", "answer"): lambda i, row: tool_turn(i)[-1]["content"],
    ("turns", "outcome"): lambda i, row: "answered",
    ("turns", "tool_calls"): lambda i, row: 1,
    ("turns", "trace"): lambda i, row: [{"step": 1, "line": f"get_order({1041 + i % 5})"}],
    ("turns", "manifest"): lambda i, row: None,
    ("turn_vectors", "embedding"): lambda i, row: bytes(range(i, i + 16)) * 96,  # 384 float32
    ("turn_vectors", "embedding_model"): lambda i, row: "all-MiniLM-L6-v2",
    ("memories", "memorable_type"): lambda i, row: "account" if i else None,
    ("memories", "memorable_id"): lambda i, row: row.get("subject_id") if i else None,
    ("memories", "subject_id"): lambda i, row: row.get("subject_id") if i else None,
    ("memories", "content"): lambda i, row: f"Prefers parcel lockers, locker {i} ✓",
    ("memories", "source"): lambda i, row: ("distilled", "tool", "hand")[i % 3],
    ("memories", "embedding"): lambda i, row: bytes(range(i, i + 16)) * 96,
    ("memories", "embedding_model"): lambda i, row: "all-MiniLM-L6-v2",
    ("conversation_summaries", "style"): lambda i, row: "concise",
    ("conversation_summaries", "text"): lambda i, row: f"The customer asked about order {i}.",
    ("conversation_summaries", "topics"): lambda i, row: ["orders", "shipping"],
    ("orders", "item"): lambda i, row: "Trail shoes",
    ("orders", "status"): lambda i, row: ("shipped", "delivered", "processing")[i % 3],
    ("orders", "amount_cents"): lambda i, row: 8999 + i,
    ("orders", "number"): lambda i, row: 1041 + i,
    ("tickets", "category"): lambda i, row: "refund",
    ("tickets", "status"): lambda i, row: "open",
    ("help_articles", "slug"): lambda i, row: f"returns-{i}",
    ("memory_sharing", "shares"): lambda i, row: i % 2 == 0,
    ("audit_log", "action"): lambda i, row: ("viewed conversation", "created share link",
                                             "changed settings")[i % 3],
    ("audit_log", "actor_email"): lambda i, row: "staff@shop.example",  # until 0019
    ("audit_log", "actor_digest"): lambda i, row: "0123456789abcdef",
    ("locks", "name"): lambda i, row: f"conversation:{i}",
    ("job_runs", "arguments"): lambda i, row: [[f"c{i}"], {}],
    ("job_runs", "attempts"): lambda i, row: 1,
}
NOT_SET = {("conversations", "deleted_at"), ("users", "locked_until"),
           ("share_links", "revoked_at"), ("turns", "heartbeat_at")}
IN_THE_FUTURE = {("share_links", "expires_at"), ("locks", "expires_at"),
                 ("job_runs", "lease_until")}


def before(revision: str, later: str) -> bool:
    """Whether `revision` comes before `later` in the migration history."""
    order = [r.revision for r in ScriptDirectory(MIGRATIONS).walk_revisions()][::-1]
    return order.index(revision) < order.index(later)


def give_session_tokens(stored: dict[str, list[dict]]) -> None:
    """Give each filled user the random session token the app has made since 0007."""
    for i, user in enumerate(stored["users"]):
        user["session_token"] = f"{i + 1:032x}"
        db.session.execute(db.text("UPDATE users SET session_token = :t WHERE id = :id"),
                           {"t": user["session_token"], "id": user["id"]})
    db.session.commit()


def build_at(revision: str) -> None:
    """Migrate the app's (empty) database up to `revision`."""
    upgrade(directory=MIGRATIONS, revision=revision)


def fill() -> dict[str, list[dict]]:
    """Insert rows into every table of the current schema; return them, per table, by key."""
    metadata = MetaData()
    metadata.reflect(db.engine)
    stored: dict[str, list[dict]] = {}
    with db.engine.begin() as connection:
        for table in metadata.sorted_tables:
            if table.name == "alembic_version" or "_fts" in table.name:
                continue
            rows = []
            for i in range(count_for(table, stored)):
                row = row_for(table, i, stored)
                # Ids come from the database, as the app's do (a PostgreSQL sequence moves on).
                key = connection.execute(table.insert(), row).inserted_primary_key
                row.update(zip((c.name for c in table.primary_key.columns), key))
                rows.append(row)
            stored[table.name] = rows
    return stored


def count_for(table, stored) -> int:
    """A table keyed by a parent (one row per user, per turn...) gets one row per parent at most."""
    count = ROWS.get(table.name, 3)
    for column in table.primary_key.columns:
        for key in column.foreign_keys:
            count = min(count, len(stored.get(key.column.table.name, [])))
    return count


# A column that copies its parent's (column holding the parent's key, the parent's column):
# the database fills turns.owner_id in on insert, and a revision that has it is filled the same.
FROM_PARENT = {("turns", "owner_id"): ("conversation_id", "user_id")}


def row_for(table, i: int, stored) -> dict:
    row: dict = {}
    for column in table.columns:  # foreign keys first: other values may follow from them
        for key in column.foreign_keys:
            parents = stored.get(key.column.table.name) or []
            if parents:
                row[column.name] = parents[i % len(parents)][key.column.name]
    parent_tenant = next((parent_row(stored, table, column.name, row)["tenant_id"]
                          for column in table.columns if column.name != "tenant_id"
                          and column.foreign_keys and column.name in row
                          and "tenant_id" in parent_row(stored, table, column.name, row)), None)
    if "tenant_id" in row and parent_tenant is not None:
        row["tenant_id"] = parent_tenant  # a customer's conversation is in the customer's shop
    for column in table.columns:
        name = (table.name, column.name)
        if name == ("turns", "owner_id"):  # the conversation's person, as the database sets it
            row[column.name] = parent_row(stored, table, "conversation_id", row).get("user_id")
        elif name in REALISTIC:
            row[column.name] = REALISTIC[name](i, row)
        elif name in FROM_PARENT:
            key, parent_column = FROM_PARENT[name]
            row[column.name] = parent_row(stored, table, key, row)[parent_column]
        elif name in NOT_SET:
            row[column.name] = None
        elif column.name in row or column.computed is not None:
            continue  # set already, or the database computes it (turns.search_words)
        elif column.primary_key and isinstance(column.type, Integer) and len(table.primary_key) == 1:
            continue  # the database numbers it
        else:
            row[column.name] = value_of(column, i, table.name in IN_THE_FUTURE
                                        or name in IN_THE_FUTURE)
    return row


def parent_row(stored, table, column_name, row) -> dict:
    key = next(iter(table.columns[column_name].foreign_keys))
    for parent in stored.get(key.column.table.name, []):
        if parent[key.column.name] == row[column_name]:
            return parent
    return {}


def value_of(column, i: int, future: bool):
    """A value of the column's type, different in each row."""
    kind = column.type
    if isinstance(kind, Boolean):
        return i % 2 == 1
    if isinstance(kind, Integer):
        return i + 7
    if isinstance(kind, Float) or kind.__class__.__name__ in ("DOUBLE", "DOUBLE_PRECISION", "REAL"):
        return 0.5 + i
    if isinstance(kind, DateTime):
        return BASE_TIME + timedelta(days=3650 if future else i, minutes=i)
    if isinstance(kind, JSON):
        return {"value": i, "text": "ünïcode"}
    if isinstance(kind, LargeBinary):
        return bytes([i % 256, 0, 255]) * 4
    if isinstance(kind, (String, Text)):
        text = f"{column.table.name} {column.name} {i} ünï"
        length = getattr(kind, "length", None)
        return text[-length:] if length else text
    raise TypeError(f"no sample value for {column.table.name}.{column.name} ({kind}): add one "
                    "to REALISTIC in tests/upgrade_support.py")


def read_back(stored: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """The same tables' rows now, with only the columns that were filled, ordered as stored."""
    metadata = MetaData()
    metadata.reflect(db.engine)
    found = {}
    with db.engine.connect() as connection:
        for name, rows in stored.items():
            table = metadata.tables[name]
            columns = [table.c[c] for c in (rows[0] if rows else [])]
            if not columns:
                found[name] = []
                continue
            order = list(table.primary_key.columns)
            found[name] = [dict(r._mapping) for r in
                           connection.execute(select(*columns).order_by(*order))]
    return found


def comparable(rows: list[dict]) -> list[dict]:
    """Rows ordered by their values, booleans and JSON as Python reads them on either backend."""
    def normal(value):
        if isinstance(value, memoryview):
            return bytes(value)
        return value
    cleaned = [{k: normal(v) for k, v in row.items()} for row in rows]
    return sorted(cleaned, key=lambda row: json.dumps(row, sort_keys=True, default=str))


def table_names() -> set[str]:
    return set(inspect(db.engine).get_table_names())
