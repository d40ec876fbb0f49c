"""Commands for context strategies and summaries: `strategy`, `summarize`, `topics`."""
import click
from flask import current_app

from ..cli_helpers import owned, resolve_user, user_option
from ..extensions import db
from ..llm import ProviderError, provider_for
from ..locks import LockBusy, named_lock
from .assemble import POLICY_SETTINGS, STRATEGIES, SUMMARY_STRATEGIES, Policy
from .summary.fold import STYLES, SummaryRejected


def init_app(app) -> None:
    for command in (strategy, summarize, topics):
        app.cli.add_command(command)


def describe(policy: Policy, style: str) -> str:
    return (f"strategy {policy.strategy}: history budget {policy.budget:,} tokens, "
            f"recent turns {policy.recent_turns}, max age {policy.max_age_days:g} days, "
            f"importance pool {policy.candidate_pool}, summary style {style}")


@click.command("strategy")
@click.argument("conversation_id")
@click.argument("name", required=False, type=click.Choice(sorted(STRATEGIES)))
@click.option("--budget", type=click.IntRange(100, 1_000_000), help="History budget in tokens.")
@click.option("--recent", type=click.IntRange(1, 100), help="Newest turns sent in full.")
@click.option("--max-age-days", type=click.FloatRange(0, 36_500, min_open=True),
              help="Strategy time: turns older than this are not sent.")
@click.option("--style", type=click.Choice(list(STYLES)), help="Style of the rolling summary.")
@click.option("--fold-after", type=click.IntRange(1, 100),
              help="Fold the summary once this many turns wait beyond it (default 1).")
@click.option("--reset", is_flag=True, help="Forget this conversation's own parameters first.")
@user_option
def strategy(conversation_id, name, budget, recent, max_age_days, style, fold_after, reset,
             email):
    """Show a conversation's context strategy, or set it and its parameters."""
    from .summary.section import style_of
    from .summary.jobs import fold_summary
    from ..jobs import enqueue
    conversation = owned(conversation_id, resolve_user(email))
    settings = {} if reset else dict(conversation.settings or {})
    given = {"budget": budget, "recent_turns": recent, "max_age_days": max_age_days,
             "summary_style": style, "fold_after_turns": fold_after}
    settings.update({k: v for k, v in given.items() if v is not None})
    changed = name or reset or any(v is not None for v in given.values())
    if changed:
        conversation.strategy = name or conversation.strategy
        conversation.settings = settings
        db.session.commit()
    policy = Policy.for_conversation(conversation, current_app.config)
    own = [k for k in [*POLICY_SETTINGS, "summary_style", "fold_after_turns"] if k in settings]
    click.echo(f"Conversation {conversation.id}: {describe(policy, style_of(conversation))}")
    click.echo(f"  own settings: {', '.join(own) or 'none (the configured defaults)'}")
    if changed and conversation.strategy in SUMMARY_STRATEGIES:
        enqueue(fold_summary, conversation.id)  # turns may have fallen off under the new policy


def up_to_date(conversation, style: str | None):
    """Fold whatever fell off into the summary now, waiting for a worker that is at it."""
    from .summary.section import refresh_summary
    try:
        with named_lock(f"summary:{conversation.id}"):
            provider, covered = provider_for(current_app), None
            while True:
                summary, caught_up = refresh_summary(conversation, provider, style)
                progress = summary.through_seq if summary else -1
                if caught_up or progress == covered:
                    return summary
                covered = progress
    except LockBusy:
        raise click.ClickException("another worker kept the summary locked; try again") from None
    except ProviderError as error:
        db.session.rollback()
        raise click.ClickException(f"the model could not summarize: {error}") from None


@click.command()
@click.argument("conversation_id")
@click.option("--style", type=click.Choice(list(STYLES)), default=None,
              help="Summary style (default: the conversation's, else NIMBUS_SUMMARY_STYLE).")
@user_option
def summarize(conversation_id, style, email):
    """Print the rolling summary of the turns that fell out of the window, updating it first."""
    conversation = owned(conversation_id, resolve_user(email))
    summary = up_to_date(conversation, style)
    if summary is None or summary.through_seq < 0:
        click.echo(f"No turn has fallen out of the window yet (strategy {conversation.strategy}, "
                   f"{conversation.turn_count} turns): there is nothing to summarize.")
        return
    click.echo(f"Summary of turns 1–{summary.through_seq + 1} ({summary.style}, "
               f"updated {summary.updated_at:%Y-%m-%d %H:%M} UTC):")
    click.echo(summary.text)
    click.echo(f"Topics: {', '.join(summary.topics) or '(none)'}")


@click.command()
@click.argument("conversation_id")
@user_option
def topics(conversation_id, email):
    """List the topics of the whole conversation, the summary's and the newer turns', changing
    nothing: `summarize` is the command that folds the summary."""
    from .summary.fold import Said
    from .summary.section import FoldPlan, cached_summary, fold_turns, style_of, turns_to_fold
    conversation = owned(conversation_id, resolve_user(email))
    summary = cached_summary(conversation)
    text, found = (summary.text, list(summary.topics)) if summary else ("", [])
    after, config = summary.through_seq if summary else -1, current_app.config
    style, provider = summary.style if summary else style_of(conversation), provider_for(current_app)
    ratio = conversation.token_ratio or 1.0
    # The turns the summary does not cover yet are read for topics in memory, never stored.
    while turns := turns_to_fold(conversation.id, after, None, config["NIMBUS_SUMMARY_CHUNK_TURNS"]):
        plan = FoldPlan(after, text, found, [Said.of(turn) for turn in turns], turns[-1].seq)
        db.session.commit()  # no transaction is held while the model works
        try:  # fitted to the window like the summary's own folds; nothing is stored
            text, found, folded = fold_turns(provider, plan, style, config, ratio)
        except (ProviderError, SummaryRejected) as error:
            raise click.ClickException(f"the model could not extract topics: {error}") from None
        after = folded[-1].seq
    db.session.rollback()  # a read: nothing it loaded may be flushed by a later commit
    if not found:
        click.echo("No topics yet.")
    for topic in found:
        click.echo(topic)
