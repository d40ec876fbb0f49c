"""Conversation search: hybrid ranking over a person's own past turns (question + answer), the
active path's, with scores fused and the turns next to the best hits sharing their score
(recall.score_fused, recall.with_context; NIMBUS_HISTORY_FUSION=rank: memories' rank fusion);
the branches they left are searched apart and marked (branch_hits.py)."""
from sqlalchemy import bindparam, func, or_, select
from sqlalchemy.orm import aliased

from ...extensions import db
from ...models import Conversation, Turn
from ...pacing import Pace
from .branch_hits import search_branches
from .embeddings import QueryEmbedding, embed_many
from .keyword_tables import own_turns
from .keywords import turn_matches
from ..models import TurnVector
from .recall import SCORE, rank_hybrid, similarity_alone_may_place
from .statements import built, read

ANSWER_CHARS = 300
EMBED_BATCH = 256  # turns per model batch and commit when many are embedded
NEWEST_WINDOWS = (4, 32)  # id windows tried for a person's newest turns, times the limit


def turn_text(turn: Turn) -> str:
    return f"{turn.question}\n{turn.answer}"


def store_turn_vector(turn: Turn, config) -> bool:
    """Embed one finished turn for similarity search; False when search is off or it failed."""
    return store_turn_vectors([turn], config) == 1


def store_turn_vectors(turns: list[Turn], config) -> int:
    """Embed finished turns in batched model runs and one commit; how many got a vector."""
    vectors = embed_many(config, [turn_text(turn) for turn in turns])
    if not vectors:
        return 0
    existing = {row.turn_id: row for row in db.session.scalars(
        select(TurnVector).where(TurnVector.turn_id.in_([turn.id for turn in turns])))}
    for turn, (data, model) in zip(turns, vectors):
        row = existing.get(turn.id) or TurnVector(turn_id=turn.id)
        row.embedding, row.embedding_model = data, model
        db.session.add(row)
    db.session.commit()
    return len(vectors)


def embed_turns_in_batches(turn_ids: list[int], config, batch: int = EMBED_BATCH):
    """Embed these turns `batch` at a time, one commit each: (turns read, turns embedded) per
    batch, so a caller can show progress (`memories embed`) or just add them up (an import)."""
    pace = Pace()  # the model's runs give way to replies being written
    for start in range(0, len(turn_ids), batch):
        chunk = turn_ids[start:start + batch]
        rows = db.session.scalars(select(Turn).where(Turn.id.in_(chunk))).all()
        yield len(rows), store_turn_vectors(rows, config)
        pace.batch_done()


def newest_turns(user, limit: int) -> list:
    """The person's `limit` newest finished turns, newest first, each as (id, embedding,
    embedding_model), the vector joined after the limit. They lie in many conversations, so
    ordering them all read and sorted every turn the person ever had; instead only turns above an
    id are read (index ix_turns_newest), the id lowered until `limit` are found and at last
    dropped: when a window holds `limit` of them no older turn can be among the newest."""
    values = {"scope_user": user.id, "scope_tenant": user.tenant_id, "row_limit": limit}
    top = read(built(("newest turn",), lambda: select(func.max(Turn.id)))).scalar()
    rows = None
    for times in NEWEST_WINDOWS:
        if top is None or top - times * limit < 1:
            break
        rows = read(built(("newest turns", "above"), lambda: newest(True)),
                    {**values, "above": top - times * limit}).all()
        if len(rows) == limit:
            break
        rows = None
    if rows is None:
        rows = read(built(("newest turns",), lambda: newest(False)), values).all()
    return sorted(rows, key=lambda row: row[0], reverse=True)  # no sorter copying vectors


