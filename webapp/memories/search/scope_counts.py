"""A scope's row count for IDF, kept between searches in this process (TOTALS): counted once,
topped up with the rows added since, recounted every RECOUNT_SECONDS so deletions show.
"""
import time
from collections import OrderedDict

from sqlalchemy import bindparam, func, select

from ...extensions import db
from .index_queries import Indexed, is_postgresql
from .statements import read

RECOUNT_SECONDS = 600  # a scope's row count is topped up with new rows, recounted this often


TOTALS: OrderedDict = OrderedDict()  # (database, index, scope key) -> (rows, highest id, when)


def row_count(indexed: Indexed) -> tuple:
    """(a function building a subquery of one row, scope_rows and scope_top; its bound values;
    and the function that turns its row into the scope's row count). A named scope is counted
    once, then topped up with the rows added since (a range on the id index), and recounted every
    RECOUNT_SECONDS so deletions show: the count only feeds IDF, and counting every row on every
    search grew with the scope."""
    key = None if indexed.key is None else (str(db.engine.url), indexed.fts_name, indexed.key)
    known, now = TOTALS.get(key) if key else None, time.monotonic()
    again = key is None or known is None or now - known[2] > RECOUNT_SECONDS or known[1] is None

    # Topped up on PostgreSQL: the rows above an id on the scope's own index where it has one (a
    # person's turns: ix_turns_owner_newest), not by probing each of a busy person's
    # conversations for new turns (10,000 probes, 76 ms for none found). SQLite has no such
    # index: its planner then walked the shop's conversations instead.
    scoped = (indexed.ranged or indexed.scoped) if not again and is_postgresql() else indexed.scoped

    def counted():
        return scoped(
            select(func.count().label("scope_rows"), func.max(indexed.id).label("scope_top"))
            .select_from(indexed.id.table)
            .where(*([] if again else [indexed.id > bindparam("known")]))).subquery()
    values = {**indexed.values, **({} if again else {"known": known[1]})}

    def finish(rows, top) -> int:
        rows = rows or 0
        if key is None:
            return rows
        if again:
            TOTALS[key] = (rows, top, now)
        else:
            TOTALS[key] = (known[0] + rows, top or known[1], known[2])
        TOTALS.move_to_end(key)
        while len(TOTALS) > 10_000:
            TOTALS.popitem(last=False)
        return TOTALS[key][0]
    return counted, values, finish


def scope_rows(indexed: Indexed) -> int:
    """Rows in the scope (statistics counts them in its own statement)."""
    counted, values, finish = row_count(indexed)
    counted = counted()
    return finish(*read(select(counted.c.scope_rows, counted.c.scope_top), values).one())
