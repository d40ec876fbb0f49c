"""How keyword search asks a table's index, on either dialect: a searched table as `Indexed`,
the rows holding a word (SQLite FTS5 or PostgreSQL full text, see keyword_index.py), the scope's
rows by its tokens, rows on named dates, newest first, each query stopping at its limit.
"""
from dataclasses import dataclass, field
from typing import Callable

from sqlalchemy import and_, bindparam, cast, column, func, literal_column, or_, select, table, text
from sqlalchemy.dialects.postgresql import TSQUERY

from ...extensions import db
from .statements import newest_in


def is_postgresql() -> bool:
    """Which index answers: PostgreSQL's GIN full text, else SQLite's FTS5 tables."""
    return db.engine.dialect.name == "postgresql"


@dataclass
class Indexed:
    """One searchable table: its FTS5 index, the text PostgreSQL indexes, and the scope's rows."""
    fts_name: str
    id: object
    text: object
    created: object
    columns: tuple  # selected for each candidate: id, text parts..., vector, model (+ on_date)
    scoped: Callable  # select -> the same select joined and filtered to the session's scope
    key: tuple | None = None  # names the scope, so its row count can be kept between searches
    joined: Callable = lambda statement: statement  # what else a candidate row brings along
    values: dict = field(default_factory=dict)  # the scope's bound parameters, when it has some
    form: tuple | None = None  # names the scope's conditions: its statements are built once
    branches: tuple = ()  # the scope as disjoint (condition, in id order) pairs, walked apart
    text_columns: str = ""  # the FTS5 columns a word is looked for in (the rest say whose)
    vector: object = None  # what PostgreSQL's GIN index holds (default: the text's tsvector)
    # The scope as the index names it: (values -> its tokens, the FTS5 column / the PostgreSQL
    # lexeme's first word holding them); a search then walks only the scope's rows of a word.
    tokens: Callable | None = None
    token_column: tuple = ("", "")
    matched: Callable | None = None  # `scoped` for the rows the index found (default: scoped)
    ranged: Callable | None = None  # `scoped` for a range of ids, the newest (default: scoped)
    dated: Callable | None = None  # PostgreSQL: `scoped` for rows on dates (default: scoped)
    # PostgreSQL: the words each row keeps (a tsvector column) and `scoped` for a walk of the
    # scope's rows newest first on an index, testing each row's kept words (see walks).
    kept_words: object = None
    walked: Callable | None = None
    kept_counts: bool = False  # PostgreSQL keeps each person's word counts (word_counts.py)

    def scope_hits(self, statement, walk: bool = False):
        return (self.walked if walk else self.matched or self.scoped)(statement)

    def form_of(self, *what) -> tuple | None:
        return None if self.form is None else (self.fts_name, *self.form, *what)


def holding(indexed: Indexed, statement, name: str, walk: bool = False):
    """`statement` narrowed to rows holding the word bound as `name` (see word_value), the index
    driving, and with scope tokens only the scope's: SQLite walks the word's FTS5 entries merged
    with the scope's newest first, so a LIMIT stops it early. PostgreSQL finds them in its GIN
    index (its fast scan skipping the word's postings to the scope's) and sorts them: ordered by
    -id, which no index offers, since walking the primary key newest first computed each row's
    tsvector (a second and more per search over 10,000 turns). With `walk` (word_walks.py), the
    scope's newest rows are read instead (Indexed.walked) and each tested on its kept words."""
    if walk:  # only above an id (see word_walks.py): whatever the plan, it reads no more
        return statement.where(indexed.id > bindparam("above"), indexed.kept_words.op("@@")(
            func.plainto_tsquery(literal_column("'english'"), bindparam(name)))), indexed.id.desc()
    if is_postgresql():
        vector = indexed.vector if indexed.vector is not None else func.to_tsvector(
            literal_column("'english'"), indexed.text)
        statement = statement.where(vector.op("@@")(
            func.plainto_tsquery(literal_column("'english'"), bindparam(name))))
        if indexed.tokens is not None:  # apart, so a stop word still matches nothing
            statement = statement.where(vector.op("@@")(
                cast(bindparam("scope_lexemes"), TSQUERY)))
        return statement, -indexed.id
    fts = table(indexed.fts_name, column("rowid"))
    return (statement.join(fts, fts.c.rowid == indexed.id)
            .where(text(f"{indexed.fts_name} MATCH :{name}")), fts.c.rowid.desc())


