"""`flask memories …`, `flask distil-inactive` and `flask search`: long-term memory from the shell.

Every command but `embed` acts as one person (--user, default the demo customer) and only sees
and touches the memories that apply to that person's session.
"""
import json
from datetime import timedelta

import click
from flask import current_app
from flask.cli import AppGroup
from sqlalchemy import or_, select

from ..plurals import plural
from ..cli_helpers import add_command, resolve_user, user_option
from ..extensions import db
from ..models import Tenant, Turn, utcnow
from .distiller.distil import distil_conversation
from .search.embeddings import get_embedder
from .store.export import export_memories
from .search.conversations import EMBED_BATCH, embed_turns_in_batches, search_turns
from .jobs import sweep
from .models import Memory, TurnVector
from .search.recall import search as search_memories
from .panel.report import COLUMNS, consolidation_report
from .store.revisions import history_of
from .store.scopes import SCOPE_WORDS, InvalidScope, SessionScope, describe
from .store.sharing import describe_choice, set_memory_sharing
from .store.rows import InvalidMemory, delete_memory, newest, remember, set_vectors, visible

memories = AppGroup("memories", help="List, add, delete and search long-term memories.")


def line(memory, why: str = "") -> str:
    source = {"distilled": "distilled", "tool": "saved by tool", "hand": "added by hand"}[memory.source]
    origin = (f" from {memory.conversation_id}#turn-{memory.turn_seq + 1}"
              if memory.conversation_id else "")
    extra = f"  ({why})" if why else ""
    return (f"#{memory.id:<5} [{describe(memory)}] {memory.content}\n"
            f"        {source}{origin}, {memory.created_at:%Y-%m-%d %H:%M}{extra}")


@memories.command("list")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10_000))
@user_option
def list_memories(limit, email):
    """List the memories that apply to this person, newest first."""
    user = resolve_user(email)
    click.echo(f"{user.email}: {describe_choice(user, current_app.config)}")
    found = newest(SessionScope.for_user(user), limit)
    for memory in found:
        click.echo(line(memory))
    if not found:
        click.echo("No memories yet.")


@memories.command("add")
@click.argument("content")
@click.option("--scope", "word", type=click.Choice(SCOPE_WORDS), default="workspace",
              show_default=True, help="workspace: the whole shop; account; order (with --order).")
@click.option("--order", "order_number", type=click.IntRange(1, 2**63 - 1), default=None,
              help="The order number.")
@click.option("--shared/--personal", default=False, help="Everyone in the scope, or only this person.")
@user_option
def add(content, word, order_number, shared, email):
    """Add a memory by hand (not gated by the opt-out: it is a deliberate act)."""
    user = resolve_user(email)
    try:
        memory, created = remember(SessionScope.for_user(user), content, current_app.config,
                                   source="hand", word=word, personal=not shared,
                                   order_number=order_number)
    except (InvalidScope, InvalidMemory) as error:
        raise click.ClickException(str(error)) from None
    click.echo(("Added " if created else "Already known: ") + line(memory))


def memory_of(email, memory_id):
    """One memory that applies to this person, or a one-line error."""
    memory = visible(SessionScope.for_user(resolve_user(email)), memory_id)
    if memory is None:
        raise click.ClickException(f"no memory {memory_id} for this user")
    return memory


@memories.command("delete")
@click.argument("memory_id")
@user_option
def delete(memory_id, email):
    """Delete one memory (only one that applies to this person)."""
    memory = memory_of(email, memory_id)
    delete_memory(memory)
    click.echo(f"Deleted memory #{memory_id}.")


@memories.command("search")
@click.argument("query")
@user_option
def search(query, email):
    """Search this person's memories (hybrid with NIMBUS_MEMORY_SEARCH on)."""
    found, mode = search_memories(SessionScope.for_user(resolve_user(email)), query,
                                  current_app.config, limit=10)
    click.echo(f"{plural(len(found), 'result')}, ranked by {mode}:")
    for memory, why in found:
        click.echo(line(memory, why))


@memories.command("opt-out")
@user_option
def opt_out(email):
    """Stop writing new memories for this person (nothing stored is removed)."""
    user = resolve_user(email)
    set_memory_sharing(user, False)
    click.echo(f"{user.email}: {describe_choice(user, current_app.config)}")


@memories.command("opt-in")
@user_option
def opt_in(email):
    """Write memories for this person again."""
    user = resolve_user(email)
    set_memory_sharing(user, True)
    click.echo(f"{user.email}: {describe_choice(user, current_app.config)}")


@memories.command("embed")
@click.option("--batch", default=EMBED_BATCH, show_default=True, type=click.IntRange(1, 10_000),
              help="Rows embedded and committed together.")
