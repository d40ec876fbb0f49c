"""Keyword search within a scope, in the order a search runs: scored() reads the query's dates
and words, statistics() counts the scope's rows and each word's (scope_counts.py keeps the row
count between searches), candidates() reads the rows holding the words, bm25.py scores them.
memory_matches() and turn_matches() search the tables of keyword_tables.py; index_queries.py
asks each dialect's index (SQLite FTS5, PostgreSQL full text; keyword_index.py makes them).
"""
import re

from sqlalchemy import bindparam, func, select

from ...local_time import reader_zone, stored, wall_clock_now
from .bm25 import Candidate, ScopeStatistics, bm25_scores
from .dates import find_dates
from .index_queries import (Indexed, count_of, date_values, holding, is_postgresql, keep,
                            newest_holding, newest_of, on_dates, rows_since, scope_values,
                            window_values, word_value)
from .keyword_tables import memories_indexed, turns_indexed
from .scope_counts import row_count
from .statements import built, read
from .word_counts import counted_or_kept
from .word_walks import newest_walked, since_newest_hits, since_walked, walks

STOPWORDS = set("""a an the is are was were be been am i me my we our you your it its to of in on
for and or but with what which who whom how when where why do does did can could would should will
please tell know about that this there here any some have has had not no so if as at by from""".split())
MAX_QUERY_WORDS = 12
SAYING = r"(?:\w+\s+)?(?:said|say|told|tell|recommend\w*|suggest\w*|advis\w*|mention\w*|explain\w*)\b"
ASSISTANT_SAID = re.compile(rf"\b(?:you|nimbus|the assistant)\s+{SAYING}", re.I)
CUSTOMER_SAID = re.compile(rf"\bI\s+{SAYING}", re.I)
COMMON_WORD_MIN_ROWS = 1000  # below this, scoring every match is cheap: keep every word
COUNT_CAP = 1000  # a word's rows are counted up to this many: the cost stays flat past it
# Past the cap a word's count is estimated from the scope's newest rows back to its COUNT_CAP-th
# hit, counted up to this many (see beyond_the_cap).
ESTIMATE_WINDOW = 20 * COUNT_CAP


def query_words(query: str) -> list[str]:
    found = [w for w in re.findall(r"\w+", (query or "").lower()) if w not in STOPWORDS]
    return list(dict.fromkeys(found))[:MAX_QUERY_WORDS]


def scored(indexed: Indexed, query: str, limit: int, text_of) -> tuple[dict[int, float], dict]:
    """({id: BM25 score with the scope's statistics}, {id: candidate row}) for the query."""
    zone = reader_zone()  # "on March 14" is the reader's March 14
    ranges, rest = find_dates(query, wall_clock_now(zone))
    ranges = [(stored(start, zone), stored(end, zone)) for start, end in ranges]
    words = query_words(rest)
    if not words and not ranges:
        return {}, {}
    stats = statistics(indexed, words, ranges)
    words = [w for w in words if stats.holding.get(w)]
    dated = ranges if stats.on_date else []
    rows = candidates(indexed, words, dated, limit, stats.holding, stats.rows)
    pool = [Candidate(row[0], text_of(row), bool(row[-1]) if dated else False) for row in rows]
    return bm25_scores(words, stats, pool), {row[0]: row for row in rows}


