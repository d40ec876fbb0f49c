"""Fuzz every route and every command with odd input: never a 5xx, never a traceback, and a
refused request stores nothing. Routes come from app.url_map, so new ones are covered as added.

Runs on SQLite and on PostgreSQL (skipped without a server, except in CI).
"""
import hashlib
import json
import re
from urllib.parse import urljoin, urlsplit

import click
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select, text

from webapp import create_app
from webapp.accounts import find_user, seed_demo
from webapp.database import create_schema
from webapp.extensions import db
from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.rows import remember

from .accounts_support import make_account, sign_in
from .support import ask, guest_user, open_as_guest, wait_for_replies
from .postgres_support import new_database

pytestmark = pytest.mark.slow  # fuzzing every route on both backends takes minutes

# Beyond 64 bits, and between 2**31 and 2**63-1 (ids are 32-bit columns on PostgreSQL)
HUGE = ["9223372036854775808", "9223372036854775807", "2147483648", "9" * 40, "-1"]
ODD_TEXT = ["\x00", "a\x00b", "%00", "%ff%fe", "\u202e\ufeff", "x" * 3000, "../../etc", "' OR 1=1 --"]
TEXT_FIELDS = ("message", "content", "title", "q")
NUMBER_FIELDS = ("order", "budget", "recent_turns", "max_age_days", "before", "seq", "a", "b",
                 "page", "min_turns", "max_turns", "days")
# "²" and "١" are str.isdigit() but not what int() (or a person) reads as a whole number
ODD_NUMBERS = HUGE + ["abc", "1e30", "nan", "inf", "\u00b2", "\u0661", "1_000"]
# Each case is one form (or query): odd text in every text field at once, odd numbers in every
# number field at once, and odd choices.
CASES = ([{name: value for name in TEXT_FIELDS} for value in ODD_TEXT]
         + [{name: value for name in NUMBER_FIELDS} for value in ODD_NUMBERS]
         + [{"since": "9999-12-31", "until": "9999-12-31"}, {"since": "0001-01-01", "until": "0001-01-01"},
            {"next": "/\n/x"}, {"next": "/%09/evil.example"}, {"next": "\\\\evil.example"}]
         + [{"scope": "bogus", "shared": "1", "shares": "maybe", "strategy": "bogus", "content": "x"},
            {"scope": "order", "order": "9" * 40, "content": "x"}])
SETTINGS = settings(max_examples=12, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def fuzz_app(request, tmp_path_factory):
    """One app per backend for the module, with the demo shop; rate limits off (one client)."""
    url, drop = database_for(request.param, tmp_path_factory)
    app = create_app({"TESTING": True, "SECRET_KEY": "fuzz", "DATABASE_URL": url,
                      "NIMBUS_RATE_LIMIT_ENABLED": False, "NIMBUS_STOP_WAIT": 0.5})
    with app.app_context():
        create_schema()
        seed_demo(app.config["NIMBUS_DEMO_TENANT"])
        db.session.remove()
    yield app
    wait_for_replies(app)
    with app.app_context():
        db.session.remove()
        db.engine.dispose()
    drop()


def database_for(backend, tmp_path_factory):
    if backend == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('fuzz') / 'nimbus.db'}", lambda: None
    return new_database("nimbus_fuzz")


@pytest.fixture
def world(fuzz_app):
    """A visitor with a conversation and a memory, and another customer's of each."""
    with fuzz_app.app_context():
        client = open_as_guest(fuzz_app.test_client())
        visitor, alex = guest_user(client), find_user("alex@example.com")
        own, foreign = ask(visitor, "Where is my order #1041?")[1], ask(alex, "Hello")[1]
        memory = remember(SessionScope.for_user(visitor), "Likes tea.", fuzz_app.config, source="hand")[0]
        theirs = remember(SessionScope.for_user(alex), "Likes coffee.", fuzz_app.config, source="hand")[0]
        if find_user("fuzz-admin@example.com") is None:
            make_account("fuzz-admin@example.com", role="admin")
        admin = fuzz_app.test_client()
        assert sign_in(admin, "fuzz-admin@example.com").status_code == 303
        yield {"client": client, "admin": admin, "visitor": visitor,
               "runner": fuzz_app.test_cli_runner(),
               "valid": {"conversation_id": own.id, "seq": "0", "memory_id": str(memory.id)},
               "foreign": {"conversation_id": foreign.id, "memory_id": str(theirs.id)}}
        wait_for_replies(fuzz_app)


