"""Outages answer cleanly: Redis down, the limits count in memory; the database down, a 503
that says when to try again, as a page or as JSON."""
import re

import pytest
from sqlalchemy.exc import OperationalError

from webapp import create_app

from .support import wait_for_replies


def visitor(app):
    client = app.test_client()
    token = re.search(r'csrf-token" content="([^"]+)"', client.get("/").text).group(1)
    client.environ_base["HTTP_X_CSRFTOKEN"] = token
    return client


@pytest.fixture
def redis_down(app):
    """The app with its limiter pointed at a closed port, as when Redis was stopped."""
    other = create_app({"TESTING": True, "SECRET_KEY": "test", "DATABASE_URL": app.config["DATABASE_URL"],
                        "REDIS_URL": "redis://127.0.0.1:1/0",
                        "NIMBUS_RATE_LIMIT_SENDS_PER_SESSION": "2/minute",
                        "NIMBUS_OFFLINE_WORDS_PER_SECOND": 0})
    yield other
    wait_for_replies(other)


def test_with_redis_down_sends_still_work_and_are_still_limited(redis_down):
    client = visitor(redis_down)
    answers = [client.post("/messages", data={"message": "Hi"}).status_code for _ in range(3)]
    assert answers == [200, 200, 429]  # counted in memory meanwhile


@pytest.fixture
def database_down(app, monkeypatch):
    def unreachable(*args, **kwargs):
        raise OperationalError("SELECT 1", {}, Exception("could not connect to server"))
    client = visitor(app)
    from webapp.extensions import db
    monkeypatch.setattr(db.session, "execute", unreachable)
    monkeypatch.setattr(db.session, "get", unreachable)
    monkeypatch.setattr(db.session, "scalar", unreachable)
    monkeypatch.setattr(db.session, "commit", unreachable)
    return client


def test_with_the_database_down_a_page_answers_503_with_retry_after(database_down):
    answer = database_down.get("/memories")
    assert answer.status_code == 503 and int(answer.headers["Retry-After"]) > 0
    assert "try again" in answer.text.lower() and "Internal Server Error" not in answer.text


def test_with_the_database_down_a_json_request_gets_json(database_down):
    answer = database_down.get("/memories", headers={"Accept": "application/json"})
    assert answer.status_code == 503 and answer.is_json and "error" in answer.get_json()
    htmx = database_down.post("/messages", data={"message": "Hi"}, headers={"HX-Request": "true"})
    assert htmx.status_code == 503 and htmx.headers.get("HX-Retarget")