def statistics(indexed: Indexed, words: list[str], ranges) -> ScopeStatistics:
    """The scope's row count, how many of its rows hold each word and how many fall on the
    dates: one statement, each count driven by the index and stopping at COUNT_CAP. A word that
    reaches the cap in a scope larger than it is estimated (beyond_the_cap), so IDF and the rule
    that leaves out words held by over half the scope hold at any size. A person's turns on
    PostgreSQL read each word's count as the database keeps it (word_counts.py): exact, with no
    cap and no estimate (counting to the cap and estimating past it was 50 to 600 ms a question
    for a person with 50,000 turns)."""
    counted, values, finish = row_count(indexed)
    kept = indexed.kept_counts and is_postgresql()

    def build():
        base = select(indexed.id).select_from(indexed.id.table)
        counts = []
        for i in range(len(words)):
            count = count_of(newest_holding(indexed, base, f"w{i}", COUNT_CAP))
            counts += counted_or_kept(f"w{i}", count) if kept else [count]
        if ranges:
            counts.append(count_of(newest_of(indexed, [indexed.id], COUNT_CAP,
                                             on_dates(indexed, len(ranges)))))
        rows = counted()
        return select(rows.c.scope_rows, rows.c.scope_top, *counts)
    statement = built(indexed.form_of("statistics", len(words), len(ranges), "known" in values,
                                      kept), build)
    asked = {**scope_values(indexed), **{f"w{i}": word_value(indexed, word)
                                         for i, word in enumerate(words)}}
    rows, top, *found = read(statement, {**values, **date_values(ranges), **asked}).one()
    total = finish(rows, top)
    exact = [False] * len(words)
    if kept:  # (count, whether kept) a word: a kept count is exact, never capped
        exact = found[1:2 * len(words):2]
        found = [*found[0:2 * len(words):2], *found[2 * len(words):]]
    full = [i for i, n in enumerate(found[:len(words)]) if n >= COUNT_CAP and not exact[i]]
    if full and total > COUNT_CAP:
        for i, n in beyond_the_cap(indexed, full, total, asked).items():
            found[i] = n
    half = total // 2 + 1 if total >= COMMON_WORD_MIN_ROWS else None
    held = dict(zip(words, found))
    total = max([total, *found])  # a count kept from before a purge never undercuts a word's
    stats = ScopeStatistics(total, held, found[-1] if ranges else 0)
    if half:  # over half the rows: IDF below ln 2, and costly to score
        stats.holding = {w: n for w, n in held.items() if n < half}
    return stats


def beyond_the_cap(indexed: Indexed, full: list[int], total: int, asked: dict) -> dict[int, int]:
    """{word position: estimated rows holding it} for the words counted to COUNT_CAP: the cap
    times the scope's rows over its rows since the word's COUNT_CAP-th newest hit (a sample of
    the newest rows, exact when the word is spread evenly over the scope's history; a word whose
    share drifts over time is counted at its recent share). That window is counted up to
    ESTIMATE_WINDOW rows: a word held by fewer than one in ESTIMATE_WINDOW / COUNT_CAP of the
    newest rows counts as that share, an overestimate that only lowers the IDF of a word far
    from the over-half rule. Two index walks per word, each bounded, whatever the scope's size:
    on SQLite the window is the scope's tokens' own FTS5 entries (0.6 ms for 2,500 rows, against
    12 ms through the conversations' index), which also count a pending turn or a deleted
    conversation's: it is an estimate. On PostgreSQL a person's newest turns are walked instead,
    once for all the words, each turn tested on its kept words (word_walks.since_walked): the
    GIN index's hits were fetched and sorted whole, 0.3 to 1.5 s a question for a person with
    50,000 turns. The same counts."""
    walked = indexed.walked is not None and is_postgresql()

    def since(i: int):
        base = select(indexed.id).select_from(indexed.id.table)
        hits = newest_holding(indexed, base, f"w{i}", COUNT_CAP).subquery()
        kth = select(func.min(hits.c[indexed.id.name])).scalar_subquery()
        return count_of(rows_since(indexed, base, kth).limit(ESTIMATE_WINDOW))

    def build():
        if walked:
            return since_newest_hits(indexed, [f"w{i}" for i in full], COUNT_CAP,
                                     ESTIMATE_WINDOW)
        return select(*(since(i) for i in full))
    statement = built(indexed.form_of("beyond the cap", tuple(full), walked), build)
    values = {**indexed.values, **asked, **window_values(indexed)}
    counted = (since_walked(indexed, statement, values, total, ESTIMATE_WINDOW) if walked
               else read(statement, values).one())
    return {i: max(COUNT_CAP, min(total, round(COUNT_CAP * total / max(n, COUNT_CAP))))
            for i, n in zip(full, counted)}


