"""Write, read, edit and delete memories; every call goes through a session's scope.

There is no way in here to write a memory without a tenant, nor to read one outside the session:
the tenant always comes from the SessionScope, which comes from the conversation or the person.
"""
from sqlalchemy import bindparam, func, select

from ...extensions import db
from ...models import utcnow
from ...security import bounded_int, has_nul
from ..search.embeddings import embed_many
from ..models import Memory
from .revisions import SHELL, Changer, forget_history, keep_old_text
from .scopes import ACCOUNT, ORDER, TENANT_WORD, SessionScope, branches_bound
from ..search.statements import built, newest_in, read

MAX_MEMORY_CHARS = 500


class InvalidMemory(ValueError):
    """Content that cannot be stored: empty or too long."""


def clean_content(content) -> str:
    text = " ".join(str(content or "").split())
    if not text:
        raise InvalidMemory("a memory needs some text")
    if has_nul(text):
        raise InvalidMemory("a memory cannot contain a NUL character (\\0)")
    if len(text) > MAX_MEMORY_CHARS:
        raise InvalidMemory(f"a memory is at most {MAX_MEMORY_CHARS} characters")
    return text


def remember(scope: SessionScope, content, config, *, source: str, word: str = TENANT_WORD,
             personal: bool = True, order_number=None, conversation_id: str | None = None,
             turn_seq: int | None = None, embed: bool = True) -> tuple[Memory, bool]:
    """Store one memory in the session's tenant; (memory, False) when the same one already exists.
    embed=False leaves the vector to the caller, which embeds many at once (set_vectors)."""
    text = clean_content(content)
    placement = scope.place(word, personal, order_number)
    existing = db.session.scalar(select(Memory).where(
        Memory.tenant_id == scope.tenant_id,
        *(same(getattr(Memory, column), value) for column, value in placement.items()),
        func.lower(Memory.content) == text.lower()).limit(1))
    if existing is not None:
        if existing.branch_left and conversation_id is not None:
            # Learned again from the path shown: no longer only from a branch left.
            existing.branch_left = ""
            existing.conversation_id, existing.turn_seq = conversation_id, turn_seq
            db.session.commit()
        return existing, False
    memory = Memory(tenant_id=scope.tenant_id, content=text, source=source,
                    conversation_id=conversation_id, turn_seq=turn_seq, **placement)
    if embed:
        set_vector(memory, config)
    db.session.add(memory)
    db.session.commit()
    return memory, True


def remember_for_everyone(tenant_id: int, content, config, *, source: str = "hand") -> tuple[Memory, bool]:
    """Store a memory shared by every customer of the tenant: for staff tools and the CLI only.

    Nothing a customer posts reaches this: browser writes go through `remember(..., personal=True)`.
    """
    return remember(SessionScope(tenant_id, None), content, config, source=source,
                    word=TENANT_WORD, personal=False)


def same(column, value):
    return column.is_(None) if value is None else column == value


def set_vector(memory: Memory, config) -> None:
    set_vectors([memory], config)


def set_vectors(memories: list[Memory], config) -> int:
    """Embed the memories' contents in batched model runs (the caller commits); how many got one."""
    vectors = embed_many(config, [memory.content for memory in memories]) or []
    for memory, vector in zip(memories, vectors or [(None, None)] * len(memories)):
        memory.embedding, memory.embedding_model = vector
    return len(vectors)


def newest(scope: SessionScope, limit: int) -> list[Memory]:
    """The newest memories that apply to this session, newest first (rows ordered by id)."""
    form, _, values = scope.bound()
    ids = read(built((*form, "newest ids"), lambda: newest_in(
        branches_bound(*scope.shape), [Memory.id], Memory.id, bindparam("row_limit"))),
        {**values, "row_limit": limit}).scalars().all()
    found = {m.id: m for m in db.session.scalars(select(Memory).where(Memory.id.in_(ids)))}
    return [found[i] for i in ids]


def visible(scope: SessionScope, memory_id) -> Memory | None:
    """The memory if it applies to this session; a foreign or unknown id looks the same: None."""
    try:
        memory_id = bounded_int(memory_id)
    except (TypeError, ValueError):
        return None
    return db.session.scalar(select(Memory).where(Memory.id == memory_id, scope.applies()))


def editable(scope: SessionScope, memory: Memory) -> bool:
    """People change their own memories and their account's or orders'; not the whole shop's."""
    if memory.subject_id is not None:
        return memory.subject_id == scope.subject_id
    if memory.memorable_type == ACCOUNT:
        return memory.memorable_id == scope.subject_id
    return memory.memorable_type == ORDER and memory.memorable_id in scope.orders.values()


def may_edit_memory(user, scope: SessionScope, memory: Memory | None) -> bool:
    """People change the memories that are theirs; the shop-wide ones only admins, in settings."""
    return user is not None and memory is not None and editable(scope, memory)


def update_content(memory: Memory, content, config, by: Changer = SHELL) -> Memory:
    """Change what a memory says; the old text stays in its history, never silently lost."""
    text = clean_content(content)
    if text != memory.content:
        keep_old_text(memory, "edited", by, memory.content, "edited by hand")
        memory.content = text
        memory.updated_at = utcnow()
        set_vector(memory, config)
    db.session.commit()
    return memory


def supersede(memory: Memory, content, config, by: Changer, placement: dict,
              source: str = "distilled", reason: str = "") -> Memory:
    """A later fact contradicts `memory`: it now says the new text, the old one is history.
    The caller embeds and commits (the distiller embeds a window's memories together)."""
    keep_old_text(memory, "superseded", by, memory.content, reason)
    memory.content = clean_content(content)
    memory.source, memory.updated_at = source, utcnow()
    memory.conversation_id, memory.turn_seq = by.conversation_id, by.turn_seq
    memory.branch_left = ""  # what it says now was learned on the path shown
    for column, value in placement.items():
        setattr(memory, column, value)
    return memory


def delete_memory(memory: Memory, by: Changer = SHELL, commit: bool = True) -> None:
    """Delete a memory and its history; one row without text says it went, and when."""
    forget_history(memory, by)
    db.session.delete(memory)
    if commit:
        db.session.commit()
