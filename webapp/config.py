"""Configuration: defaults here, then instance/config.py, then the environment (and .env)."""
import logging
import os
import secrets

from pydantic import ConfigDict, ValidationError, create_model

# Every key the app reads, with its default. Environment variables of the same name override.
DEFAULTS = {
    "SECRET_KEY": None,  # None: a random key in instance/secret_key (docs/operations.md "Production checklist")
    "NIMBUS_SECRET_KEY_FILE": None,  # where that key is kept; None: instance/secret_key
    "NIMBUS_BACKUP_FOLDER": None,  # init-db copies a SQLite file here before upgrading it; None: instance/backups
    "DATABASE_URL": None,  # None: SQLite file in the instance folder
    "OPENAI_API_KEY": None,
    "OPENAI_BASE_URL": None,
    "NIMBUS_MODEL": "gpt-4o-mini",
    "NIMBUS_MODEL_TITLES": True,  # a real model titles a conversation after its first answer
    # Deadlines of a model call (webapp/llm/calls.py): none cuts a reply the server is still writing
    "NIMBUS_PROVIDER_TIMEOUT": 60.0,  # longest wait for a provider to start: a slot, a first token
    # The provider profile (webapp/llm/profile.py, docs/operations.md "Local models"): None = ask the server
    "NIMBUS_FIRST_TOKEN_TIMEOUT": 30.0,  # seconds to the first word; keep-alives don't reset it
    "NIMBUS_IDLE_TIMEOUT": 30.0,  # seconds of silence between two chunks of a reply
    "NIMBUS_MIN_TOKENS_PER_SECOND": 1.0,  # slowest pace accepted: caps a reply at max_tokens / this
    "NIMBUS_MAX_OUTPUT_TOKENS": 1024,  # max_tokens of a reply, reserved out of the context window
    "NIMBUS_CONTEXT_WINDOW": None,  # the model's window in tokens; None: what the server reports
    "NIMBUS_PROVIDER_SLOTS": None,  # model calls at once per worker; None: the server's slots
    "NIMBUS_HISTORY_BUDGET": 3000,  # tokens of history (and rolling summary) per request
    "NIMBUS_RECENT_TURNS": 2,  # newest turns sent in full, with tool calls and results
    "NIMBUS_MAX_AGE_DAYS": 7.0,  # strategy "time": turns older than this are not sent
    "NIMBUS_IMPORTANCE_POOL": 50,  # strategy "importance": newest turns scored per request
    "NIMBUS_SUMMARY_STYLE": "concise",  # rolling summary: concise, detailed or bullets
    "NIMBUS_SUMMARY_MAX_TOKENS": 600,  # the summary is kept under this size
    "NIMBUS_SUMMARY_CHUNK_TURNS": 40,  # turns folded into the summary per model call
    "NIMBUS_MAX_STEPS": 6,  # agent loop: model calls per turn
    "NIMBUS_MAX_REPEAT_CALLS": 1,  # agent loop: identical tool calls allowed per turn
    "NIMBUS_MAX_MESSAGE_CHARS": 8000,
    "NIMBUS_MAX_ANSWER_CHARS": 100_000,  # a provider's answer past this is cut and says so
    "NIMBUS_VIEWER_PAGE_TURNS": 50,  # viewer: stored turns shown per page
    "NIMBUS_CHAT_PAGE_TURNS": 30,  # chat page: newest turns shown; older ones load on scrolling up
    "NIMBUS_SIDEBAR_PAGE": 50,  # conversations per sidebar section; "Show more" loads the next ones
    "NIMBUS_TIMEZONE": "UTC",  # pages' times when the browser has not said its own zone yet
    "NIMBUS_DELETE_UNDO_SECONDS": 15,  # a deleted conversation can be restored for this long
    "NIMBUS_OFFLINE_WORDS_PER_SECOND": 12.0,  # offline model's pace; 0 = all at once (tests)
    # OpenTelemetry traces of each reply (webapp/tracing.py): off unless an OTLP/HTTP endpoint is set
    "NIMBUS_IMPORT_MAX_BYTES": 64_000_000,  # one account's upload at /import (a ChatGPT export is tens of MB)
    "OTEL_EXPORTER_OTLP_ENDPOINT": None,  # e.g. http://localhost:4318 (Jaeger, Langfuse, Phoenix)
    "NIMBUS_OTEL_CAPTURE_CONTENT": False,  # also put the messages' text on the spans
    "NIMBUS_LOG_LEVEL": "INFO",  # Nimbus's own log lines (webapp.*) from this level, timestamped
    "NIMBUS_DEMO_TENANT": "demo",
    "NIMBUS_DEMO_USER": "alex@example.com",
    "NIMBUS_PUBLIC_URL": "http://127.0.0.1:5000",  # where the commands' printed links point
    "NIMBUS_SIGN_IN_LINK_MINUTES": 10,  # a one-time sign-in link printed by ask/chat lasts this long
    # Reply runs under load (docs/operations.md "Running under load")
    "NIMBUS_LEASE_SECONDS": 10.0,  # a lock or pending turn not renewed this long is taken over
    "NIMBUS_HEARTBEAT_SECONDS": 2.0,  # each worker renews leases and checkpoints words this often
    "NIMBUS_STOP_POLL_SECONDS": 0.5,  # how often a worker looks for Stop pressed on another one
    "NIMBUS_MAX_RUNS": 100,  # replies written at once per worker; beyond it a send gets "busy"
    "NIMBUS_BUSY_RETRY_AFTER": 3,  # seconds a "busy" answer asks the sender to wait
    "NIMBUS_DB_POOL_SIZE": 10,  # database connections kept open per worker
    "NIMBUS_DB_MAX_OVERFLOW": 20,  # extra connections per worker at peaks
    "NIMBUS_DB_POOL_TIMEOUT": 10.0,  # seconds a statement waits for a free connection
    "NIMBUS_DEMO_STAFF": "staff@example.com",  # init-db --demo creates it and prints its password
    # Accounts (webapp/accounts/, docs/accounts.md)
    "NIMBUS_GUESTS": True,  # a guest customer per browser without signing in; False: /login first
    "NIMBUS_SIGNUP": True,  # people may create their own customer account at /signup
    "NIMBUS_SESSION_HOURS": 12.0,  # a signed-in session ends after this long idle
    "NIMBUS_REMEMBER_DAYS": 30.0,  # "remember me" keeps the browser signed in this long
    "NIMBUS_GUEST_DAYS": 30.0,  # a browser keeps its guest (and its conversations) this long
    # Lock-out (webapp/accounts/lockout.py): per account and address, with a far higher ceiling
    # per account, so an attacker who knows an email cannot lock its owner out from elsewhere
    "NIMBUS_LOGIN_MAX_FAILURES": 5,  # wrong passwords for one account from one address ...
    "NIMBUS_LOGIN_LOCK_MINUTES": 15,  # ... within this long lock that address out of it
    "NIMBUS_LOGIN_ACCOUNT_MAX_FAILURES": 100,  # from all addresses within that long: locked for all
    "NIMBUS_SHARE_DAYS": 7,  # share links expire after this many days unless staff choose
    "NIMBUS_CONSOLE_PAGE_SIZE": 50,  # staff console: conversations per page
    "REDIS_URL": None,
    "NIMBUS_JOBS_DB": None,  # the SQLite file of the job queue (default: instance/jobs.db)
    "NIMBUS_LIMITS_DB": None,  # without Redis, the SQLite file of rate-limit counts (default: instance/limits.db; "memory": per worker)
    "NIMBUS_JOBS_IMMEDIATE": False,  # run background jobs inline (no worker needed)
    "NIMBUS_STOP_WAIT": 10.0,  # seconds the Stop button waits for the reply to save its partial answer
    "SESSION_COOKIE_SAMESITE": "Lax",
    "SESSION_COOKIE_SECURE": False,  # on behind HTTPS: cookies only over TLS, and HSTS is sent
    "MAX_CONTENT_LENGTH": 1_000_000,  # bytes of one request body; more is refused with 413
    # Rate limits (webapp/security/limits.py): "N/minute;M/hour", Flask-Limiter's notation. Per IP
    # they are wide enough for a shop's customers behind one office or mobile-carrier NAT.
    "NIMBUS_RATE_LIMIT_ENABLED": True,
    "NIMBUS_RATE_LIMIT_SENDS_PER_SESSION": "20/minute;300/hour",
    "NIMBUS_RATE_LIMIT_SENDS_PER_IP": "200/minute;3000/hour",
    "NIMBUS_RATE_LIMIT_MEMORY_PER_SESSION": "30/minute;300/hour",
    "NIMBUS_RATE_LIMIT_MEMORY_PER_IP": "300/minute",
    "NIMBUS_RATE_LIMIT_SHARES_PER_SESSION": "10/minute;100/hour",  # share links made
    "NIMBUS_RATE_LIMIT_SHARES_PER_IP": "60/minute",
    "NIMBUS_RATE_LIMIT_FEEDBACK_PER_SESSION": "30/minute;300/hour",  # thumbs and comments
    "NIMBUS_RATE_LIMIT_FEEDBACK_PER_IP": "300/minute",
    "NIMBUS_RATE_LIMIT_IMPORTS_PER_SESSION": "5/minute;30/hour",  # uploads at /import
    "NIMBUS_RATE_LIMIT_IMPORTS_PER_IP": "10/minute;60/hour",
    "NIMBUS_RATE_LIMIT_SIGN_IN_PER_IP": "10/minute;100/hour",  # failed sign-ins, any account
    "NIMBUS_RATE_LIMIT_SIGN_UP_PER_IP": "10/minute;50/hour",  # sign-up forms sent
    "NIMBUS_RATE_LIMIT_GUESTS_PER_IP": "120/minute;1000/hour",  # guests stored (at a browser's first write)
    "NIMBUS_RATE_LIMIT_SHARE_OPENS_PER_IP": "60/minute;600/hour",  # /s/TOKEN pages, found or not
    "NIMBUS_PROXY_HOPS": 0,  # reverse proxies in front (their X-Forwarded-For is trusted)
    "WTF_CSRF_TIME_LIMIT": None,  # CSRF tokens last as long as the session: a tab left open still sends
    # Long-term memory (webapp/memories/, docs/memory.md)
    "NIMBUS_MEMORY_BLOCK_LIMIT": 10,  # memories in every prompt: the newest N in scope
    "NIMBUS_MEMORY_TOOLS": True,  # save_memory, search_memories, search_history for the model
    "NIMBUS_MEMORY_SEARCH": True,  # hybrid recall (keywords + embeddings); off: keywords only
    "NIMBUS_MEMORY_EMBEDDINGS": "minilm",  # minilm (embedded) or openai (OPENAI_BASE_URL)
    "NIMBUS_EMBEDDING_MODEL": "text-embedding-3-small",  # with NIMBUS_MEMORY_EMBEDDINGS=openai
    "NIMBUS_MEMORY_CANDIDATE_POOL": 600,  # rows scored per search: best keyword hits + newest
    "NIMBUS_MEMORY_MIN_SIMILARITY": 0.2,  # below it a row needs a keyword hit to be returned
    "NIMBUS_MEMORY_KEYWORD_WEIGHT": 0.8,  # hybrid: keyword share of the fusion (bench/recall.py --tune)
    "NIMBUS_HISTORY_FUSION": "score",  # conversation search: score (scaled scores) or rank (as memories)
    "NIMBUS_MEMORY_MODEL": None,  # the distiller's model; None: NIMBUS_MODEL
    "NIMBUS_MEMORY_PROMPT": None,  # a text file replacing the distiller's instructions
    "NIMBUS_MEMORY_DISTIL_ON_COMPRESS": True,  # distil once turns leave the history window
    "NIMBUS_MEMORY_MIN_MESSAGES": 4,  # new messages needed before distilling on compression
    "NIMBUS_MEMORY_MAX_WINDOW_TURNS": 40,  # turns read per distiller call
    "NIMBUS_MEMORY_MAX_TRIES": 3,  # cut off or refused reads of one window before it is given up
    "NIMBUS_MEMORY_RETRY_MINUTES": 5.0,  # wait after the first such read; doubles after each
    "NIMBUS_MEMORY_SWEEP": True,  # the worker distils inactive conversations every 5 minutes
    "NIMBUS_MEMORY_INACTIVE_MINUTES": 30,
    "NIMBUS_MEMORY_SHARING_DEFAULT": True,  # for people who never chose
    "NIMBUS_MEMORY_CHAT_WRITES_WORKSPACE": False,  # may a chat write shop-wide shared memories?
}

