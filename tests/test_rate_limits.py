"""Rate limits on sends and memory writes: per session and per IP, a 429 that says what to do."""
import re

import pytest
from sqlalchemy import func, select

from webapp import create_app
from webapp.extensions import db
from webapp.models import Turn

from .support import wait_for_replies

HTMX = {"HX-Request": "true"}


@pytest.fixture
def limited(app):
    """The test app with small limits, so a test reaches them in a few requests."""
    def build(**limits):
        config = {"TESTING": True, "SECRET_KEY": "test", "DATABASE_URL": app.config["DATABASE_URL"],
                  "NIMBUS_RATE_LIMIT_SENDS_PER_SESSION": "2/minute",
                  "NIMBUS_RATE_LIMIT_SENDS_PER_IP": "100/minute",
                  "NIMBUS_RATE_LIMIT_MEMORY_PER_SESSION": "2/minute",
                  "NIMBUS_RATE_LIMIT_MEMORY_PER_IP": "100/minute", **limits}
        built.append(create_app(config))
        return built[-1]
    built = []
    yield build
    for other in built:
        wait_for_replies(other)


def visitor(app, ip="203.0.113.7"):
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = ip
    token = re.search(r'csrf-token" content="([^"]+)"', client.get("/").text).group(1)
    client.environ_base["HTTP_X_CSRFTOKEN"] = token
    return client


def turns() -> int:
    db.session.rollback()
    return db.session.scalar(select(func.count()).select_from(Turn))


def test_a_session_sending_too_fast_gets_a_429_that_says_to_wait(limited):
    client = visitor(limited())
    for _ in range(2):
        assert client.post("/messages", data={"message": "Hello"}).status_code == 200
    before = turns()
    refused = client.post("/messages", data={"message": "Hello again"}, headers=HTMX)
    assert refused.status_code == 429
    wait = int(refused.headers["Retry-After"])
    assert f"wait {wait} second" in refused.text  # the words say what the header says
    assert refused.headers["HX-Retarget"] == "#composer-error, #page-alert"
    assert int(refused.headers["Retry-After"]) > 0
    assert turns() == before  # nothing stored


def test_the_limit_is_per_session_a_neighbour_still_sends(limited):
    app = limited()
    first, second = visitor(app), visitor(app)
    for _ in range(2):
        first.post("/messages", data={"message": "Hello"})
    assert first.post("/messages", data={"message": "Hi"}).status_code == 429
    assert second.post("/messages", data={"message": "Hi"}).status_code == 200


def test_an_address_sending_too_fast_is_limited_whatever_its_sessions(limited):
    app = limited(NIMBUS_RATE_LIMIT_SENDS_PER_IP="3/minute")
    answers = [visitor(app).post("/messages", data={"message": "Hi"}).status_code for _ in range(4)]
    assert answers == [200, 200, 200, 429]
    assert visitor(app, ip="198.51.100.2").post("/messages", data={"message": "Hi"}).status_code == 200


def test_memory_writes_are_limited_too(limited):
    client = visitor(limited())
    for n in range(2):
        assert client.post("/memories", data={"content": f"Note {n}", "scope": "workspace"},
                           headers=HTMX).status_code == 200
    refused = client.post("/memories", data={"content": "Note 3", "scope": "workspace"})
    assert refused.status_code == 429 and "memory changes" in refused.text
    assert client.get("/memories").status_code == 200  # reading is never limited


def test_rate_limits_can_be_turned_off(limited):
    client = visitor(limited(NIMBUS_RATE_LIMIT_ENABLED=False))
    assert all(client.post("/messages", data={"message": "Hi"}).status_code == 200
               for _ in range(4))


def test_with_redis_the_counters_are_shared_by_every_worker(limited):
    import secrets

    import redis
    url = "redis://127.0.0.1:6379/15"
    redis.Redis.from_url(url).ping()  # the scale path needs a running Redis
    prefix = f"nimbus-test-{secrets.token_hex(4)}"
    workers = [limited(REDIS_URL=url, RATELIMIT_KEY_PREFIX=prefix,
                       NIMBUS_RATE_LIMIT_MEMORY_PER_IP="2/minute") for _ in range(2)]
    client_one, client_two = visitor(workers[0]), visitor(workers[1])
    assert client_one.post("/memories", data={"content": "A"}).status_code == 302
    assert client_two.post("/memories", data={"content": "B"}).status_code == 302
    assert client_one.post("/memories", data={"content": "C"}).status_code == 429
    keys = redis.Redis.from_url(url).keys(f"*{prefix}*")
    assert keys and redis.Redis.from_url(url).delete(*keys)