def fingerprint() -> str:
    """Every table's row count, and what people can change in place (titles, settings, memories)."""
    db.session.rollback()
    tables = [t.name for t in db.metadata.sorted_tables
              if t.name not in ("locks", "stop_requests", "audit_log")]
    # Staff opening a conversation is audited even when the page then 404s (a missing turn):
    # that is a record of a read, not something the refused request stored.
    counts = db.session.execute(text("SELECT " + ", ".join(
        [f'(SELECT count(*) FROM "{name}")' for name in tables]
        + ["(SELECT count(*) FROM audit_log WHERE action != 'opened conversation')"]))).one()
    rows = db.session.execute(text("SELECT id, title, strategy FROM conversations ORDER BY id")).all()
    memories = db.session.execute(text("SELECT id, content FROM memories ORDER BY id")).all()
    return hashlib.sha256(repr((tuple(counts), rows, memories)).encode()).hexdigest()


# Would end the staff member's session halfway through a sweep (a guest simply gets a new one).
SESSION_ENDERS = {"accounts.logout", "personal_data.delete_data"}


def routes(app, who="client"):
    for rule in app.url_map.iter_rules():
        if rule.endpoint != "static" and not (who == "admin" and rule.endpoint in SESSION_ENDERS):
            for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
                yield rule, method


def path_for(rule, values: dict) -> str:
    return re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", lambda m: values.get(m.group(1), "1"), rule.rule)


def check(client, method, path, **kwargs):
    """Send one request; it must not fail, and when refused it must have stored nothing."""
    before = fingerprint()
    try:
        response = getattr(client, method.lower())(path, **kwargs)
        body = response.get_data(as_text=True)
    except Exception as error:  # TESTING propagates: an unhandled error is a 500
        pytest.fail(f"{method} {path} {kwargs.get('data')!r:.80}: raised {error!r}")
    where = f"{method} {path[:120]} {str(kwargs.get('data'))[:80]}"
    assert response.status_code < 500, f"{where}: {response.status_code} {body[:300]}"
    assert "Traceback" not in body, where
    if response.status_code >= 400:
        assert fingerprint() == before, f"{where}: refused with {response.status_code} but stored"
    return response


def id_variants(rule, world):
    """Each URL argument in turn replaced by an odd value; the others stay valid."""
    valid = world["valid"]
    for name in rule.arguments:
        odd = HUGE + ["0" * 32, "%00", "%ff", "x" * 300, "\u00e9"]
        if name in world["foreign"]:
            odd.append(world["foreign"][name])
        for value in odd:
            yield {**valid, name: value}


WHO = pytest.mark.parametrize("who", ["client", "admin"])  # a guest, and staff on the console
SWEEP = pytest.mark.timeout(900)  # every route times every case: minutes on a busy machine


@WHO
@SWEEP
def test_every_route_survives_odd_ids(fuzz_app, world, who):
    for rule, method in routes(fuzz_app, who):
        for values in id_variants(rule, world):
            check(world[who], method, path_for(rule, values), data={"message": "Hi"})


@WHO
@SWEEP
def test_every_route_survives_odd_fields_queries_and_bodies(fuzz_app, world, who):
    client = world[who]
    for rule, method in routes(fuzz_app, who):
        path = path_for(rule, world["valid"])
        for case in CASES:
            if method == "GET":
                check(client, method, path, query_string=case)
            else:
                check(client, method, path, data=case, headers={"HX-Request": "true"})
        if method != "GET":
            check(client, method, path, data=b"message=%ff&content=\xfe",
                  content_type="application/x-www-form-urlencoded")
            check(client, method, path, data={"message": "x" * 1_100_000})
            check(client, method, path, headers={"HX-Prompt": "a\x00", "HX-Request": "true"})
            check(client, method, path, data="{}", content_type="application/json")


@WHO
@pytest.mark.parametrize("zone", ["America", "Etc", "America/", "/etc/localtime", "..", "Mars/Base"])
def test_every_page_survives_a_forged_time_zone_cookie(fuzz_app, world, who, zone):
    client = world[who]
    client.set_cookie("nimbus_tz", zone)
    try:
        for rule, method in routes(fuzz_app, who):
            if method == "GET":
                check(client, method, path_for(rule, world["valid"]))
    finally:
        client.delete_cookie("nimbus_tz")


