"""What every package's commands share: registering a command, --user, and the lookups that
answer a missing user or conversation with a one-line error instead of a traceback."""
import click
from flask import current_app
from flask.cli import with_appcontext


def add_command(app, command: click.Command) -> None:
    """Register a command that runs inside an app context, however it is invoked."""
    if not getattr(command.callback, "with_app", False):
        command.callback = with_appcontext(command.callback)
        command.callback.with_app = True
    app.cli.add_command(command)


user_option = click.option("--user", "email", default=None, metavar="EMAIL",
                           help="Act as this user (default: the demo customer).")


def resolve_user(email: str | None):
    from .accounts.emails import find_user  # a leaf: the accounts package imports commands
    email = email or current_app.config["NIMBUS_DEMO_USER"]
    user = find_user(email)
    if user is None:
        raise click.ClickException(
            f"no user {email}: run `flask --app webapp init-db --demo` first, or pass --user")
    return user


def owned(conversation_id: str, user):
    from .storage import get_owned_conversation
    conversation = get_owned_conversation(conversation_id, user)
    if conversation is None:
        raise click.ClickException(f"no conversation {conversation_id} for {user.email}")
    return conversation
