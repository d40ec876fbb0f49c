"""The migrations build exactly the schema the models describe, and init-db applies them."""
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from webapp.database import create_schema
from webapp.extensions import db

from .support import make_app


def test_migrations_match_the_models(tmp_path):
    app = make_app(tmp_path / "fresh.db")
    with app.app_context():
        create_schema()
        with db.engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={
                "include_object": lambda obj, name, type_, reflected, compare_to:
                    not (type_ == "table" and "_fts" in name)})
            assert compare_metadata(context, db.metadata) == []
        db.engine.dispose()


def test_init_db_runs_the_migrations_and_can_run_again(tmp_path):
    app = make_app(tmp_path / "cli.db")
    runner = app.test_cli_runner()
    for _ in range(2):
        result = runner.invoke(args=["init-db", "--demo"])
        assert result.exit_code == 0, result.output
    with app.app_context():
        tables = set(inspect(db.engine).get_table_names())
        assert {"alembic_version", "conversations", "turns", "memories", "memories_fts"} <= tables
        db.engine.dispose()


def test_init_db_explains_a_database_made_before_migrations(tmp_path):
    app = make_app(tmp_path / "old.db")
    with app.app_context():
        db.create_all()  # how databases were made before the migrations existed
        db.engine.dispose()
    result = app.test_cli_runner().invoke(args=["init-db"])
    assert result.exit_code != 0 and "no migration history" in result.output
    assert "db stamp head" in result.output
