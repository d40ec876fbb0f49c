"""Search statements: built once per form and run on the session's connection.

A search runs five or six statements over hundreds of rows; building them with SQLAlchemy and
reading the rows through the ORM took longer than SQLite took to run them. A statement whose
varying values are bound parameters is built once per form (the scope's shape, the number of
query words) and reused; its rows are read as Core rows.
"""
from typing import Callable

from sqlalchemy import select, union_all

from ...extensions import db

STATEMENTS: dict = {}  # (dialect, form...) -> a statement whose values are bound parameters
MAX_FORMS = 1_000  # forms are few (scope shapes x word counts); this only bounds a surprise


def built(form: tuple | None, build: Callable):
    """The statement `build()` makes, made once per form and dialect; without a form (a scope
    whose values are written into its conditions), made anew every time."""
    if form is None:
        return build()
    key = (db.engine.dialect.name, *form)
    statement = STATEMENTS.get(key)
    if statement is None:
        if len(STATEMENTS) >= MAX_FORMS:
            STATEMENTS.clear()
        statement = STATEMENTS[key] = build()
    return statement


def read(statement, values: dict | None = None):
    """Run a select of columns on the session's connection: Core rows, without the ORM's result
    machinery. Pending changes are flushed first, as the session's own execute would."""
    db.session.flush()
    return db.session.connection().execute(statement, values or {})


def newest_in(branches, columns, id_column, limit, *where):
    """`columns` of the rows meeting one of `branches` (disjoint (condition, in id order) pairs)
    and `where`, newest first, up to `limit`: each branch walked newest first on its own index
    range (or, not in id order, read and sorted) and the walks merged. One OR of them would be
    read whole and sorted (a scope of 100,000 rows), and a walk of a wider index would pass every
    row beside the scope (a shop's other customers'). A branch sorted by -id offers the planner
    no index order, so it keeps to the branch's own ranges."""
    walks = [select(*columns).where(branch, *where)
             .order_by(id_column.desc() if ordered else -id_column).limit(limit).subquery()
             for branch, ordered in branches]
    merged = union_all(*(select(walk) for walk in walks)).subquery()
    return select(merged).order_by(merged.c[id_column.name].desc()).limit(limit)
