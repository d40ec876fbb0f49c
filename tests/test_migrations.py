"""The migrations build exactly the schema the models describe, and init-db applies them."""
import ast
import re
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from webapp.database import create_schema
from webapp.extensions import db

from .support import make_app

VERSIONS = sorted((Path(__file__).resolve().parent.parent / "migrations" / "versions").glob("*.py"))
# Databases already record these ids, so they stay; every later revision is named for its file.
OLD_IDS = {"0001", "issue9", "issue13", "issue11", "issue12", "issue15"}


def assignment(tree, name: str):
    return next(n.value.value for n in tree.body if isinstance(n, ast.Assign)
                and getattr(n.targets[0], "id", None) == name)


@pytest.mark.parametrize("path", VERSIONS, ids=lambda p: p.stem)
def test_a_migration_imports_nothing_from_the_app(path):
    """A module that moves or changes must never break an old migration: each carries its DDL."""
    modules = {(n.module or "") for n in ast.walk(ast.parse(path.read_text()))
               if isinstance(n, ast.ImportFrom)}
    modules |= {a.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Import)
                for a in n.names}
    assert not {m for m in modules if m.split(".")[0] in ("webapp", "tests")}


@pytest.mark.parametrize("path", VERSIONS, ids=lambda p: p.stem)
def test_a_new_revision_is_named_for_what_it_does(path):
    revision = assignment(ast.parse(path.read_text()), "revision")
    assert revision in OLD_IDS or (revision == path.stem
                                   and re.fullmatch(r"\d{4}_[a-z0-9_]+", revision))


def test_the_revisions_form_one_line_in_file_order():
    trees = [ast.parse(path.read_text()) for path in VERSIONS]
    ids = [assignment(tree, "revision") for tree in trees]
    assert [assignment(tree, "down_revision") for tree in trees] == [None, *ids[:-1]]


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
