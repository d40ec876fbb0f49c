"""Consolidation: how one distiller pass lands in the table of memories. A new fact is written,
a contradicting one supersedes the memory it names (the old text becomes its history), the
save_memory tool's copy of a fact is merged into the distiller's, and what each pass did is
counted for its checkpoint's outcome.
"""
import logging

from sqlalchemy import delete, select

from ...plurals import plural
from ...extensions import db
from ..models import Memory, MemoryRevision
from .phrasing import fact_key
from .slots import same_slot
from ..store.revisions import DISTILLER, Changer, keep_old_text
from ..store.scopes import TENANT_WORD, InvalidScope, SessionScope
from ..store.rows import InvalidMemory, clean_content, editable, newest, remember, set_vectors, supersede

log = logging.getLogger(__name__)
MAX_MEMORIES_PER_WINDOW = 10
KNOWN_LIMIT = 20  # memories the distiller is shown, so it can supersede instead of adding


def known_memories(scope: SessionScope) -> list[Memory]:
    """The newest memories this conversation could change: never the shop's own shared ones."""
    return [m for m in newest(scope, 2 * KNOWN_LIMIT) if editable(scope, m)][:KNOWN_LIMIT]


def tool_copies(conversation, seqs: set[int], content: str, name: str) -> list[Memory]:
    """What save_memory already wrote from these turns that says the same thing."""
    key = fact_key(content, name)
    return [m for m in db.session.scalars(select(Memory).where(
        Memory.conversation_id == conversation.id, Memory.source == "tool",
        Memory.turn_seq.in_(seqs))) if fact_key(m.content, name) == key]


def newest_first(known: dict[int, Memory]) -> list[Memory]:
    """Newest first: of two notes keyed the same way, the newer is the one in force."""
    return sorted(known.values(), key=lambda m: -m.id)


def superseded(item: dict, known: dict[int, Memory], name: str) -> Memory | None:
    """The known memory this item replaces: the one it names, else the one keyed the same way
    (a second name, a new address); None when there is none, or it says the same thing."""
    target = known.get(item.get("supersedes")) if isinstance(item.get("supersedes"), int) else None
    target = target or same_slot(str(item["content"]), newest_first(known))
    if target is None or fact_key(target.content, name) == fact_key(str(item["content"]), name):
        return None
    return target


def already_known(item: dict, known: dict[int, Memory], name: str, copies: set[int]) -> bool:
    """Whether a known memory says the same thing in other words (save_memory's `copies` from
    these turns aside: the distiller's own copy replaces them)."""
    key = fact_key(str(item["content"]), name)
    return any(fact_key(m.content, name) == key for m in known.values() if m.id not in copies)


def merge_tool_copies(memory: Memory, conversation, seqs: set[int], name: str, by: Changer) -> int:
    """Delete save_memory's copies of this fact; their words stay in the memory's history."""
    merged = 0
    for copy in tool_copies(conversation, seqs, memory.content, name):
        if copy.id != memory.id:
            keep_old_text(memory, "merged", by, copy.content,
                          "the same fact, saved earlier by the save_memory tool")
            db.session.execute(delete(MemoryRevision).where(MemoryRevision.memory_id == copy.id))
            db.session.delete(copy)
            merged += 1
    return merged


def write_memories(items, conversation, scope, turns, config, known=()) -> dict[str, int]:
    """Write the reply's memories, embedded together; what was written, superseded, merged and
    skipped. A memory that contradicts a known one supersedes it: the row now says the new
    fact and the old text is its history. When the save_memory tool already kept the same fact
    during these turns, the distiller's copy wins: it read the whole window and chose the scope
    from the session's words, while the tool was called mid-reply, often with no scope at all
    (and then wrote a personal copy). One fact, one memory."""
    seqs = {t.seq for t in turns}
    known = {m.id: m for m in known}
    counts, changed_rows = {"wrote": 0, "superseded": 0, "merged": 0, "skipped": 0}, []
    for item in items[:MAX_MEMORIES_PER_WINDOW]:
        word = str(item.get("scope") or TENANT_WORD)
        personal = item.get("personal") is not False
        if word == TENANT_WORD and not personal and not config["NIMBUS_MEMORY_CHAT_WRITES_WORKSPACE"]:
            personal = True  # one customer's words must not steer the assistant for all others
        seq = item.get("turn") if item.get("turn") in seqs else turns[-1].seq
        by = Changer(DISTILLER.kind, name=DISTILLER.name, conversation_id=conversation.id,
                     turn_seq=seq)
        try:
            if (old := superseded(item, known, scope.subject_name)) is not None:
                placement = scope.place(word, personal, item.get("order_number"))
                memory = supersede(old, clean_content(item["content"]), config, by, placement,
                                   reason=f"contradicted in message {seq + 1}")
                counts["superseded"] += 1
                changed_rows.append(memory)
            elif already_known(item, known, scope.subject_name, {m.id for m in tool_copies(
                    conversation, seqs, str(item["content"]), scope.subject_name)}):
                continue
            else:
                memory, created = remember(scope, item["content"], config, source="distilled",
                                           word=word, personal=personal,
                                           order_number=item.get("order_number"),
                                           conversation_id=conversation.id, turn_seq=seq,
                                           embed=False)
                if created:
                    counts["wrote"] += 1
                    changed_rows.append(memory)
                    known[memory.id] = memory  # a later note in this window may replace it
        except (InvalidScope, InvalidMemory) as error:
            log.info("distiller: skipped a memory: %s", error)
            counts["skipped"] += 1
            continue
        counts["merged"] += merge_tool_copies(memory, conversation, seqs, scope.subject_name, by)
    set_vectors(changed_rows, config)
    db.session.commit()
    return counts


def describe_pass(counts: dict[str, int]) -> str:
    """The checkpoint's outcome: 'wrote 1 memory', ', superseded 1' and so on."""
    parts = [f"{key} {counts[key]}" for key in ("superseded", "merged", "skipped") if counts[key]]
    if counts["wrote"]:
        return ", ".join([f"wrote {plural(counts['wrote'], 'memory')}", *parts])
    return ", ".join(parts) if counts["superseded"] or counts["merged"] else "nothing found"