# The kind of each setting whose default is None; every other setting is its default's kind.
NONE_KINDS = {"NIMBUS_CONTEXT_WINDOW": int, "NIMBUS_PROVIDER_SLOTS": int, "WTF_CSRF_TIME_LIMIT": int}


def kind_of(key):
    """The type a setting holds: its default's, or NONE_KINDS's for a None default, else str."""
    default = DEFAULTS.get(key)
    return NONE_KINDS.get(key) or (type(default) if default is not None else str)


# The typed table of every setting (name, kind, default), checked by pydantic: a value read
# from the environment is parsed as its kind, and a wrong one refused with the setting's name.
Settings = create_model("Settings", __config__=ConfigDict(extra="ignore"), **{
    key: (kind_of(key) | None if default is None else kind_of(key), default)
    for key, default in DEFAULTS.items()})


class BadSetting(ValueError):
    """A setting from the environment that is not of its kind; the text names it."""


KIND_WORDS = {int: "a whole number", float: "a number", bool: "true or false", str: "text"}


def environment_text(key, value: str):
    """What an empty or padded environment value means before it is parsed: an empty text
    setting is unset, an empty switch is off (as `export NIMBUS_GUESTS=` reads)."""
    kind = kind_of(key)
    if kind is str:
        return value or None
    return False if kind is bool and not value.strip() else value.strip()


