"""Nimbus: a chat whose assistant remembers, and which shows exactly what it remembers."""
import os

from dotenv import load_dotenv
from flask import Flask

from . import config as settings


def create_app(test_config: dict | None = None) -> Flask:
    """Build the app: configuration, database, extensions, blueprints, commands."""
    app = Flask(__name__, instance_relative_config=True,
                template_folder="../templates", static_folder="../static")
    os.makedirs(app.instance_path, exist_ok=True)

    app.config.from_mapping(settings.DEFAULTS)
    app.config.from_pyfile("config.py", silent=True)
    if test_config is None:
        load_dotenv(os.path.join(os.getcwd(), ".env"))
        app.config.update(settings.from_environment(settings.DEFAULTS))
    else:
        app.config.update(test_config)
    app.config["SQLALCHEMY_DATABASE_URI"] = settings.database_uri(app)
    app.config["SECRET_KEY"] = settings.secret_key(app)

    from .database import init_app as init_database
    init_database(app)

    from .extensions import csrf, htmx
    csrf.init_app(app)  # before identity: a forged request is refused before anything is created
    htmx.init_app(app)
    from . import security
    security.init_app(app)  # bounded ids, no NUL, UTF-8; before the blueprints add their routes

    from . import jobs, local_time, access, tracing
    tracing.init_app(app)  # builds an exporter only when OTEL_EXPORTER_OTLP_ENDPOINT is set
    from .accounts import sign_in
    from .chat import rendering
    jobs.init_app(app)
    local_time.init_app(app)
    sign_in.init_app(app)
    access.init_app(app)
    rendering.init_app(app)
    from .chat import trim_notes
    trim_notes.init_app(app)
    from .chat import context_gauge
    context_gauge.init_app(app)

    from .shop import tools as shop_tools  # noqa: F401  registers Nimbus's tools
    from . import memories
    memories.init_app(app)

    from .context.summary import jobs as summary_jobs  # noqa: F401  folds the rolling summary after each turn

    from .chat import views as chat
    from .chat import conversation_views  # noqa: F401  the sidebar's rename, delete and undo
    from .chat import steer_views  # noqa: F401  pin a turn or leave it out of the context
    from .chat import summary_views  # noqa: F401  read, edit and fold the rolling summary
    from .chat import feedback_views  # noqa: F401  thumbs up or down on an answer
    from .viewer import views as viewer
    app.register_blueprint(chat.bp)
    app.register_blueprint(viewer.bp)
    from . import accounts, staff
    accounts.init_app(app)
    staff.init_app(app)
    from .transfer import views as transfer
    transfer.init_app(app)  # export downloads and the /import upload
    security.limit_writes(app)  # per session and per IP, on the routes that write

    from . import cli
    cli.init_app(app)
    from .context import cli as context_cli
    context_cli.init_app(app)
    security.guard_commands(app)  # no NUL in any command's arguments
    from .llm.profile import announce
    announce(app)  # which provider and model answer, in the log (and what is wrong with them)
    return app
