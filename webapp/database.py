"""Database set-up: the engine per DATABASE_URL, SQLite tuned for concurrent readers, all models,
and Alembic migrations (Flask-Migrate) that `init-db` applies.
"""
import os

from alembic.migration import MigrationContext
from flask import Flask
from flask_migrate import Migrate, upgrade
from sqlalchemy import event, inspect
from sqlalchemy.engine import Engine

from .extensions import db


def init_app(app: Flask) -> None:
    options = app.config.setdefault("SQLALCHEMY_ENGINE_OPTIONS", {})
    uri = app.config["SQLALCHEMY_DATABASE_URI"]
    if uri.startswith("sqlite"):
        # Streams and workers write from several threads; wait for the lock instead of failing.
        options.setdefault("connect_args", {"timeout": 30})
    if ":memory:" not in uri:
        # Runs check a connection out per statement batch, so a modest pool serves many streams.
        options.setdefault("pool_size", app.config["NIMBUS_DB_POOL_SIZE"])
        options.setdefault("max_overflow", app.config["NIMBUS_DB_MAX_OVERFLOW"])
        options.setdefault("pool_timeout", app.config["NIMBUS_DB_POOL_TIMEOUT"])
    db.init_app(app)
    import_models()
    migrate.init_app(app, db, directory=MIGRATIONS, render_as_batch=True)


MIGRATIONS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "migrations")
migrate = Migrate()


def import_models() -> None:
    """Import every module that defines tables, so create_all and migrations see them all."""
    from . import models  # noqa: F401
    from .shop import models as shop_models  # noqa: F401
    from .memory.longterm import models as memory_models  # noqa: F401
    from .memory import summaries  # noqa: F401


@event.listens_for(Engine, "connect")
def tune_sqlite(dbapi_connection, connection_record):
    """SQLite: enforce foreign keys (cascading deletes) and use WAL so readers never block."""
    if type(dbapi_connection).__module__.startswith("sqlite3"):
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()


class UnmigratedDatabase(RuntimeError):
    """Tables exist but Alembic never ran here: upgrading would clash with them."""


def create_schema() -> None:
    """Bring the database to the newest schema through the migrations (safe to run again)."""
    tables = set(inspect(db.engine).get_table_names()) - {"alembic_version"}
    with db.engine.connect() as connection:
        revision = MigrationContext.configure(connection).get_current_revision()
    if tables and revision is None:
        raise UnmigratedDatabase(
            f"{db.engine.url.render_as_string(hide_password=True)} has tables but no migration "
            "history (it was made before migrations existed). Delete it and run init-db again, "
            "or, if its schema is current, mark it with `flask --app webapp db stamp head`.")
    upgrade(directory=MIGRATIONS)
