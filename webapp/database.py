"""Database set-up: the engine per DATABASE_URL, SQLite tuned for concurrent readers, all models,
and Alembic migrations (Flask-Migrate) that `init-db` applies.
"""
import os
import sqlite3
from datetime import datetime, timezone

from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from flask import Flask
from flask_migrate import Migrate, upgrade
from sqlalchemy import event, inspect, literal, select, table
from sqlalchemy.engine import Engine

from . import sqlite_waits
from .extensions import db


def init_app(app: Flask) -> None:
    options = app.config.setdefault("SQLALCHEMY_ENGINE_OPTIONS", {})
    uri = app.config["SQLALCHEMY_DATABASE_URI"]
    if uri.startswith("sqlite"):
        # Streams and workers write from several threads; wait for the lock instead of failing
        # (under gevent, in sleeps that let the worker's other streams go on).
        options.setdefault("connect_args", sqlite_waits.connect_args())
    if ":memory:" not in uri:
        # Runs check a connection out per statement batch, so a modest pool serves many streams.
        options.setdefault("pool_size", app.config["NIMBUS_DB_POOL_SIZE"])
        options.setdefault("max_overflow", app.config["NIMBUS_DB_MAX_OVERFLOW"])
        options.setdefault("pool_timeout", app.config["NIMBUS_DB_POOL_TIMEOUT"])
    db.init_app(app)
    import_models()
    listen_for_changes()
    migrate.init_app(app, db, directory=MIGRATIONS, render_as_batch=True)


MIGRATIONS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "migrations")
migrate = Migrate()


def import_models() -> tuple:
    """The one list of the modules that define tables: loaded here so create_all and the
    migrations see every table."""
    from . import models
    from .context.summary import models as summary_models
    from .memories import models as memory_models
    from .shop import models as shop_models
    return models, shop_models, memory_models, summary_models


def listen_for_changes() -> None:
    """What the database does beside storing rows: keyword indexes made with the tables, and
    the hints that spare assembly lookups that would find nothing."""
    from .context import listen_for_hints
    from .memories import keyword_index
    keyword_index.listen()
    listen_for_hints()


# Pages are read straight from the OS page cache, shared by every connection: SQLite's own
# cache (2 MB a connection) holds about 1,000 rows with vectors, less than one search touches.
SQLITE_MMAP_BYTES = 1 << 30


@event.listens_for(Engine, "connect")
def tune_sqlite(dbapi_connection, connection_record):
    """SQLite: enforce foreign keys (cascading deletes), use WAL so readers never block, zero
    what is deleted, and read through a memory map."""
    if type(dbapi_connection).__module__.startswith("sqlite3"):
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA secure_delete=ON")  # deleted text is overwritten, not left in free pages
        cursor.execute(f"PRAGMA mmap_size={SQLITE_MMAP_BYTES}")
        cursor.close()


class UnmigratedDatabase(RuntimeError):
    """Tables exist but Alembic never ran here: upgrading would clash with them."""


def create_schema() -> None:
    """Bring the database to the newest schema through the migrations (safe to run again)."""
    tables = set(inspect(db.engine).get_table_names()) - {"alembic_version"}
    revision = current_revision()
    if tables and revision is None:
        raise UnmigratedDatabase(
            f"{db.engine.url.render_as_string(hide_password=True)} has tables but no migration "
            "history (it was made before migrations existed). Delete it and run init-db again, "
            "or, if its schema is current, mark it with `flask --app webapp db stamp head`.")
    upgrade(directory=MIGRATIONS)


def current_revision() -> str | None:
    with db.engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def backup_before_upgrade(folder: str) -> str | None:
    """Copy a SQLite file that holds rows into `folder` when the migrations have something to
    do; return the copy's path (None: nothing to upgrade, nothing stored, or not SQLite)."""
    revision = current_revision()
    if revision in (None, head_revision()):
        return None
    if not holds_rows(set(inspect(db.engine).get_table_names()) - {"alembic_version"}):
        return None
    return backup_sqlite(folder, revision)


def head_revision() -> str:
    return ScriptDirectory(MIGRATIONS).get_current_head()


def holds_rows(tables) -> bool:
    with db.engine.connect() as connection:
        return any(connection.execute(select(literal(1)).select_from(table(name)).limit(1)).first()
                   for name in sorted(tables))


def backup_sqlite(folder: str, revision: str) -> str | None:
    """Copy the SQLite file aside with SQLite's backup API (consistent even mid-WAL, with other
    processes writing); other databases are the operator's to back up
    (docs/operations.md "Backups and upgrades")."""
    url = db.engine.url
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    os.makedirs(folder, exist_ok=True)
    stem = os.path.splitext(os.path.basename(url.database))[0]
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = os.path.join(folder, f"{stem}-{revision}-{stamp}.db")
    source, target = sqlite3.connect(url.database), sqlite3.connect(path)
    try:
        with target:
            source.backup(target)
    finally:
        source.close()
        target.close()
    return path
