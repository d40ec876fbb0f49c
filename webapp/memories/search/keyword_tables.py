"""The tables keyword search walks, each as `Indexed`: the session's memories (their scope
written in, or bound with its tokens) and a person's finished turns (bound by owner).
"""
from dataclasses import replace
from functools import lru_cache

from sqlalchemy import ARRAY, Integer, Text, any_, bindparam, cast, literal_column, select

from ...models import Conversation, Turn
from ..models import Memory, TurnVector
from .index_queries import Indexed, is_postgresql
from .keyword_index import (POSTGRES_MEMORY_VECTOR, POSTGRES_OWNER, POSTGRES_SCOPE_TOKEN,
                            POSTGRES_TURN_VECTOR, session_tokens)


def memories_indexed(condition, key: tuple | None = None, values: dict | None = None,
                     form: tuple | None = None, branches: tuple = ()) -> Indexed:
    """The session's memories: `condition` with its values written in, or, with `form` (see
    SessionScope.bound), with the bound `values`; `branches`, the same condition in parts."""
    return Indexed("memories_fts", Memory.id, Memory.content, Memory.created_at,
                   (Memory.id, Memory.content, Memory.embedding, Memory.embedding_model),
                   lambda statement: statement.where(condition), key, values=values or {},
                   form=form, branches=tuple(branches), text_columns="content",
                   vector=literal_column(POSTGRES_MEMORY_VECTOR.format(t="memories.")),
                   tokens=memory_tokens if values and "scope_tenant" in values else None,
                   token_column=("scope", "scope"),
                   matched=memories_by_token if values and "scope_tenant" in values
                   and is_postgresql() else None)


def memories_by_token(statement):
    """PostgreSQL: the session's scope for memories its GIN index found, checked on each row's
    own columns as its token (one per (memorable, subject) pairing, the same pairings as the
    scope's branches). Written as the branches, the scope was the cheaper way in for the planner,
    which then computed the tsvector of every memory in it (9 ms for 250; 5,000 at a busy
    customer of a million-turn shop); as a token it is a filter on the index's hits."""
    return statement.where(literal_column(POSTGRES_SCOPE_TOKEN.format(t="memories.")) == any_(
        cast(bindparam("scope_tokens"), ARRAY(Text))))


def memory_tokens(values: dict) -> list[str]:
    """The index's tokens of a session's scope bound as SessionScope.bound() binds it."""
    return session_tokens(values["scope_tenant"], values.get("scope_subject"),
                          values.get("scope_orders"))


# A turn's text as ix_turns_fulltext indexes it (keyword_index.py): the space is written into the
# SQL, since a bound one makes a different expression, which the index cannot serve.
TURN_TEXT = Turn.question + literal_column("' '") + Turn.answer


# How a turn's words are looked up (the owner aside): what any search of turns passes to Indexed.
TURN_INDEX = {"text_columns": "question answer",
              "vector": literal_column(POSTGRES_TURN_VECTOR.format(t="turns."))}


def own_turns(statement):
    """`statement` joined and filtered to one person's finished turns, bound as scope_user and
    scope_tenant."""
    return statement.join(Conversation, Conversation.id == Turn.conversation_id).where(
        Conversation.user_id == bindparam("scope_user"),
        Conversation.tenant_id == bindparam("scope_tenant"),
        Conversation.deleted_at.is_(None), Turn.outcome != "pending")


def owned_turns(statement):
    """own_turns for rows the index found: the person as the turn records it, less the turns of
    their deleted conversations (a few, on ix_conversations_user_deleted). A person's
    conversations are all in their tenant (made with the person's). Planned without its values,
    a join on the person's conversations was walked once per hit (0.4 s for 579 hits of 2,500
    turns on PostgreSQL); joined by key, PostgreSQL hashed every conversation of the shop for a
    word held by 1,500 of a busy person's turns (30 of its 41 ms)."""
    deleted = select(Conversation.id).where(Conversation.user_id == bindparam("scope_user"),
                                            Conversation.deleted_at.is_not(None))
    return statement.where(Turn.owner_id == bindparam("scope_user"),
                           Turn.conversation_id.not_in(deleted), Turn.outcome != "pending")


def walked_turns(statement):
    """owned_turns for a range of one person's newest turns: the person as ix_turns_owner_newest
    holds it (PostgreSQL: migration 0042), so that index drives (the range since a word's
    1,000th hit walked the shop's ids, 1.4 s for a busy person), while the GIN searches, which
    name the person as owned_turns does, are not handed its bitmap of all the person's turns.
    The person and the outcome are written into the SQL, not bound: planned without them (as
    psycopg runs a statement it has prepared) the person's rows were taken for a few hundred,
    `outcome <> $1` for one, and all of them read and sorted (0.4 s a word at 40,000 rows)."""
    return statement.join(Conversation, Conversation.id == Turn.conversation_id).where(
        literal_column(POSTGRES_OWNER.format(t="turns.")) == bindparam(
            "scope_user", type_=Integer, literal_execute=True),
        Conversation.tenant_id == bindparam("scope_tenant"),
        Conversation.deleted_at.is_(None), Turn.outcome != literal_column("'pending'"))


def turns_by_owner(statement):
    """own_turns for a person's turns above an id (the scope's row count topped up, see
    scope_counts.py) or on dates: the person as ix_turns_owner_newest and ix_turns_owner_created
    hold it, bound, so those indexes drive in a plan made without the values too (both of their
    columns are named), not a probe of each of a busy person's conversations (10,000 of them:
    38 ms for a day's 28 turns)."""
    return statement.join(Conversation, Conversation.id == Turn.conversation_id).where(
        literal_column(POSTGRES_OWNER.format(t="turns.")) == bindparam("scope_user"),
        Conversation.tenant_id == bindparam("scope_tenant"),
        Conversation.deleted_at.is_(None), Turn.outcome != "pending")


def with_vector(statement):
    """A turn's vector along with it; joined last, so the index still drives the query."""
    return statement.outerjoin(TurnVector, TurnVector.turn_id == Turn.id)


def turns_indexed(user) -> Indexed:
    return replace(person_turns(), key=("user", user.tenant_id, user.id),
                   values={"scope_user": user.id, "scope_tenant": user.tenant_id})


@lru_cache(maxsize=1)
def person_turns() -> Indexed:
    """A person's turns, their scope bound (see own_turns): its expressions made once."""
    return Indexed("turns_fts", Turn.id, TURN_TEXT, Turn.created_at,
                   (Turn.id, Turn.question, Turn.answer, TurnVector.embedding,
                    TurnVector.embedding_model), own_turns, joined=with_vector,
                   form=("a person's turns",), **TURN_INDEX,
                   tokens=lambda values: [str(values["scope_user"])],
                   token_column=("owner_id", "owner"), matched=owned_turns,
                   ranged=turns_by_owner, dated=turns_by_owner,
                   kept_words=literal_column("turns.search_words"), walked=walked_turns,
                   kept_counts=True)