def newest(above: bool):
    """A person's newest finished turns (bound as in own_turns, and row_limit; with `above`,
    only those above the bound id), with their vectors joined after the limit."""
    found = (own_turns(select(Turn.id)).where(*[Turn.id > bindparam("above")] if above else [])
             .order_by(Turn.id.desc()).limit(bindparam("row_limit")).subquery())
    return (select(found.c.id, TurnVector.embedding, TurnVector.embedding_model)
            .outerjoin(TurnVector, TurnVector.turn_id == found.c.id))


def turns_beside():
    """The finished turns right before and after each of the bound ids, in the same conversation
    (uq_turn_seq finds them), with their vectors: (id, the bound turn's id, embedding, model).
    The bound turns are the person's own, found by their search, and so are their neighbours."""
    hit = aliased(Turn)
    return (select(Turn.id, hit.id.label("beside"), TurnVector.embedding,
                   TurnVector.embedding_model)
            .join(hit, (hit.conversation_id == Turn.conversation_id)
                  & or_(Turn.seq == hit.seq - 1, Turn.seq == hit.seq + 1))
            .outerjoin(TurnVector, TurnVector.turn_id == Turn.id)
            .where(hit.id.in_(bindparam("ids", expanding=True)), Turn.outcome != "pending"))


def neighbours(ids: list[int]) -> list:
    return read(built(("turns beside",), turns_beside), {"ids": ids}).all() if ids else []


def shown_turns():
    """The columns a found turn is shown with (not whole turns), of the bound ids, if the bound
    person's."""
    return (select(Turn.id, Turn.seq, Turn.question, Turn.answer, Turn.created_at,
                   Conversation.id.label("conversation_id"), Conversation.title)
            .join(Conversation, Conversation.id == Turn.conversation_id)
            .where(Turn.id.in_(bindparam("ids", expanding=True)),
                   Conversation.user_id == bindparam("scope_user")))


def describe_turn(turn) -> str:
    """A found turn in words: its question, answer, date and its conversation's title."""
    answer = turn.answer if len(turn.answer) <= ANSWER_CHARS else turn.answer[:ANSWER_CHARS] + "…"
    return (f"on {turn.created_at:%Y-%m-%d} (“{turn.title}”) you asked “{turn.question}” "
            f"and I answered “{answer}”")


def search_turns(user, query: str, config, limit: int = 5) -> tuple[list[dict], str]:
    """This person's own turns best first (never anybody else's), and the mode that ranked them;
    after them, at most two from branches they left, marked `inactive_branch` (branch_hits.py)."""
    embedding = QueryEmbedding(config, query)  # computed while the candidates are found
    pool = max(config["NIMBUS_MEMORY_CANDIDATE_POOL"], 1)
    scores, matches = turn_matches(user, query, pool)
    fusion = config.get("NIMBUS_HISTORY_FUSION") or SCORE
    recent = newest_turns(user, max(pool // 2, 1)) if similarity_alone_may_place(
        len(scores), limit, config, scores, fusion) else []

    def vectors(ids: list[int]):
        """Both candidate lists came with their vectors: no further query. Each turn once, by
        id, as a query for them by id returned them (the similarities are the same to the bit)."""
        wanted = set(ids)
        return sorted({row[0]: row for row in [*matches, *recent] if row[0] in wanted
                       and row[1] is not None}.values(), key=lambda row: row[0])
    ranked, mode = rank_hybrid(embedding, [], [row[0] for row in recent], vectors, config, limit,
                               keyword_scores=scores, fusion=fusion, beside=neighbours)
    rows = {row.id: row for row in read(built(("shown turns",), shown_turns), {
        "ids": [r.id for r in ranked], "scope_user": user.id})}
    results = []
    for r in ranked:
        turn = rows[r.id]
        results.append({"conversation_id": turn.conversation_id, "title": turn.title,
                        "turn": turn.seq, "question": turn.question, "answer": turn.answer,
                        "created_at": turn.created_at.isoformat(timespec="seconds"),
                        "content": describe_turn(turn), "why": r.why, "inactive_branch": False})
    return results + search_branches(user, query), mode