def candidates(indexed: Indexed, words: list[str], ranges, limit: int,
               held: dict[str, int] | None = None, rows: int = 0) -> list:
    """Rows of the scope holding a query word, the rarest word's first and each word's newest
    first, `limit` in all; then rows on the named dates (newest first): each as (id, *text
    parts, ..., and on_date when the question names dates: whether the row falls on one, decided
    by the database as it counts them, since parsing each date in Python cost more than reading
    the row). Each query stops at its limit, whatever the size of the scope; a word held by
    many of the scope's `rows` is found by walking them newest first (index_queries.walks)."""
    columns = (*indexed.columns, on_dates(indexed, len(ranges)).label("on_date")
               ) if ranges else indexed.columns
    dated = {**date_values(ranges), **scope_values(indexed)}

    def holding_the_word(walk: bool):
        statement, newest_first = holding(indexed, select(*columns), "word", walk)
        return (indexed.joined(indexed.scope_hits(statement, walk)).order_by(newest_first)
                .limit(bindparam("row_limit")))

    def on_the_dates():
        return indexed.joined(newest_of(indexed, columns, bindparam("row_limit"),
                                        on_dates(indexed, len(ranges))))
    found = {}
    for word in sorted(words, key=lambda w: (held or {}).get(w, 0)):
        if len(found) >= limit:
            break
        count, wanted = (held or {}).get(word, 0), limit - len(found)
        values = {**indexed.values, **dated, "word": word_value(indexed, word),
                  "row_limit": wanted}
        walked = newest_walked(indexed, count, wanted, built(indexed.form_of(
            "candidates", len(ranges), "walked"), lambda: holding_the_word(True)), values
        ) if walks(indexed, count, rows, wanted) else None
        keep(found, walked if walked is not None else read(built(indexed.form_of(
            "candidates", len(ranges)), lambda: holding_the_word(False)), values))
    if ranges:
        keep(found, read(built(indexed.form_of("on dates", len(ranges)), on_the_dates), {
            **indexed.values, **dated, "row_limit": limit}))
    return list(found.values())


def memory_matches(condition, query: str, limit: int, key: tuple | None = None,
                   values: dict | None = None, form: tuple | None = None, branches: tuple = ()
                   ) -> tuple[dict[int, float], list]:
    """({id: keyword score}, [(id, embedding, embedding_model)]) of the memories meeting
    `condition` (the session's scope, named by `key`) that match the query: the vectors come
    along for free."""
    scores, rows = scored(memories_indexed(condition, key, values, form, branches), query, limit,
                          lambda row: row[1])  # (id, content, embedding, embedding_model, ...)
    return scores, [(row[0], row[2], row[3]) for row in rows.values()]


def turn_matches(user, query: str, limit: int) -> tuple[dict[int, float], list]:
    """({turn id: keyword score}, [(id, embedding, embedding_model)]) of this person's own
    finished turns matching the query: the vectors come along, as with memory_matches. A question
    about who said it ("what did you suggest…", "what did I tell you…") counts the words of that
    speaker's side twice (a BM25F-style field weight)."""
    text_of = asked_and_answered
    if ASSISTANT_SAID.search(query or ""):
        query = re.sub(r"\b(?:nimbus|assistant)\b", " ", query, flags=re.I)
        text_of = answer_twice
    elif CUSTOMER_SAID.search(query or ""):
        text_of = question_twice
    scores, rows = scored(turns_indexed(user), query, limit, text_of)
    return scores, [(row[0], row[3], row[4]) for row in rows.values()]


# A turn's candidate row is (id, question, answer, embedding, embedding_model, ...).
def asked_and_answered(row) -> str:
    return f"{row[1]}\n{row[2]}"


def answer_twice(row) -> str:
    return f"{row[1]}\n{row[2]}\n{row[2]}"


def question_twice(row) -> str:
    return f"{row[1]}\n{row[1]}\n{row[2]}"


def turn_scores(user, query: str, limit: int) -> dict[int, float]:
    """{turn id: keyword score} of this person's own finished turns matching the query."""
    return turn_matches(user, query, limit)[0]
