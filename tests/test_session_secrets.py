"""Sessions no one can forge: no empty session token signs anyone in, and the cookie signing key
is a random one kept in the instance folder unless configured; the published dev value is refused."""
import os
import stat

import pytest

from webapp import create_app
from webapp.config import DEV_SECRET_KEY, InsecureSecretKey
from webapp.extensions import db

from .accounts_support import make_account


def production_app(tmp_path, **config):
    """An app as gunicorn or the job worker builds it: no TESTING, no debug."""
    return create_app({"DATABASE_URL": f"sqlite:///{tmp_path / 'prod.db'}",
                       "NIMBUS_SECRET_KEY_FILE": str(tmp_path / "instance" / "secret_key"),
                       "NIMBUS_JOBS_IMMEDIATE": True, **config})


def test_a_cookie_with_an_empty_session_token_opens_no_account(app, client):
    victim = make_account("victim@example.com")
    victim.session_token = ""  # as accounts made before issue11 were upgraded
    db.session.commit()
    with client.session_transaction() as session:
        session["_user_id"] = f"{victim.id}:"
    page = client.get("/account/data.json")
    assert "victim@example.com" not in page.text


def test_without_a_secret_key_each_process_uses_one_random_key_kept_private(tmp_path):
    first, second = production_app(tmp_path), production_app(tmp_path)  # web worker, job worker
    key = first.config["SECRET_KEY"]
    assert key == second.config["SECRET_KEY"] and len(key) == 64 and key != DEV_SECRET_KEY
    path = tmp_path / "instance" / "secret_key"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert os.listdir(tmp_path / "instance") == ["secret_key"]  # no draft left behind


def test_init_db_says_where_the_key_is(tmp_path):
    app = production_app(tmp_path)
    with app.app_context():
        result = app.test_cli_runner().invoke(args=["init-db"])
        assert result.exit_code == 0, result.output
        assert str(tmp_path / "instance" / "secret_key") in result.output
        db.engine.dispose()


def test_the_development_key_is_refused_outside_debug_and_tests(tmp_path):
    with pytest.raises(InsecureSecretKey, match="development value"):
        production_app(tmp_path, SECRET_KEY=DEV_SECRET_KEY)
    testing = production_app(tmp_path, SECRET_KEY=DEV_SECRET_KEY, TESTING=True)
    assert testing.config["SECRET_KEY"] == DEV_SECRET_KEY


def test_a_configured_key_wins_and_writes_no_file(tmp_path):
    app = production_app(tmp_path, SECRET_KEY="a" * 64)
    assert app.config["SECRET_KEY"] == "a" * 64
    assert not os.path.exists(tmp_path / "instance" / "secret_key")


def test_debug_without_a_key_file_warns_that_the_published_key_signs_cookies(tmp_path, monkeypatch,
                                                                             caplog):
    monkeypatch.setenv("FLASK_DEBUG", "1")
    debug = production_app(tmp_path)
    assert debug.debug and debug.config["SECRET_KEY"] == DEV_SECRET_KEY
    assert any("development key" in r.getMessage() and r.levelname == "WARNING"
               for r in caplog.records)
