"""Conversation search on the branches not taken: regenerated-away answers and edited-away
questions, found by their words and marked, so such a hit never passes for what was said.

The turns index (keyword_index.py) holds the active path only; a branch left is kept whole in
turn_alternatives (webapp/branches.py), read here for the person's newest conversations' branches.
"""
import json
import re
from datetime import datetime

from sqlalchemy import Text, cast, func, or_, select

from ...extensions import db
from ...models import Conversation, TurnAlternative
from .keywords import query_words

BRANCH_HITS = 2  # at most this many hits from branches not taken, after the active path's
BRANCHES_READ = 50  # the person's newest kept branches holding a word, looked through
ANSWER_CHARS = 300
SUFFIXES = ("ing", "ed", "es", "s", "ly")
# Said to the customer as the other hits are ("you asked", "I answered"): the offline model
# quotes a hit as it is, and a real one reads the same words.
WHY = {"answer": "an answer you had me regenerate", "question": "a question you edited"}


def stem(word: str) -> str:
    """A word without a common ending ("returned" → "return"), so its forms match."""
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[:-len(suffix)]
    return word


def branch_turns(kind: str, branch: dict):
    """(turn, kind, whether its question is the active one's) for every turn of a kept branch
    and of the branches kept within it."""
    for i, turn in enumerate(branch.get("turns") or []):
        yield turn, kind, i == 0 and kind == "answer"
    for inner in branch.get("alternatives") or []:
        yield from branch_turns(inner.get("kind", "answer"), inner.get("branch") or {})


def holding_a_word(stems: list[str]):
    """Only the branches whose stored JSON holds one of the words somewhere (as written, or as
    JSON escapes it), so the others are never decoded: a cheap filter, the words are then
    looked for in each turn's question and answer."""
    stored = func.lower(cast(TurnAlternative.branch, Text))
    forms = {form for one in stems for form in (one, json.dumps(one)[1:-1])}
    return or_(*(stored.contains(form, autoescape=True) for form in sorted(forms)))


def search_branches(user, query: str, limit: int = BRANCH_HITS) -> list[dict]:
    """This person's turns on branches not taken that hold the query's words, most words first,
    each marked `inactive_branch`; the question of a regenerated answer is the shown turn's own,
    so only that answer's words count there."""
    stems = [stem(w) for w in query_words(query)]
    if not stems:
        return []
    patterns = [re.compile(rf"\b{re.escape(one)}", re.I) for one in stems]
    rows = db.session.execute(
        select(TurnAlternative.conversation_id, TurnAlternative.kind, TurnAlternative.branch,
               Conversation.title)
        .join(Conversation, Conversation.id == TurnAlternative.conversation_id)
        .where(Conversation.user_id == user.id, Conversation.tenant_id == user.tenant_id,
               Conversation.deleted_at.is_(None), holding_a_word(stems))
        .order_by(TurnAlternative.id.desc()).limit(BRANCHES_READ)).all()
    found = []
    for row in rows:
        for turn, kind, same_question in branch_turns(row.kind, row.branch or {}):
            if turn.get("outcome") == "pending" or not isinstance(turn.get("seq"), int):
                continue
            question, answer = str(turn.get("question") or ""), str(turn.get("answer") or "")
            text = answer if same_question else f"{question}\n{answer}"
            words = sum(1 for pattern in patterns if pattern.search(text))
            if words:
                found.append((words, str(turn.get("created_at") or ""),
                              hit(row, turn, kind, question, answer, words)))
    found.sort(key=lambda one: (one[0], one[1]), reverse=True)
    return [one for _, _, one in found[:limit]]


def hit(row, turn: dict, kind: str, question: str, answer: str, words: int) -> dict:
    """A found turn of a branch not taken, shaped as conversation search's hits, marked."""
    created = datetime.fromisoformat(turn["created_at"]) if turn.get("created_at") else None
    short = answer if len(answer) <= ANSWER_CHARS else answer[:ANSWER_CHARS] + "…"
    when = f"on {created:%Y-%m-%d} " if created else ""
    return {"conversation_id": row.conversation_id, "title": row.title, "turn": turn["seq"],
            "question": question, "answer": answer,
            "created_at": created.isoformat(timespec="seconds") if created else "",
            "content": (f"on a branch not taken ({WHY.get(kind, WHY['answer'])}; not what that "
                        f"conversation says now): {when}(“{row.title}”) you asked “{question}” "
                        f"and I answered “{short}”"),
            "why": f"on another branch: {words} of the query's words", "inactive_branch": True}
