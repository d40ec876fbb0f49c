"""Keyword relevance: BM25 with the term statistics of the session's own scope, computed here.

The database only finds the candidates (FTS5, or PostgreSQL full text) and counts, within the
scope, the rows holding each word; the score is computed in Python, so SQLite and PostgreSQL rank
alike (ts_rank has no IDF at all) and one person's frequent words are not rare because other
people's rows lack them. A date named in the question counts as one more term.
"""
import re
from dataclasses import dataclass
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
PREFIX_ROOM = 16  # letters of a stem's prefix compared; spaces after the buffer let them be read


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


@dataclass
class Candidate:
    id: int
    text: str
    on_date: bool = False  # whether it falls on a date the question names


def bm25_scores(words: list[str], statistics: ScopeStatistics,
                candidates: list[Candidate]) -> dict[int, float]:
    """{id: score} of the candidates with any hit (a query word, or a date it names)."""
    weights = {stem(w): idf(statistics.rows, statistics.holding.get(w, 0)) for w in words
               if statistics.holding.get(w, 0)}
    date_weight = idf(statistics.rows, statistics.on_date) if statistics.on_date else 0.0
    if not candidates:
        return {}
    texts = [c.text or "" for c in candidates]
    lengths, counts = (ascii_counts if all(map(str.isascii, texts)) else token_counts)(
        texts, list(weights))
    average = int(lengths.sum()) / len(texts) or 1.0
    norm = K1 * (1 - B + B * lengths / average)
    scores = np.zeros(len(texts))
    for term, weight in weights.items():  # the terms in turn, as a sum by hand adds them
        tf = counts[term]
        scores += weight * tf * (K1 + 1) / (tf + norm)
    if date_weight:
        on_date = np.fromiter((c.on_date for c in candidates), bool, len(candidates))
        scores[on_date] += date_weight * (K1 + 1) / (1 + norm[on_date])
    hit = np.flatnonzero(scores > 0)
    return dict(zip([candidates[i].id for i in hit.tolist()], scores[hit].tolist()))


def ascii_counts(texts: list[str], terms: list[str]) -> tuple[np.ndarray, dict]:
    """(tokens per text, {term: its frequency in each text}) of ASCII texts, without a Python
    object per word: the texts are lowered and split in one buffer, in numpy, and only the words
    that can stem to a query term are read: a word's stem, but for its last two letters (or its
    first letter), begins the word (checked on 755,000 distinct words)."""
    buffer = " ".join(texts).encode().translate(ASCII_SPLIT) + b" " * PREFIX_ROOM
    sizes = np.fromiter(map(len, texts), np.int64, len(texts))
    starts = np.concatenate(([0], np.cumsum(sizes + 1)[:-1]))  # each text's first byte
    letters = np.frombuffer(buffer, np.uint8)
    edges = np.flatnonzero(np.diff(np.concatenate(([False], letters != 32, [False]))))
    word_starts, word_ends = edges[0::2], edges[1::2]
    lengths = np.diff(np.searchsorted(word_starts, [*starts.tolist(), len(buffer)]))
    counts = {term: np.zeros(len(texts), np.int64) for term in terms}
    every = np.arange(len(word_starts))
    picked = [every[:0]]
    for prefix in shortest({t[:max(len(t) - 2, 1)][:PREFIX_ROOM].encode() for t in terms
                            if t.isascii()}):
        chosen = every
        for offset, byte in enumerate(prefix):  # a shorter word meets a space: never a letter
            chosen = chosen[letters[word_starts[chosen] + offset] == byte]
        picked.append(chosen)
    chosen = np.concatenate(picked)
    at, term_of, found = word_starts[chosen], {}, {term: [] for term in terms}
    for position, end in zip(at.tolist(), word_ends[chosen].tolist()):
        word = buffer[position:end]
        term = term_of.get(word)
        if term is None:
            term = term_of[word] = stem(word.decode())
        if term in found:
            found[term].append(position)
    for term, positions in found.items():
        if positions:
            counts[term] = np.bincount(np.searchsorted(starts, positions, side="right") - 1,
                                       minlength=len(texts))
    return lengths, counts


def shortest(prefixes: set[bytes]) -> list[bytes]:
    """The prefixes that no other one begins: each word is then picked once."""
    return [p for p in prefixes if not any(p != q and p.startswith(q) for q in prefixes)]


def token_counts(texts: list[str], terms: list[str]) -> tuple[np.ndarray, dict]:
    """ascii_counts() of any texts, word by word: each text's tokens (tokens_of), and a term's
    frequency the count of its spellings (see spellings)."""
    documents = [tokens_of(text) for text in texts]
    forms = spellings(terms, documents)
    lengths = np.fromiter(map(len, documents), np.int64, len(documents))
    return lengths, {term: np.fromiter((sum(map(tokens.count, forms[term])) for tokens in
                                        documents), np.int64, len(documents)) for term in terms}


def spellings(terms: list[str], documents: list[list]) -> dict[str, list]:
    """{query term: the words of the documents stemming to it}: each distinct word is stemmed
    once, and a term's frequency is the count of its spellings, not of every word stemmed."""
    forms = {term: [] for term in terms}
    for word in set().union(*documents) if terms else ():
        term = stem(word.decode() if type(word) is bytes else word)
        if term in forms:
            forms[term].append(word)
    return forms


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
