"""The `flask --app webapp …` commands: set up, chat, inspect, export and import, purge."""
import io
import json
import os
import re
import sys
from contextlib import contextmanager

import click
from flask import current_app

from .plurals import plural
from .cli_helpers import add_command, owned, resolve_user, user_option
from .extensions import db
from .transfer import FORMATS
from .security import has_nul, length_problem, whole_number


def init_app(app) -> None:
    for command in (init_db, chat, ask, show, purge, export, import_):
        add_command(app, command)


def message_lines(messages: list[dict]) -> list[str]:
    """One line per message, as the seed's show-conversation prints them."""
    lines = []
    for m in messages:
        if m["role"] == "assistant" and m.get("tool_calls"):
            calls = ", ".join(f"{c['name']}({json.dumps(c['arguments'], ensure_ascii=False)})"
                              for c in m["tool_calls"])
            lines.append(f"assistant: (requested tools) {calls}")
            if (m.get("content") or "").strip():
                lines.append(f"assistant: {m['content']}")
        elif m["role"] == "tool":
            lines.append(f"tool:      {m.get('name', '?')} → {m['content']}")
        else:
            lines.append(f"{m['role'] + ':':<10} {m.get('content') or ''}")
    return lines


@click.command("init-db")
@click.option("--demo", is_flag=True, help="Also create the demo shop, customers, orders and help articles.")
def init_db(demo):
    """Create the database tables (safe to run again); --demo adds the demo shop."""
    from .accounts import seed_demo
    from .database import UnmigratedDatabase, create_schema
    from .database import backup_before_upgrade, head_revision
    backup = backup_before_upgrade(current_app.config["NIMBUS_BACKUP_FOLDER"]
                                   or os.path.join(current_app.instance_path, "backups"))
    if backup:  # said before upgrading: should the upgrade fail, the copy is where to go back to
        click.echo(f"Copied the database, as it is before the upgrade, to {backup}")
    try:
        create_schema()
    except UnmigratedDatabase as error:
        raise click.ClickException(str(error)) from None
    if backup:
        click.echo(f"Upgraded it to revision {head_revision()}.")
    click.echo(f"Database ready: {db.engine.url.render_as_string(hide_password=True)}")
    if "secret_key_file" in current_app.extensions:
        path, created = current_app.extensions["secret_key_file"]
        click.echo(f"{'Wrote a new random' if created else 'Using the'} SECRET_KEY in {path} "
                   "(set SECRET_KEY to use your own; changing it signs everyone out).")
    if demo:
        tenant = seed_demo(current_app.config["NIMBUS_DEMO_TENANT"])
        click.echo(f"Demo shop '{tenant.name}' ready; demo customer "
                   f"{current_app.config['NIMBUS_DEMO_USER']} (orders #1041-#1045).")
        from .accounts import ensure_demo_team
        for line in ensure_demo_team(current_app.config):
            click.echo(line)
        seed_demo_conversation()


def seed_demo_conversation() -> None:
    """Make the demo's long conversation once, say where its viewer is and what to look at."""
    from .shop import seed_long_conversation, seeded_conversation, tour
    from .viewer import build_report
    user = resolve_user(None)
    made = seed_long_conversation(user, current_app.config)
    conversation = made or seeded_conversation(user)
    base = current_app.config["NIMBUS_PUBLIC_URL"].rstrip("/")
    click.echo(f"{'Made' if made else 'Kept'} the demo's long conversation of {user.email} "
               f"({conversation.turn_count} turns, a rolling summary and memories): "
               f"{base}/c/{conversation.id}/viewer (sign in as {user.email}). In its viewer:")
    for line in tour(conversation, build_report(conversation, current_app.config, size=1).runs):
        click.echo(line)
    print_viewer_link(conversation, user)


def print_viewer_link(conversation, user) -> None:
    """A one-time sign-in link that opens the demo's viewer; a new one on each run, since the
    last one may be spent or expired."""
    from .accounts import create_link
    config = current_app.config
    link = create_link(user, f"/c/{conversation.id}/viewer", config)
    if link is not None:
        click.echo(f"Open it signed in as {user.email} in one click: {link} (works once, for "
                   f"{config['NIMBUS_SIGN_IN_LINK_MINUTES']} minutes).")