def from_environment(keys):
    """Read the known keys from os.environ (after .env was loaded), each parsed as its kind;
    BadSetting names every one that is not."""
    given = {k: environment_text(k, os.environ[k]) for k in keys if k in os.environ}
    try:
        parsed = Settings.model_validate(given)
    except ValidationError as error:
        wrong = sorted({str(e["loc"][0]) for e in error.errors()})
        raise BadSetting("; ".join(f"{key}={os.environ[key]!r} is not {KIND_WORDS[kind_of(key)]}"
                                   for key in wrong)) from None
    return {key: getattr(parsed, key) for key in given}


def database_uri(app):
    """DATABASE_URL wins; otherwise a SQLite file in the instance folder."""
    url = app.config.get("DATABASE_URL")
    if url:
        # Heroku-style URLs name the driver "postgres"; SQLAlchemy wants psycopg 3 explicitly.
        if url.startswith("postgres://"):
            url = "postgresql://" + url[len("postgres://"):]
        if url.startswith("postgresql://"):
            url = "postgresql+psycopg://" + url[len("postgresql://"):]
        return url
    return "sqlite:///" + os.path.join(app.instance_path, "nimbus.db")


DEV_SECRET_KEY = "dev-only-change-me"  # debug and tests only: anyone can sign cookies with it


