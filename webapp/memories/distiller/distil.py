"""The distiller: reads what was said since its checkpoint and writes the memories worth keeping.

It costs a model call, so it runs as a background job after the answer went out: when a
conversation crosses its history budget, and in a sweep of inactive ones. It is conservative,
advances its checkpoint over the turns the model read: after success, "nothing found" and a reply
it could not parse alike (that window would likely fail again, and every try is billed), but not
after a call that never finished (provider down, slot given up to a chat), whose turns the next
run reads again; a reply cut off at the output cap or a read refused for size waits and reads
less, and is given up after a few tries (checkpoints.py). No transaction is open while the model
works. A lock keeps a second worker off the conversation.
"""
import json
import logging
import re
from pathlib import Path

from flask import current_app
from sqlalchemy import select

from ...context import Said
from ...plurals import plural
from ...extensions import db
from ...llm import provider_for, ContextTooLong, ProviderError, Reply, estimate_messages
from ...locks import LockBusy, named_lock
from ...models import Conversation, Turn
from .checkpoints import advance, backed_off, not_read, waiting_out
from .consolidation import describe_pass, known_memories, write_memories
from ..models import DistillCheckpoint, Memory
from ..store.scopes import SessionScope
from ..store.sharing import shares_memories

log = logging.getLogger(__name__)
MARKER = "Output format of the memory distiller"
INSTRUCTIONS = """You are the memory distiller of Nimbus, the support assistant of {shop}.
Read the excerpt of a conversation with the customer {name} and write down only what is worth
knowing in later conversations: how they want to be contacted or addressed, stable preferences,
standing arrangements ("we always…", "we bill fortnightly"), facts about an order that will still
matter later. Be conservative: when you are not sure a fact is true, lasting and useful, leave it
out. An empty list is a good answer. Never keep small talk, one-off questions, or what the
assistant said unless the customer confirmed it.
Write each memory as a short note without a subject, the way a person jots it down ("Prefers
email over phone.", not "I prefer…" or "{name} prefers…"): whom it is about is stored with it.
"personal": true when it applies only to {name}; false when it applies to everyone in its scope."""


class DistillError(ValueError):
    """The model's reply was not the JSON shape the distiller asked for."""


def output_schema(scope: SessionScope, known: list[Memory] = ()) -> dict:
    item = {"content": {"type": "string"}, "scope": {"type": "string", "enum": scope.words()},
            "personal": {"type": "boolean"}, "turn": {"type": "integer"}}
    if known:
        item["supersedes"] = {"type": "integer", "enum": [m.id for m in known]}
    if scope.orders:
        item["order_number"] = {"type": "integer", "enum": sorted(scope.orders)}
    return {"type": "object", "required": ["memories"], "properties": {"memories": {
        "type": "array", "items": {"type": "object", "properties": item,
                                   "required": ["content", "scope", "personal"]}}}}


def system_prompt(conversation, scope: SessionScope, config, known: list[Memory] = ()) -> str:
    """The instructions (replaceable through NIMBUS_MEMORY_PROMPT), then the fixed output shape
    and what is already remembered, which a contradicting memory supersedes by its id."""
    path = config.get("NIMBUS_MEMORY_PROMPT")
    template = Path(path).read_text(encoding="utf-8") if path else INSTRUCTIONS
    instructions = template.replace("{shop}", conversation.tenant.name).replace(
        "{name}", scope.subject_name or "the customer")
    prompt = (f"{instructions}\n\n{MARKER}: reply with JSON only, matching this schema.\n"
              f"{json.dumps(output_schema(scope, known))}\n"
              "scope: workspace = the shop as a whole; account = this customer's account; "
              "order = one of their orders (give order_number). turn: the turn it came from.")
    if known:
        prompt += ("\nAlready remembered. Never repeat one; when the customer now says "
                   "something that contradicts or replaces one, give its number as "
                   "\"supersedes\" and the new note as content:\n" + "\n".join(
                       f"[memory {m.id}] {m.content}" for m in known))
    return prompt


def transcript(turns: list[Turn], name: str) -> str:
    lines = [f"Conversation with {name or 'the customer'}:"]
    for turn in turns:
        lines.append(f"[turn {turn.seq}] Customer: {turn.question}")
        lines.append(f"[turn {turn.seq}] Nimbus: {turn.answer}")
    return "\n".join(lines)


def parse_memories(text: str) -> list[dict]:
    """The list of memories in the reply; DistillError when it is not the shape asked for."""
    match = re.search(r"\{.*\}|\[.*\]", text or "", re.S)
    try:
        data = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError as error:
        raise DistillError(f"the reply was not valid JSON: {error}") from None
    items = data.get("memories") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise DistillError("the reply had no list of memories")
    items = [{"content": item} if isinstance(item, str) else item for item in items]
    return [item for item in items if isinstance(item, dict) and item.get("content")]


class CutShort(ProviderError):
    """The reply stopped at the output cap: the model did not finish reading out its answer."""


