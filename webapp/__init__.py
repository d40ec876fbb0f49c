"""Nimbus: a chat whose assistant remembers, and which shows exactly what it remembers."""
import os
import sys

from dotenv import load_dotenv
from flask import Flask

from . import config as settings

SWITCH_INTERVAL = 0.0005  # seconds; Python's default is 5 ms


def share_the_gil_promptly() -> None:
    """A process-wide knob, set here once: a search's query embedding runs on another thread and
    needs the GIL for moments between C calls (webapp/memories/search/embeddings.py; never lengthened)."""
    sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))


def create_app(test_config: dict | None = None) -> Flask:
    """Build the app: configuration, database, extensions, blueprints, commands."""
    app = Flask(__name__, instance_relative_config=True,
                template_folder="../templates", static_folder="../static")
    os.makedirs(app.instance_path, exist_ok=True)

    app.config.from_mapping(settings.DEFAULTS)
    app.config.from_pyfile("config.py", silent=True)
    if test_config is None:
        load_dotenv(os.path.join(os.getcwd(), ".env"))
        try:
            app.config.update(settings.from_environment(settings.DEFAULTS))
        except settings.BadSetting as error:  # one line for the operator, not a traceback
            raise SystemExit(f"Nimbus cannot start: {error}") from None
    else:
        app.config.update(test_config)
    share_the_gil_promptly()
    app.config["SQLALCHEMY_DATABASE_URI"] = settings.database_uri(app)
    app.config["SECRET_KEY"] = settings.secret_key(app)
    from . import logs
    logs.init_app(app)  # before the subsystems, so that each may say what it does

    from .database import init_app as init_database
    init_database(app)

    from .extensions import csrf, htmx
    csrf.init_app(app)  # before identity: a forged request is refused before anything is created
    htmx.init_app(app)
    from . import security
    security.init_app(app)  # bounded ids, no NUL, UTF-8; before the blueprints add their routes

    from . import jobs, local_time, access, plurals, tracing
    tracing.init_app(app)  # builds an exporter only when OTEL_EXPORTER_OTLP_ENDPOINT is set
    from .accounts import init_sign_in
    jobs.init_app(app)  # the queue, from this config: the worker builds its app here too
    local_time.init_app(app)
    plurals.init_app(app)  # the `plural` filter: "1 turn", "2 turns"
    init_sign_in(app)
    access.init_app(app)

    # The packages that fill the extension points of webapp/hooks.py, each in its init_app.
    from . import agent, context, memories, shop
    agent.init_app(app)  # the system prompt
    shop.init_app(app)  # the shop's tools
    memories.init_app(app)  # the memory section, tools, after-turn distiller; CLI and pages
    context.init_app(app)  # the rolling summary: its section, fold job, offline summarizer; CLI

    from . import chat, viewer
    chat.init_app(app)  # the chat page and the routes that add to it; the deletion sweep
    viewer.init_app(app)
    from . import accounts, staff
    accounts.init_app(app)
    staff.init_app(app)
    from . import transfer
    transfer.init_app(app)  # export downloads and the /import upload
    security.limit_writes(app)  # per session and per IP, on the routes that write

    from . import cli
    cli.init_app(app)
    security.guard_commands(app)  # no NUL in any command's arguments
    from .llm import announce
    from .context import fit_tools
    announce(app, fit_tools)  # which provider and model answer, in the log (and what is wrong with them)
    return app