def test_a_url_encoded_title_is_checked_after_decoding(fuzz_app, world):
    path = f"/c/{world['valid']['conversation_id']}"
    for title in ("%00x", "%00", "a%00b", "%ff%fe"):  # as decoded from the form: title=%2500x
        refused = check(world["client"], "PATCH", path, data={"title": title},
                        headers={"HX-Request": "true", "HX-Prompt-URI-AutoEncoded": "true"})
        assert refused.status_code == 400


@pytest.mark.parametrize("target", ["/\n/x", "/\r\n/x", "/%09/evil.example", "/\t/evil.example",
                                    "\\evil.example", "/\\evil.example", "/%5Cevil.example",
                                    "https://evil.example", "//evil.example", "/%2F/evil.example"])
def test_signing_in_never_sends_the_browser_off_site(fuzz_app, world, target):
    client = fuzz_app.test_client()
    answer = sign_in(client, "fuzz-admin@example.com", next=target)
    assert answer.status_code == 303, answer.text[:300]
    location = answer.headers["Location"]
    # what a browser does with it: drops tabs and newlines, reads a backslash as a slash
    as_read = "".join(c for c in location if c not in "\t\r\n").replace("\\", "/")
    assert urlsplit(urljoin("http://localhost/login", as_read)).netloc == "localhost", location


@SETTINGS
@given(value=st.text(max_size=200) | st.integers().map(str) | st.floats().map(str))
def test_every_write_survives_generated_text(fuzz_app, world, value):
    client = world["client"]
    for rule, method in routes(fuzz_app):
        if method != "GET":
            check(client, method, path_for(rule, world["valid"]),
                  data={name: value for name in ("message", "content", "title", "budget", "order")})


def leaf_commands(group, prefix=()):
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from leaf_commands(command, (*prefix, name))
        elif command.callback and command.callback.__module__.startswith("webapp"):
            yield (*prefix, name), command


def run_command(runner, args, stdin="exit\n"):
    before = fingerprint()
    result = runner.invoke(args=list(args), input=stdin)
    where = " ".join(map(str, args))[:160]
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        f"flask {where}: raised {result.exception!r}"
    assert "Traceback" not in result.output, where
    if result.exit_code != 0:
        assert fingerprint() == before, f"flask {where}: failed but stored"
    return result


def test_every_command_survives_odd_arguments(fuzz_app, world):
    runner = world["runner"]
    for words, command in leaf_commands(fuzz_app.cli):
        if words in (("init-db",), ("memories", "embed")):
            continue  # no input to fuzz beyond flags; embedding loads the model
        params = [p for p in command.params if p.name != "help"]
        for value in HUGE + ODD_TEXT[:3] + ["", world["foreign"]["conversation_id"]]:
            arguments = [value for p in params if isinstance(p, click.Argument)]
            run_command(runner, (*words, *arguments))
            for option in (p for p in params if isinstance(p, click.Option) and not p.is_flag):
                run_command(runner, (*words, *arguments, option.opts[0], value))


def valid_export(world) -> dict:
    return json.loads(run_command(world["runner"], ("export", world["valid"]["conversation_id"],
                                                    "--user", world["visitor"].email)).output)


def paths_in(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths_in(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from paths_in(item, (*path, i))


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=20), lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=6)


@SETTINGS
@given(data=st.data())
def test_an_import_either_refused_or_shown_without_error(fuzz_app, world, tmp_path, data):
    """Mutate one place of a real export: the import is refused cleanly, or every page of the
    imported conversation still renders."""
    if "export" not in world:
        world["export"] = json.dumps(valid_export(world))
    document = json.loads(world["export"])
    path = data.draw(st.sampled_from([p for p in paths_in(document) if p]))
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = data.draw(JSON)
    file = tmp_path / "mutated.json"
    file.write_text(json.dumps(document))
    result = run_command(world["runner"], ("import", str(file), "--user", world["visitor"].email))
    if result.exit_code == 0 and "already imported: skipped" in result.output:
        assert "Nothing new to import" in result.output  # an example drawn twice: no copy
    elif result.exit_code == 0:
        imported = result.output.split("conversation: ")[1].strip()
        for rule, method in routes(fuzz_app):
            if method == "GET" and "conversation_id" in rule.arguments:
                check(world["client"], "GET", path_for(rule, {**world["valid"],
                                                              "conversation_id": imported}))
    else:
        assert result.output.startswith("Error: refused, nothing imported: ")
        assert result.output.count("\n") == 1
