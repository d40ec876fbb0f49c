"""A turn cut into its sentences, each to be a vector of its own, so a question about one
sentence of a long turn is compared with that sentence and not with the mean of everything the
turn says. Bench only (bench/recall_signals.py): on LoCoMo a turn's best sentence finds less
than the whole turn's one vector (43.4 % against 51.1 % of the evidence at top 10), so the app
still stores one vector per turn
(docs/memory.md "Measured on real transcripts: bench/recall_real.py").

A piece is a sentence (ended by . ! ? or a line break) of the question or of the answer; one of
fewer than MIN_WORDS words is joined to the next of its side ("Hi!", "Sure." say nothing alone),
and a side of more than MAX_PIECES sentences has its last ones joined, so a long answer costs
at most MAX_PIECES vectors (the model reads the first 256 tokens of each).
"""
import re

SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")
MIN_WORDS = 4
MAX_PIECES = 12  # per side: a turn has at most 24 vectors


def side_pieces(text: str) -> list[str]:
    pieces, short = [], ""
    for part in SENTENCE_END.split(text or ""):
        part = part.strip()
        if not part:
            continue
        part = f"{short} {part}".strip() if short else part
        if len(part.split()) < MIN_WORDS:
            short = part
            continue
        pieces.append(part)
        short = ""
    if short:
        if pieces:
            pieces[-1] = f"{pieces[-1]} {short}"
        else:
            pieces.append(short)
    if len(pieces) > MAX_PIECES:
        pieces[MAX_PIECES - 1:] = [" ".join(pieces[MAX_PIECES - 1:])]
    return pieces


def sentences(question: str, answer: str) -> list[str]:
    """The pieces of a turn, the question's first; never none (an empty turn is one blank)."""
    return [*side_pieces(question), *side_pieces(answer)] or [" "]