def answer(conversation, question: str, echo_trace: bool) -> str:
    """Run one turn through the agent under the conversation's lock; return the answer."""
    from .agent import run_turn
    from .llm import provider_for
    from .locks import conversation_lock
    from .storage import start_turn
    text = ""
    with conversation_lock(conversation.id):
        turn = start_turn(conversation, question)
        # The answer is printed whole: the offline model's demo pace would only make it wait.
        provider = provider_for(current_app, NIMBUS_OFFLINE_WORDS_PER_SECOND=0)
        for event in run_turn(turn, provider):
            if event.line and echo_trace:
                click.echo(f"  [step {event.step}] {event.line}", err=echo_trace == "stderr")
            if event.kind == "answer":
                text = event.data["text"]
    return text


def check_question(question: str) -> str:
    question = question.strip()
    if not question:
        raise click.ClickException("the question is empty")
    if has_nul(question):  # `chat` reads its lines from stdin, past the arguments' guard
        raise click.ClickException("the question contains a NUL character (\\0), which cannot be stored")
    if problem := length_problem(question, current_app.config):
        raise click.ClickException(f"the question is {problem}")
    return question


@click.command()
@click.option("--resume", "resume_id", default=None, metavar="ID", help="Continue a conversation.")
@user_option
def chat(resume_id, email):
    """Chat with Nimbus in the terminal; type `exit` to quit."""
    from .storage import create_conversation
    user = resolve_user(email)
    if resume_id:
        conversation = owned(resume_id, user)
        click.echo(f"Resuming conversation {conversation.id}")
    else:
        conversation = create_conversation(user)
        click.echo(f"New conversation {conversation.id}")
    click.echo('Ask Nimbus anything (type "exit" to quit).\n')
    while True:
        line = click.prompt("You", default="", show_default=False, prompt_suffix=": ")
        if line.strip().lower() in ("exit", "quit"):
            break
        if not line.strip():
            continue
        try:
            reply = answer(conversation, check_question(line), echo_trace=True)
        except click.ClickException as error:
            click.echo(f"  {error.message}")
            continue
        click.echo(f"\nNimbus: {reply}\n")
    click.echo(f"Bye! Resume later with: flask --app webapp chat --resume {conversation.id}")
    if conversation.turn_count:
        click.echo(open_in_browser(conversation, user))


@click.command()
@click.argument("question")
@click.option("--conversation", "conversation_id", default=None, metavar="ID",
              help="Continue this conversation (default: start a new one).")
@click.option("--trace", is_flag=True, help="Print the agent's trace lines to stderr.")
@user_option
def ask(question, conversation_id, trace, email):
    """Ask one question; prints the answer, then `conversation: ID`."""
    from .storage import create_conversation
    user = resolve_user(email)
    question = check_question(question)
    conversation = owned(conversation_id, user) if conversation_id else create_conversation(user)
    click.echo(answer(conversation, question, echo_trace="stderr" if trace else False))
    click.echo(open_in_browser(conversation, user))
    click.echo(f"conversation: {conversation.id}")


def open_in_browser(conversation, user) -> str:
    """Where the browser shows this conversation: a one-time sign-in link as its owner for a
    customer, the address and whom to sign in as for staff (links never sign staff in)."""
    from .accounts import create_link
    config = current_app.config
    path = f"/c/{conversation.id}"
    link = create_link(user, path, config)
    if link is None:
        return (f"open in the browser: {config['NIMBUS_PUBLIC_URL'].rstrip('/')}{path} "
                f"(sign in as {user.email})")
    return (f"open in the browser: {link} (signs you in as {user.email}; works once, for "
            f"{config['NIMBUS_SIGN_IN_LINK_MINUTES']} minutes)")


@click.command()
@click.argument("conversation_id")
@click.option("--context", "as_context", is_flag=True,
              help="Print exactly what the model will receive with the next question.")
@click.option("--strategy", default=None, help="Preview another context strategy (changes nothing).")
@click.option("--budget", type=click.IntRange(1, 1_000_000), default=None,
              help="Preview another history budget in tokens.")
@click.option("--recent", type=click.IntRange(0, 100), default=None,
              help="Preview another number of newest turns sent in full.")
@click.option("--max-age-days", type=click.FloatRange(0, 36_500, min_open=True), default=None,
              help="Preview another maximum age (strategy time).")
