"""Fusions of keyword and similarity scores compared on the signals bench/recall_signals.py kept,
per kind of question, at top 5 and 10 (the share of a question's evidence turns found), then a
grid of score fusions: the keyword weight w and the similarity floor, on the first half of the
people (tuning) and the second (held out), with the worst kind's margin over keywords alone.
Similarity is a turn's one vector (turn), its best sentence (sentence) or their mean (mean);
+ctx adds the context step (a turn next to one of the best 20 gets 0.3 of its score), then a
grid of its share and of how many hits' neighbours are read.
Exact over all of a person's turns and without the product's pool: bench/recall_real.py and
bench/recall.py measure the product itself.
Run: .venv/bin/python bench/recall_fusion.py SIGNALS.pickle [...]
"""
import pickle
import sys
from collections import defaultdict

import numpy as np

FLOOR, K = 0.2, 60


def ranked(scores: np.ndarray, ids: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """ids of the kept rows, best first, the higher id breaking ties (as best_first)."""
    order = np.lexsort((-ids, -np.round(scores, 9)))
    return ids[order][keep[order]]


def rank_of(scores, keep):
    """1-based rank among the kept rows (0 where not kept)."""
    order = np.lexsort((-np.arange(len(scores)), -scores))
    ranks = np.zeros(len(scores))
    kept = order[keep[order]]
    ranks[kept] = np.arange(1, len(kept) + 1)
    return ranks


def keyword(q, signal):
    return q["keyword"], q["keyword"] > 0


def similarity(signal):
    def f(q):
        return q[signal], np.ones(len(q[signal]), bool)
    return f


def rrf(signal, weight=0.8, floor=FLOOR):
    def f(q):
        kw, sim = q["keyword"], q[signal]
        kr, sr = rank_of(kw, kw > 0), rank_of(sim, sim >= floor)
        s = np.where(kr > 0, weight / (K + kr), 0) + np.where(sr > 0, (1 - weight) / (K + sr), 0)
        return s, s > 0
    return f


def score(signal, weight=0.5, floor=FLOOR):
    """w x BM25 / the best BM25 + (1 - w) x (cos - floor) / (best cos - floor)."""
    def f(q):
        kw, sim = q["keyword"], q[signal]
        top_k = kw.max() if kw.max() > 0 else 1
        top_s = max(sim.max() - floor, 1e-9)
        s = weight * kw / top_k + (1 - weight) * np.clip(sim - floor, 0, None) / top_s
        return s, s > 0
    return f


def zscore(signal, weight=0.5):
    """Each signal standardised over the person's turns (mean 0, sd 1), then mixed."""
    def f(q):
        kw, sim = q["keyword"], q[signal]
        zk = (kw - kw.mean()) / (kw.std() or 1)
        zs = (sim - sim.mean()) / (sim.std() or 1)
        s = weight * zk + (1 - weight) * zs
        return s, (kw > 0) | (sim >= FLOOR)
    return f


def context(method, share=0.3, hits=20):
    """The product's context step (recall.with_context): a turn right before or after one of
    the `hits` best (same conversation) gets `share` of that hit's score on top of its own."""
    def f(q):
        s, keep = method(q)
        order = np.lexsort((-q["ids"], -s))
        place = {(c, n): j for j, (c, n) in enumerate(zip(q["conversation"], q["seq"]))}
        boost = np.zeros(len(s))
        for j in order[:hits]:
            if s[j] <= 0:
                break
            for step in (-1, 1):
                n = place.get((q["conversation"][j], q["seq"][j] + step))
                if n is not None:
                    boost[n] = max(boost[n], share * s[j])
        return s + boost, keep | (boost > 0)
    return f


def scaled_keyword(q):
    top = q["keyword"].max() if q["keyword"].max() > 0 else 1
    return q["keyword"] / top, q["keyword"] > 0


def measure(questions, method):
    found = defaultdict(list)
    for q in questions:
        s, keep = method(q)
        got = ranked(s, q["ids"], keep)
        found[q["kind"]].append([len(q["wanted"] & set(got[:k].tolist())) / len(q["wanted"])
                                 for k in (5, 10)])
    return found


def pct(rows, at):
    return 100 * sum(r[at] for r in rows) / max(len(rows), 1)


def show(name, questions, methods, kinds=None):
    results = {m: measure(questions, f) for m, f in methods.items()}
    first = results[next(iter(results))]
    kinds = kinds or sorted(first)
    for at in (1, 0):
        print(f"\n{name}: evidence @{10 if at else 5}")
        print(f"{'kind':<13}" + "".join(f"{m[:13]:>14}" for m in results))
        for kind in [*kinds, "all"]:
            cells = [pct(r[kind] if kind != "all" else [x for v in r.values() for x in v], at)
                     for r in results.values()]
            print(f"{kind:<13}" + "".join(f"{c:>13.1f}%" for c in cells))
    return results


def margin(questions, method) -> tuple[float, float, float, str]:
    """(@10, @5, the worst kind's margin over keywords at either, that kind)."""
    base, found = measure(questions, lambda q: keyword(q, None)), measure(questions, method)
    per = {k: min(pct(found[k], at) - pct(base[k], at) for at in (0, 1)) for k in found}
    rows = [r for rs in found.values() for r in rs]
    worst = min(per, key=per.get)
    return pct(rows, 1), pct(rows, 0), per[worst], worst


def grid(questions) -> None:
    people = sorted({q["person"] for q in questions}, key=str)
    tuning = set(people[:len(people) // 2])
    halves = {"tuning": [q for q in questions if q["person"] in tuning],
              "held out": [q for q in questions if q["person"] not in tuning], "all": questions}
    print("\nscore fusion: @10/@5, worst kind's margin over keywords (kind)")
    for name, rows in halves.items():
        base = [r for rs in measure(rows, lambda q: keyword(q, None)).values() for r in rs]
        print(f"  keywords alone, {name}: {pct(base, 1):.1f}/{pct(base, 0):.1f}")
    for signal in ("turn", "mean"):
        for w in (0.6, 0.7, 0.8, 0.9):
            for floor in (0.1, 0.2, 0.3):
                cells = [margin(rows, score(signal, w, floor)) for rows in halves.values()]
                print(f"  {signal:<5} w {w} floor {floor}: " + " | ".join(
                    f"{name} {a:.1f}/{b:.1f} {worst:+.1f} ({kind[:10]})"
                    for name, (a, b, worst, kind) in zip(halves, cells)))
    print("\nscore fusion (turn, w 0.8, floor 0.2) with context: share, hits read")
    for share in (0.2, 0.25, 0.3, 0.4):
        for hits in (10, 20, 10_000):
            cells = [margin(rows, context(score("turn", 0.8), share, hits))
                     for rows in halves.values()]
            print(f"  share {share} hits {hits}: " + " | ".join(
                f"{name} {a:.1f}/{b:.1f} {worst:+.1f} ({kind[:10]})"
                for name, (a, b, worst, kind) in zip(halves, cells)))


def main():
    for path in sys.argv[1:]:
        with open(path, "rb") as file:
            questions = pickle.load(file)
        for q in questions:
            q["mean"] = (q["turn"] + q["sentence"]) / 2
        methods = {"keyword": lambda q: keyword(q, None), "sim-turn": similarity("turn"),
                   "sim-sent": similarity("sentence"), "sim-mean": similarity("mean"),
                   "rank 0.8": rrf("turn"), "score 0.8": score("turn", 0.8),
                   "score-mean 0.8": score("mean", 0.8), "keyword+ctx": context(scaled_keyword),
                   "score+ctx": context(score("turn", 0.8))}
        show(path, questions, methods)
        grid(questions)


if __name__ == "__main__":
    main()
