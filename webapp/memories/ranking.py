"""Keyword relevance: BM25 with the term statistics of the session's own scope, computed here.

The database only finds the candidates (FTS5, or PostgreSQL full text) and counts, within the
scope, the rows holding each word; the score is computed in Python, so SQLite and PostgreSQL rank
alike (ts_rank has no IDF at all) and one person's frequent words are not rare because other
people's rows lack them. A date named in the question counts as one more term.
"""
import re
from dataclasses import dataclass, field
from functools import lru_cache
from math import log

import numpy as np
import Stemmer

K1, B = 1.2, 0.75  # the usual BM25 constants
# Scores rounded to nine places tie, so two closer than this may tie without being equal.
NEAR = 2e-9
WORD = re.compile(r"\w+")
ASCII_WORD = re.compile(r"\w+", re.ASCII)  # the same words in ASCII text, without Unicode lookups
# ASCII text in one pass: capitals lowered, every other byte but a word character a space.
ASCII_SPLIT = bytes(c + 32 if 65 <= c <= 90 else c if c < 128 and (chr(c).isalnum() or c == 95)
                    else 32 for c in range(256))
_stemmer = Stemmer.Stemmer("english")


@lru_cache(maxsize=50_000)
def stem(word: str) -> str:
    return _stemmer.stemWord(word)


def words_of(text: str) -> list[str]:
    lowered = (text or "").lower()
    return (ASCII_WORD if lowered.isascii() else WORD).findall(lowered)


def tokens_of(text: str) -> list:
    """words_of() for scoring: as bytes from ASCII text (a translate and a split, no regex, no
    lower()), as str from any other; a term counts the spellings of either kind."""
    if text and text.isascii():
        return text.encode().translate(ASCII_SPLIT).split()
    return WORD.findall((text or "").lower())


def terms(text: str) -> list[str]:
    return [stem(w) for w in words_of(text)]


def idf(rows: int, holding: int) -> float:
    """Never negative, small for a word most rows hold (the Lucene form of BM25's IDF)."""
    return log(1 + (rows - holding + 0.5) / (holding + 0.5))


@dataclass
class ScopeStatistics:
    rows: int  # rows in the scope
    holding: dict[str, int]  # query word -> rows of the scope holding it
    on_date: int = 0  # rows of the scope on the dates the question names
    dates: list = field(default_factory=list)  # (start, end) ranges from the question


@dataclass
class Candidate:
    id: int
    text: str
    created_at: object = None


def bm25_scores(words: list[str], statistics: ScopeStatistics,
                candidates: list[Candidate]) -> dict[int, float]:
    """{id: score} of the candidates with any hit (a query word, or a date it names)."""
    weights = {stem(w): idf(statistics.rows, statistics.holding.get(w, 0)) for w in words
               if statistics.holding.get(w, 0)}
    date_weight = idf(statistics.rows, statistics.on_date) if statistics.on_date else 0.0
    documents = [(c, tokens_of(c.text)) for c in candidates]
    forms = spellings(weights, documents)
    average = sum(len(t) for _, t in documents) / max(len(documents), 1) or 1.0
    spelled = [(weight, forms[term]) for term, weight in weights.items()]
    scores = {}
    for candidate, tokens in documents:
        norm = K1 * (1 - B + B * len(tokens) / average)
        score = 0.0
        for weight, spelling in spelled:
            tf = (tokens.count(spelling[0]) if len(spelling) == 1
                  else sum(map(tokens.count, spelling)))
            if tf:
                score += weight * tf * (K1 + 1) / (tf + norm)
        if date_weight and within(candidate.created_at, statistics.dates):
            score += date_weight * (K1 + 1) / (1 + norm)
        if score > 0:
            scores[candidate.id] = score
    return scores


def spellings(weights: dict[str, float], documents) -> dict[str, list]:
    """{query term: the words of the documents stemming to it}: each distinct word is stemmed
    once, and a term's frequency is the count of its spellings, not of every word stemmed."""
    forms = {term: [] for term in weights}
    for word in set().union(*(tokens for _, tokens in documents)) if weights else ():
        term = stem(word.decode() if type(word) is bytes else word)
        if term in forms:
            forms[term].append(word)
    return forms


def within(moment, ranges) -> bool:
    return moment is not None and any(start <= moment < end for start, end in ranges)


def best_first(scores: dict[int, float]) -> list[int]:
    """Relevance first; recency (the higher id) only breaks ties; scores equal to nine places tie
    (a fused score computed two ways differs in its last bits). Sorted in numpy by score, then
    id: the same order, except within a run of scores less than NEAR apart and not all equal,
    which is sorted again by the rounded score."""
    if len(scores) < 2:
        return list(scores)
    ids = np.fromiter(scores.keys(), np.int64, len(scores))
    values = np.fromiter(scores.values(), np.float64, len(scores))
    order = np.lexsort((-ids, -values))
    ranked = values[order]
    if not np.isfinite(ranked).all():
        return exactly_best_first(scores)
    best, gaps = ids[order].tolist(), ranked[:-1] - ranked[1:]
    close = gaps <= NEAR
    if not (close & (gaps != 0)).any():
        return best
    start = 0
    for end in [*np.flatnonzero(~close).tolist(), len(best) - 1]:  # runs end where a gap is wide
        if end > start and (gaps[start:end] != 0).any():
            best[start:end + 1] = exactly_best_first({i: scores[i] for i in best[start:end + 1]})
        start = end + 1
    return best


def exactly_best_first(scores: dict[int, float]) -> list[int]:
    return [-negated for _, negated in sorted([(-round(score, 9), -i)
                                               for i, score in scores.items()])]