@user_option
def show(conversation_id, as_context, strategy, budget, recent, max_age_days, email):
    """Print a stored conversation, or with --context what the next request will send."""
    from .context import Policy, plan_request, fate_lines
    conversation = owned(conversation_id, resolve_user(email))
    if not as_context:
        click.echo(f"Conversation {conversation.id}: {conversation.title} "
                   f"({conversation.turn_count} turns)\n")
        for turn in conversation.turns:
            click.echo(f"--- turn {turn.seq + 1} ({turn.outcome})")
            click.echo("\n".join(message_lines(turn.messages)))
        return
    try:
        policy = Policy.for_conversation(conversation, current_app.config, strategy=strategy,
                                         budget=budget, recent_turns=recent,
                                         max_age_days=max_age_days)
        plan = plan_request(conversation, current_app.config, policy)
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    sizes = ", ".join(f"{s.name} {s.tokens}" for s in plan.sections)
    click.echo(f"Context sent with the next question ({plan.total_tokens} tokens: {sizes}; "
               f"strategy {policy.strategy}, history budget {policy.budget}):")
    click.echo(plan.shape.words(policy.budget, plan.policy.budget))
    click.echo("\n".join(message_lines(plan.messages)))
    click.echo("\nTurn fates (why each stored turn is or is not sent):")
    click.echo("\n".join(fate_lines(plan)) or "  (no finished turns yet)")


def parse_days(value: str) -> int:
    days = whole_number(value.strip().lower().removesuffix("d"), 0, 36_500)
    if days is None:
        raise click.BadParameter(f"{value!r}: give a number of days up to 36500, like 30 or 30d")
    return days


@click.command()
@click.option("--older-than", "older_than", required=True, metavar="DAYS",
              help="Age in days since the conversation's last message (or its import, if "
                   "later), e.g. 30 or 30d.")
@click.option("--dry-run", is_flag=True, help="List what would be deleted; delete nothing.")
@click.option("--yes", is_flag=True, help="Delete without asking (for cron).")
def purge(older_than, dry_run, yes):
    """Delete conversations with no message for N days, those deleted by their owners, with
    everything stored for them, and idle guests. Lists them and asks first unless --yes."""
    from sqlalchemy import func, select

    from .accounts import idle_guests, purge_idle_guests
    from .models import User
    from .storage import purge_candidates, purge_older_than, purgeable
    days = parse_days(older_than)
    undo = current_app.config["NIMBUS_DELETE_UNDO_SECONDS"]
    found = purge_candidates(days, undo)
    guests = db.session.scalar(select(func.count()).select_from(User).where(
        *idle_guests(days, purgeable(days, undo))))
    turns = sum(row.turns for row in found)
    click.echo(f"To delete: {plural(len(found), 'conversation')} with {plural(turns, 'turn')}, "
               f"and {plural(guests, 'idle guest')}.")
    for row in found[:PURGE_LISTED]:
        state = " (deleted by its owner)" if row.deleted_at else ""
        click.echo(f"  {row.id}  last message {row.last_message_at:%Y-%m-%d}  {row.turns:>5} "
                   f"{'turn ' if row.turns == 1 else 'turns'}  {row.email}  {row.title[:40]}{state}")
    if len(found) > PURGE_LISTED:
        click.echo(f"  … and {len(found) - PURGE_LISTED} more")
    if dry_run:
        click.echo("Dry run: nothing deleted.")
        return
    if not (found or guests):
        click.echo("Nothing to delete.")
        return
    if not yes and not click.confirm("Delete them for good?", default=False):
        click.echo("Nothing deleted.")
        return
    click.echo(f"Deleted {plural(purge_older_than(days, undo), 'conversation')} and "
               f"{plural(purge_idle_guests(days), 'idle guest')}.")
    from .memories import forget_deleted_words
    forget_deleted_words()


PURGE_LISTED = 50


EXPORTS = ("json", "openai", "markdown")


@click.command()
@click.argument("conversation_id")
@click.option("--format", "fmt", type=click.Choice(EXPORTS), default="json",
              help="json: Nimbus's own (re-importable, lossless); openai: Chat Completions "
                   "messages; markdown: for people.")
@user_option
def export(conversation_id, fmt, email):
    """Write a conversation to stdout as JSON (re-importable), OpenAI messages or Markdown."""
    from .transfer import export_conversation, export_markdown, export_openai
    conversation = owned(conversation_id, resolve_user(email))
    if fmt == "markdown":
        click.echo(export_markdown(conversation))
    else:
        data = export_openai(conversation) if fmt == "openai" else export_conversation(conversation)
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def read_file(path: str) -> bytes:
    """The bytes of FILE, or of stdin for "-"; a path that cannot be read is a plain error."""
    if path == "-":
        return click.get_binary_stream("stdin").read()
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except (OSError, ValueError) as error:
        raise click.ClickException(f"cannot read {path!r}: {getattr(error, 'strerror', None) or error}") from None


