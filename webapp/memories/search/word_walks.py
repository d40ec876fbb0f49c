"""PostgreSQL: a word held by many of a scope's rows, its newest found by reading the scope's
newest rows and testing each row's kept words (a tsvector column), not by fetching and sorting
every hit the GIN index hands over. A person's turns only (Indexed.walked, keyword_tables.py).
"""
from sqlalchemy import func, select

from .index_queries import Indexed, is_postgresql
from .statements import built, read

# The window of newest ids read, as a multiple of the ids expected to hold the wanted rows; a
# window holding fewer is read again wider, then the GIN index is asked after all.
WINDOWS = (2, 8)


def walks(indexed: Indexed, held: int, rows: int, wanted: int) -> bool:
    """Whether reading the scope's newest rows for the `wanted` newest of a word's `held` rows,
    in a scope of `rows`, reads fewer than the `held` the GIN index would hand over: about
    WINDOWS[0] * wanted * rows / held of them."""
    return (indexed.walked is not None and is_postgresql() and held > 0
            and held * held >= WINDOWS[0] * wanted * rows)


def newest_walked(indexed: Indexed, held: int, wanted: int, statement, values: dict):
    """The rows `statement` (holding(..., walk=True): the scope's rows above the id bound as
    `above`, holding the word, newest first, `wanted` at most) finds in the newest window of ids
    that holds `wanted` of them; None when none of WINDOWS does. The window is sized from the
    shop's newest id, as if the scope's rows and the word's were spread evenly over its history:
    a bound on the id, not a LIMIT, so that a plan made without the values (psycopg prepares a
    statement it runs often) still reads only the window, where a walk ordered by id and cut by a
    LIMIT was planned as a read and sort of every row of the person's."""
    top = read(built(("newest", indexed.fts_name), lambda: select(func.max(indexed.id)))).scalar()
    for times in WINDOWS:
        span = -(-times * wanted * (top or 0) // held)
        if top is None or span >= top:
            return None
        rows = read(statement, {**values, "above": top - span}).fetchall()
        if len(rows) >= wanted:
            return rows
    return None
