"""PostgreSQL: a word held by many of a scope's rows, its newest found by reading the scope's
newest rows and testing each row's kept words (a tsvector column), not by fetching and sorting
every hit the GIN index hands over; and the estimate past the count cap, one walk for all of a
question's capped words. A person's turns only (Indexed.walked, keyword_tables.py).
"""
from sqlalchemy import Integer, and_, bindparam, func, literal_column, or_, select

from .index_queries import Indexed, is_postgresql
from .statements import built, read

# The window of newest ids read, as a multiple of the ids expected to hold the wanted rows; a
# window holding fewer is read again wider, then the GIN index is asked after all.
WINDOWS = (2, 8)
SPANS = (2, 8)  # the same for the estimate past the cap (since_walked)


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


def since_newest_hits(indexed: Indexed, names: list[str], hits: int, window: int):
    """For each word bound as one of `names`: how many of the scope's rows above the id bound as
    `above`, newest first, reach back to its `hits`-th newest holding it (`window` when more);
    NULL when those rows run out first. One walk for all the words, on the scope's index
    (Indexed.walked), each row tested on its kept words, `window` rows at most (one word: up to
    its hit, the window functions' run condition)."""
    above = bindparam("above", type_=Integer, literal_execute=True)
    tested = [indexed.kept_words.op("@@")(func.plainto_tsquery(
        literal_column("'english'"), bindparam(name))).label(f"hit{i}")
        for i, name in enumerate(names)]
    walk = indexed.walked(select(indexed.id.label("id"), *tested).select_from(indexed.id.table)
                          .where(indexed.id > above)).order_by(indexed.id.desc())
    walk = walk.limit(literal_column(str(int(window)))).subquery()
    order = walk.c.id.desc()
    held = [walk.c[f"hit{i}"] for i in range(len(names))]
    counted = select(func.row_number().over(order_by=order).label("at"), *held, *(
        func.count().filter(hit).over(order_by=order).label(f"hits{i}")
        for i, hit in enumerate(held))).subquery()
    cap, end, at = literal_column(str(int(hits))), literal_column(str(int(window))), counted.c.at
    reached = [func.min(at).filter(or_(and_(counted.c[f"hit{i}"], counted.c[f"hits{i}"] == cap),
                                       at == end)) for i in range(len(names))]
    return select(*reached).where(at <= end, *([counted.c.hits0 <= cap] if len(names) == 1
                                               else []))


def since_walked(indexed: Indexed, statement, values: dict, rows: int, window: int) -> list:
    """What `statement` (since_newest_hits) counts, read in a window of the scope's newest ids
    sized as in newest_walked (SPANS times the ids expected to hold `window` of the scope's
    `rows`), read again wider for a word the window did not reach, then over all the scope's
    rows: the id bound keeps any plan, even one that sorts, to the window."""
    top = read(built(("newest", indexed.fts_name), lambda: select(func.max(indexed.id)))).scalar()
    found = None
    for times in (*SPANS, None):
        span = None if times is None or not top else -(-times * window * top // max(rows, 1))
        above = 0 if span is None or span >= top else top - span
        got = read(statement, {**values, "above": above}).one()
        found = list(got) if found is None else [f if f is not None else g
                                                  for f, g in zip(found, got)]
        if above == 0 or None not in found:
            break
    return [window if n is None else n for n in found]