def import_owner(email: str | None, tenant_slug: str | None):
    """The customer an import belongs to: --user, created in --tenant (or the demo shop) if new."""
    from .accounts import find_user, get_or_create_tenant, get_or_create_user
    if not email:
        if tenant_slug:
            raise click.ClickException("--tenant needs --user: which customer of that shop?")
        return resolve_user(None), False
    email = email.strip().lower()
    if not EMAIL.fullmatch(email):
        raise click.ClickException(f"{email!r} is not an email address")
    user = find_user(email)
    if user is not None:
        if tenant_slug and user.tenant.slug != tenant_slug:
            raise click.ClickException(f"{email} belongs to the shop {user.tenant.slug!r}, "
                                       f"not {tenant_slug!r}")
        return user, False
    tenant = get_or_create_tenant(tenant_slug or current_app.config["NIMBUS_DEMO_TENANT"])
    name = " ".join(part.capitalize() for part in re.split(r"[._+-]+", email.split("@")[0]) if part)
    return get_or_create_user(tenant, email, name or email), True


@contextmanager
def checking_bar(name: str, data):
    """A progress bar on stderr while a large file's conversations are checked."""
    records = len(data) if isinstance(data, list) and len(data) > 50 else 0
    with click.progressbar(length=records, label="Checking conversations",
                           file=sys.stderr if records else io.StringIO(), show_pos=True) as bar:
        yield bar.update if records else None


EMAIL = re.compile(r"[^@\s]{1,64}@[^@\s.]+(\.[^@\s.]+)+")


@click.command("import")
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="The file's format; auto tells them apart by their shape.")
@click.option("--user", "email", default=None, metavar="EMAIL",
              help="The customer it belongs to (default: the demo customer); created if new.")
@click.option("--tenant", "tenant_slug", default=None, metavar="SLUG",
              help="With a new --user: the shop to create them in (default: the demo shop).")
@click.option("--distil", is_flag=True,
              help="Learn memories from what the customer said in them (default: not).")
@click.option("--strict", is_flag=True,
              help="All or nothing: refuse every file at the first unreadable conversation.")
def import_(files, fmt, email, tenant_slug, distil, strict):
    """Import conversations: a Nimbus export, OpenAI messages (JSON or JSONL), ChatGPT's or
    Claude's conversations.json (ChatGPT's split conversations-000.json… may be given together),
    an Open WebUI export or ShareGPT; - reads stdin. Each readable conversation is stored on its
    own and each unreadable one is skipped with a line naming it; --strict stores all or none."""
    from .transfer import (Imported, ImportResult, InvalidImport, import_all, import_each,
                           not_yet_imported, queue_vectors, read_files)
    try:
        raws = []
        for file in files:
            raws.append((file, read_file(file)))
            if len(raws[-1][1]) > 5_000_000:
                click.echo(f"Reading {file} ({len(raws[-1][1]) / 1e6:.1f} MB)…", err=True)
        checked, skipped = read_files(raws, fmt, strict, checking_bar)
        user, created = import_owner(email, tenant_slug)  # only once every file is checked
        checked, already = not_yet_imported(checked, user)
        total = sum(len(c.turns) for c in checked)
        with click.progressbar(length=total, label=f"Importing {total:,} turns", file=sys.stderr,
                               show_pos=True) as bar:
            if strict:
                result = ImportResult(list(map(Imported.of, import_all(checked, user, bar.update))))
                result.count(checked)
            else:
                result = import_each(checked, user, bar.update)
        result.skipped[:0] = skipped
        result.already = already
        conversations = result.conversations
        if not distil:
            from .memories import leave_undistilled
            leave_undistilled(conversations)
    except InvalidImport as error:
        db.session.rollback()
        raise click.ClickException(f"refused, nothing imported: {error}") from None
    if created:
        click.echo(f"Created customer {user.email} in the shop {user.tenant.slug!r}.")
    for line in result.skipped + result.notes:
        click.echo(line, err=True)
    if len(conversations) == 1 and not (result.skipped or result.already or result.left_out):
        conversation = conversations[0]
        click.echo(f"Imported {plural(conversation.turn_count, 'turn')} as conversation: {conversation.id}")
    else:
        click.echo(result.summary)
        for conversation in conversations:
            click.echo(f"  {conversation.id}  {plural(conversation.turn_count, 'turn'):>11}  "
                       f"{conversation.title}")
    if queue_vectors(conversations, current_app.config):
        click.echo("Queued its turns for similarity search (batched, in the background).")