def word_value(indexed: Indexed, word: str) -> str:
    """A word as the index is asked for it: on SQLite an FTS5 phrase (stemmed as it stores
    them) in the text columns, and with scope tokens in the scope's rows only."""
    if is_postgresql():
        return word
    found = f'{{{indexed.text_columns}}} : "{word}"' if indexed.text_columns else f'"{word}"'
    return found if indexed.tokens is None else f"{found} AND {scope_match(indexed)}"


def scope_match(indexed: Indexed) -> str:
    """The FTS5 query for the scope's rows: any of its tokens in the token column."""
    tokens = " OR ".join(f'"{token}"' for token in indexed.tokens(indexed.values))
    return f"{indexed.token_column[0]} : ({tokens})"


def scope_values(indexed: Indexed) -> dict:
    """The values holding() binds besides the word: PostgreSQL's tsquery of the scope's tokens
    (quoted lexemes; a space keeps them apart from any word)."""
    if indexed.tokens is None or not is_postgresql():
        return {}
    tokens = indexed.tokens(indexed.values)
    return {"scope_lexemes": " | ".join(f"'{indexed.token_column[1]} {token}'" for token in tokens),
            "scope_tokens": tokens}


def newest_holding(indexed: Indexed, base, name: str, limit: int, walk: bool = False):
    """`base` (ids) of the scope's rows holding the word bound as `name`, newest first."""
    rows, order = holding(indexed, base, name, walk)
    return indexed.scope_hits(rows, walk).order_by(order).limit(limit)


def newest_of(indexed: Indexed, columns, limit, *where):
    """`columns` of the scope's rows meeting `where` (on dates), newest first, up to `limit`: a
    scope made of branches (memories) walks each apart (see statements.newest_in); a person's
    turns on PostgreSQL are found on their dates index (Indexed.dated)."""
    if indexed.branches:
        return newest_in(indexed.branches, columns, indexed.id, limit, *where)
    scoped = indexed.dated if indexed.dated is not None and is_postgresql() else indexed.scoped
    return scoped(select(*columns).where(*where)).order_by(indexed.id.desc()).limit(limit)


def on_dates(indexed: Indexed, count: int):
    """Rows on any of `count` days, bound as d0_start, d0_end, ... (see date_values)."""
    return or_(*(and_(indexed.created >= bindparam(f"d{i}_start"),
                      indexed.created < bindparam(f"d{i}_end")) for i in range(count)))


def date_values(ranges) -> dict:
    return {f"d{i}_{edge}": moment for i, (start, end) in enumerate(ranges)
            for edge, moment in (("start", start), ("end", end))}


def count_of(limited):
    """How many rows `limited` (a select with a LIMIT) gives. Its order makes SQLite walk an
    index, not the scope, up to the limit; PostgreSQL's GIN index hands a word's rows over
    unordered, so the order made it fetch and sort every one of them before the limit (0.1 s a
    common word for a customer with 50,000 turns): the count is the same without it."""
    if is_postgresql():
        limited = limited.order_by(None)
    return select(func.count()).select_from(limited.subquery()).scalar_subquery()


def keep(found: dict, result) -> None:
    """Each new row, by id, as the database gave it. Rows are read by position where hundreds
    are read per search (see Indexed.columns): a Row's named access costs about a microsecond."""
    rows = result if isinstance(result, list) else result.fetchall()  # one call, not one a row
    for row in rows:
        if row[0] not in found:
            found[row[0]] = row


def walks_scope_tokens(indexed: Indexed) -> bool:
    """SQLite with scope tokens: the scope's rows can be walked in its tokens' own FTS5 entries."""
    return indexed.tokens is not None and not is_postgresql()


def rows_since(indexed: Indexed, base, first):
    """The scope's rows from id `first` on: with scope tokens on SQLite, the tokens' own FTS5
    entries (bound as scope_only, see window_values); else `base` (ids) in the scope, checked by
    the person each row records (Indexed.ranged), not by a join for each of the shop's ids."""
    if walks_scope_tokens(indexed):
        fts = table(indexed.fts_name, column("rowid"))
        return select(fts.c.rowid).where(text(f"{indexed.fts_name} MATCH :scope_only"),
                                         fts.c.rowid >= first)
    return (indexed.ranged or indexed.scoped)(base.where(indexed.id >= first))


def window_values(indexed: Indexed) -> dict:
    """The value rows_since binds besides the scope's own."""
    return {"scope_only": scope_match(indexed)} if walks_scope_tokens(indexed) else {}