class InsecureSecretKey(RuntimeError):
    """SECRET_KEY is the published development value outside debug and tests."""


def secret_key(app) -> str:
    """The configured SECRET_KEY; else the one kept in the instance folder, made at the first
    start (init-db) so that the web workers and the job worker all sign with the same key."""
    configured = app.config.get("SECRET_KEY")
    relaxed = app.debug or app.testing
    if configured == DEV_SECRET_KEY and not relaxed:
        raise InsecureSecretKey(
            f"SECRET_KEY is the development value {DEV_SECRET_KEY!r}, with which anyone can sign "
            "a session cookie. Remove it (init-db then keeps a random key in instance/secret_key) "
            "or set a random one: python -c 'import secrets; print(secrets.token_hex(32))'")
    if configured:
        return configured
    path = secret_key_path(app)
    if not os.path.exists(path) and relaxed:
        if not app.testing:  # debug: said out loud, so a debug server on a network is noticed
            logging.getLogger(__name__).warning(
                "FLASK_DEBUG is on and %s does not exist: cookies are signed with the published "
                "development key %r; anyone can forge a session. Run `flask init-db` for a "
                "random key.", path, DEV_SECRET_KEY)
        return DEV_SECRET_KEY
    key, created = read_or_create_key(path)
    app.extensions["secret_key_file"] = (path, created)  # init-db says where it is
    return key


def secret_key_path(app) -> str:
    return app.config.get("NIMBUS_SECRET_KEY_FILE") or os.path.join(app.instance_path, "secret_key")


def read_or_create_key(path: str) -> tuple[str, bool]:
    """Read the key file, or write a new random key there (0600): written aside and linked into
    place, so processes starting together all end up with the one that won."""
    created = False
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        draft = f"{path}.{os.getpid()}.{secrets.token_hex(4)}"
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_hex(32) + "\n")
        try:
            os.link(draft, path)
            created = True
        except FileExistsError:
            pass  # another process won: use its key
        finally:
            os.remove(draft)
    with open(path) as handle:
        key = handle.read().strip()
    if not key:
        raise InsecureSecretKey(f"{path} is empty: delete it and run init-db to write a new key")
    return key, created