def embed_missing(batch):
    """Give every memory and turn without a vector of the current embedder one (after turning
    NIMBUS_MEMORY_SEARCH on or switching embedders), in batches, with a progress bar."""
    config = current_app.config
    embedder = get_embedder(config)
    if embedder is None:
        raise click.ClickException("similarity search is off: set NIMBUS_MEMORY_SEARCH=1 first")
    stale = or_(Memory.embedding.is_(None), Memory.embedding_model != embedder.name)
    memory_ids = db.session.scalars(select(Memory.id).where(stale).order_by(Memory.id)).all()
    turn_ids = db.session.scalars(
        select(Turn.id).outerjoin(TurnVector, TurnVector.turn_id == Turn.id)
        .where(Turn.outcome != "pending", or_(TurnVector.turn_id.is_(None),
                                              TurnVector.embedding_model != embedder.name))
        .order_by(Turn.id)).all()
    memories_done = turns_done = 0
    with click.progressbar(length=len(memory_ids) + len(turn_ids), label="Embedding") as bar:
        for start in range(0, len(memory_ids), batch):
            rows = db.session.scalars(select(Memory).where(
                Memory.id.in_(memory_ids[start:start + batch]))).all()
            memories_done += set_vectors(rows, config)
            db.session.commit()
            bar.update(len(rows))
        for read, embedded in embed_turns_in_batches(turn_ids, config, batch):
            turns_done += embedded
            bar.update(read)
    click.echo(f"Embedded {plural(memories_done, 'memory')} and {plural(turns_done, 'turn')} "
               f"with {embedder.name}.")


@memories.command("history")
@click.argument("memory_id")
@user_option
def show_history(memory_id, email):
    """Show what one memory said before each edit, supersession or merge, newest first."""
    memory = memory_of(email, memory_id)
    click.echo(line(memory))
    for row in history_of([memory.id]).get(memory.id, []):
        origin = f" in {row.conversation_id}#turn-{row.turn_seq + 1}" if row.conversation_id else ""
        who = row.changed_by_name or row.changed_by
        click.echo(f"  {row.created_at:%Y-%m-%d %H:%M} {row.action} by {who}{origin}: "
                   f"was {row.content!r}")


@memories.command("export")
@user_option
def export(email):
    """Print this person's memories, each with its history, as JSON."""
    click.echo(json.dumps(export_memories(resolve_user(email)), indent=2, ensure_ascii=False))


@memories.command("report")
@click.option("--days", type=click.IntRange(1, 36_500), default=30, show_default=True,
              help="The period: this many days back from now.")
@click.option("--tenant", "tenant_slug", default=None, metavar="SLUG",
              help="The shop (default the demo shop).")
def report(days, tenant_slug):
    """The consolidation report: per scope, memories added, edited, superseded, merged and
    deleted over the period, with the old text of each change."""
    tenant = db.session.scalar(select(Tenant).where(
        Tenant.slug == (tenant_slug or current_app.config["NIMBUS_DEMO_TENANT"])))
    if tenant is None:
        raise click.ClickException(f"no shop {tenant_slug!r}")
    lines = consolidation_report(tenant.id, utcnow() - timedelta(days=days))
    click.echo(f"{tenant.name}, the last {plural(days, 'day')}: {plural(len(lines), 'scope')} "
               "changed.")
    for entry in lines:
        click.echo(f"{entry.scope}: " + ", ".join(f"{entry.counts[c]} {c}" for c in COLUMNS))
        for row in entry.changes:
            click.echo(f"  {row.created_at:%Y-%m-%d %H:%M} {row.action} by "
                       f"{row.changed_by_name or row.changed_by}: was {row.content!r}")


@click.command("distil-inactive")
@click.option("--minutes", type=click.IntRange(0, 5_256_000), default=None,
              help="Idle time (default NIMBUS_MEMORY_INACTIVE_MINUTES).")
def distil_inactive(minutes):
    """Run the memory sweep now: distil conversations idle for a while, inline."""
    config = current_app.config
    if minutes is not None:
        config = {**config, "NIMBUS_MEMORY_INACTIVE_MINUTES": minutes}
    done = sweep(config, run=distil_conversation)
    for conversation_id, outcome in done:
        click.echo(f"{conversation_id}: {outcome}")
    click.echo(f"{plural(len(done), 'conversation')} swept.")


@click.command("search")
@click.argument("query")
@user_option
def search_history(query, email):
    """Search this person's own past conversations."""
    results, mode = search_turns(resolve_user(email), query, current_app.config, limit=10)
    click.echo(f"{plural(len(results), 'result')}, ranked by {mode}:")
    for r in results:
        branch = "  [on another branch]" if r["inactive_branch"] else ""
        click.echo(f"{r['conversation_id']}#turn-{r['turn'] + 1}{branch}  {r['content']}  "
                   f"({r['why']})")


def init_app(app) -> None:
    app.cli.add_command(memories)  # an AppGroup: its commands already run in an app context
    for command in (distil_inactive, search_history):
        add_command(app, command)