def ask_model(messages: list[dict], config, provider=None, schema: dict | None = None) -> str:
    """The model's reply. An OpenAI-compatible server is asked for JSON matching the schema
    (`response_format`; dropped for a server that refuses it), within the output reserve, as
    a background call that waits behind chats and gives its slot up to one."""
    model = config.get("NIMBUS_MEMORY_MODEL") or config["NIMBUS_MODEL"]
    provider = provider or provider_for(current_app, NIMBUS_MODEL=model)
    options = {}
    if provider.takes_options:
        from ...llm import profile_for
        options = {"purpose": "background", "max_tokens": profile_for(config).output_reserve(
            config.get("NIMBUS_MAX_OUTPUT_TOKENS") or 1024)}
        if schema is not None:
            options["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "memories", "schema": schema}}
    reply = None
    for chunk in provider.stream(messages, [], **options):
        if isinstance(chunk, Reply):
            reply = chunk
    if reply is None:
        raise ProviderError("the provider ended without a reply")
    if reply.finish_reason == "length":
        raise CutShort("the reply was cut off at the output cap")
    return reply.text


def fitting(turns: list, request, config, ratio: float) -> list:
    """The oldest of `turns` whose request, with the output reserve, fits a window the server
    reported (llama.cpp's 2,048 tokens hold few long turns); at least one turn. A server that
    still refuses it gets the older half (distil_window)."""
    from ...llm import profile_for
    room = profile_for(config).request_room(config.get("NIMBUS_MAX_OUTPUT_TOKENS") or 1024)
    if room is None:
        return turns
    while len(turns) > 1 and estimate_messages(request(turns)) * ratio > room:
        turns = turns[:max(1, len(turns) * 3 // 4)]
    return turns


def distil_window(conversation_id: str, min_messages: int, config, provider=None) -> str:
    """Read the window, end the transaction, ask the model holding nothing, then write what it
    found in a short transaction of its own (`store_pass`)."""
    conversation = db.session.get(Conversation, conversation_id)
    if conversation is None:
        return "gone: the conversation was deleted"
    checkpoint = db.session.get(DistillCheckpoint, conversation_id) or DistillCheckpoint(
        conversation_id=conversation_id, distilled_through_seq=-1)
    turns = list(db.session.scalars(select(Turn).where(
        Turn.conversation_id == conversation_id, Turn.seq > checkpoint.distilled_through_seq,
        Turn.outcome != "pending").order_by(Turn.seq).limit(config["NIMBUS_MEMORY_MAX_WINDOW_TURNS"])))
    if not turns or 2 * len(turns) < max(min_messages, 1):
        return f"waiting: {plural(2 * len(turns), 'new message')}, {max(min_messages, 1)} needed"
    if (backing_off := waiting_out(checkpoint)) is not None:
        return backing_off
    through = turns[-1].seq
    if not shares_memories(conversation.user, config):
        return advance(checkpoint, through, "skipped: this person does not share memories")
    scope = SessionScope.for_conversation(conversation)
    known = known_memories(scope)
    instructions = system_prompt(conversation, scope, config, known)
    schema, known_ids = output_schema(scope, known), [m.id for m in known]

    def request(window):
        return [{"role": "system", "content": instructions},
                {"role": "user", "content": transcript(window, scope.subject_name)}]
    turns = fitting([Said.of(turn) for turn in turns], request, config,
                    conversation.token_ratio or 1.0)
    turns = turns[:max(1, len(turns) >> (checkpoint.failed_tries or 0))]  # less after a failure
    read_from = checkpoint.distilled_through_seq
    db.session.commit()  # ends the reading transaction before the model is asked
    through = turns[-1].seq
    for attempt in (1, 2):
        try:
            items = parse_memories(ask_model(request(turns), config, provider, schema))
            break
        except ContextTooLong as error:  # fewer turns fit: read the older half, then the rest
            if attempt == 1 and len(turns) > 1:
                turns = turns[:len(turns) // 2]
                through = turns[-1].seq
                continue
            return backed_off(checkpoint, conversation_id, turns, error, config)
        except CutShort as error:  # the output cap ended the reply: fewer turns, fewer notes
            return backed_off(checkpoint, conversation_id, turns, error, config)
        except DistillError as error:  # read, but answered in no shape it could use
            log.warning("distiller failed on %s through turn %s: %s", conversation_id, through,
                        error)
            return advance(checkpoint, through, f"failed: {error}")
        except ProviderError as error:  # down, or gave its slot to a chat: read it next time
            return not_read(checkpoint, conversation_id, through, error)
    return store_pass(conversation_id, read_from, items, turns, config, known_ids)


def store_pass(conversation_id: str, read_from: int, items: list[dict], turns: list,
               config, known_ids: list[int]) -> str:
    """Write a pass's memories and advance the checkpoint, only when nothing moved meanwhile:
    the conversation still there, its checkpoint where the pass began, the person still sharing."""
    conversation = db.session.get(Conversation, conversation_id)
    if conversation is None:
        return "gone: the conversation was deleted"
    checkpoint = db.session.get(DistillCheckpoint, conversation_id, populate_existing=True)
    if (checkpoint.distilled_through_seq if checkpoint else -1) != read_from:
        db.session.rollback()
        return "changed meanwhile: these turns were read by another pass; nothing written"
    checkpoint = checkpoint or DistillCheckpoint(conversation_id=conversation_id,
                                                 distilled_through_seq=-1)
    if not shares_memories(conversation.user, config):
        return advance(checkpoint, turns[-1].seq, "skipped: this person does not share memories")
    known = [m for m in (db.session.get(Memory, id_) for id_ in known_ids) if m is not None]
    counts = write_memories(items, conversation, SessionScope.for_conversation(conversation),
                            turns, config, known)
    return advance(checkpoint, turns[-1].seq, describe_pass(counts))


def distil_conversation(conversation_id: str, min_messages: int = 1, provider=None) -> str:
    """Distil what is new; a second worker on the same conversation leaves at once."""
    try:
        with named_lock(f"distil:{conversation_id}", wait=0):
            return distil_window(conversation_id, min_messages, current_app.config, provider)
    except LockBusy:
        return "busy: another worker is distilling this conversation"
