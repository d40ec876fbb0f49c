import logging
import re
from logging.config import fileConfig

from flask import current_app

from alembic import context

# this is the Alembic Config object, which provides
# access to the values within the .ini file in use.
config = context.config

# Interpret the config file for Python logging.
# This line sets up loggers basically.
fileConfig(config.config_file_name, disable_existing_loggers=False)  # keep the app's loggers
logger = logging.getLogger('alembic.env')


def get_engine():
    return current_app.extensions['migrate'].db.engine


def get_engine_url():
    return get_engine().url.render_as_string(hide_password=False).replace('%', '%%')


# add your model's MetaData object here
# for 'autogenerate' support
# from myapp import mymodel
# target_metadata = mymodel.Base.metadata
config.set_main_option('sqlalchemy.url', get_engine_url())
target_db = current_app.extensions['migrate'].db

# other values from the config, defined by the needs of env.py,
# can be acquired:
# my_important_option = config.get_main_option("my_important_option")
# ... etc.


def get_metadata():
    if hasattr(target_db, 'metadatas'):
        return target_db.metadatas[None]
    return target_db.metadata


def include_object(object, name, type_, reflected, compare_to):
    """Full-text indexes (FTS5 tables, GIN expression indexes) are created by their own DDL."""
    if type_ == "table" and reflected and compare_to is None and "_fts" in name:
        return False
    if type_ == "index" and name and name.endswith("_fulltext"):
        return False
    return True


def run_migrations_offline():
    """Run migrations in 'offline' mode.

    This configures the context with just a URL
    and not an Engine, though an Engine is acceptable
    here as well.  By skipping the Engine creation
    we don't even need a DBAPI to be available.

    Calls to context.execute() here emit the given string to the
    script output.

    """
    url = config.get_main_option("sqlalchemy.url")
    context.configure(
        url=url, target_metadata=get_metadata(), literal_binds=True
    )

    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online():
    """Run migrations in 'online' mode.

    In this scenario we need to create an Engine
    and associate a connection with the context.

    """

    # this callback is used to prevent an auto-migration from being generated
    # when there are no changes to the schema
    # reference: http://alembic.zzzcomputing.com/en/latest/cookbook.html
    def process_revision_directives(context, revision, directives):
        if getattr(config.cmd_opts, 'autogenerate', False):
            script = directives[0]
            if script.upgrade_ops.is_empty():
                directives[:] = []
                logger.info('No changes in schema detected.')

    conf_args = current_app.extensions['migrate'].configure_args
    conf_args.setdefault("include_object", include_object)
    if conf_args.get("process_revision_directives") is None:
        conf_args["process_revision_directives"] = process_revision_directives

    connectable = get_engine()

    with connectable.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            # A batch migration rebuilds a table on SQLite (copy, DROP, rename). With the app's
            # foreign_keys=ON that DROP cascades into every row that refers to it, so the rebuild
            # runs with them off (Alembic's batch recipe; the pragma is a no-op inside a
            # transaction, hence before it), and is checked afterwards.
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            triggers = sqlite_triggers(connection)
            connection.commit()  # Alembic then commits each migration itself
        def keep_triggers(ctx, step, heads, run_args):
            """After each step: re-create what a rebuild in it lost, then know what it made."""
            restore_triggers(connection, triggers)
            triggers.update(sqlite_triggers(connection))

        try:
            context.configure(
                connection=connection,
                target_metadata=get_metadata(),
                **({"on_version_apply": keep_triggers} if sqlite else {}),
                **conf_args
            )

            with context.begin_transaction():
                context.run_migrations()
            if sqlite:
                restore_triggers(connection, triggers)
                check_sqlite(connection)
                connection.commit()
        finally:
            if sqlite:  # the connection goes back to the pool: the app needs its cascades
                connection.rollback()
                connection.exec_driver_sql("PRAGMA foreign_keys=ON")
                connection.commit()


def sqlite_triggers(connection):
    return dict(connection.exec_driver_sql(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").all())


def restore_triggers(connection, before):
    """A rebuilt table loses its triggers (the full-text indexes' sync triggers among them):
    create again each one that vanished while its table still exists. A migration that means
    to drop a trigger drops its table or replaces it under the same name."""
    after = sqlite_triggers(connection)
    tables = {name for (name,) in connection.exec_driver_sql(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    for name, sql in before.items():
        table = re.search(r"\bON\s+[\"`\[]?(\w+)", sql, re.I)
        if name not in after and table and table.group(1) in tables:
            logger.info("re-creating trigger %s, lost in a table rebuild", name)
            connection.exec_driver_sql(sql)


class BrokenUpgrade(RuntimeError):
    """The migrations left rows that refer to nothing, or a damaged file."""


def check_sqlite(connection):
    """Refuse to finish an upgrade that broke a reference or the file itself."""
    dangling = connection.exec_driver_sql("PRAGMA foreign_key_check").all()
    if dangling:
        raise BrokenUpgrade(f"the upgrade left {len(dangling)} row(s) referring to missing rows, "
                            f"first: {tuple(dangling[0])}; restore the backup init-db made")
    problems = [row[0] for row in connection.exec_driver_sql("PRAGMA integrity_check").all()]
    if problems != ["ok"]:
        raise BrokenUpgrade(f"the database file is damaged after the upgrade: {problems[:3]}")


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
