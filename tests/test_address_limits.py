"""Limits per address where nobody is signed in yet: sign-in, sign-up, new guests, share links;
a lock-out that holds for the attacker's address only; X-Forwarded-For trusted only when set."""
import re
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from webapp import create_app
from webapp.extensions import db
from webapp.models import AuditEntry, ShareLink, User, utcnow
from webapp.storage import create_conversation

from .accounts_support import PASSWORD, make_account, sign_in

ATTACKER, OWNER = "203.0.113.66", "198.51.100.8"


@pytest.fixture
def limited(app):
    """The test app with small limits, so a test reaches them in a few requests."""
    def build(**config):
        return create_app({"TESTING": True, "SECRET_KEY": "test",
                           "DATABASE_URL": app.config["DATABASE_URL"],
                           "NIMBUS_OFFLINE_WORDS_PER_SECOND": 0, "NIMBUS_MEMORY_SEARCH": False,
                           **config})
    return build


def from_address(app, ip: str, **environ):
    client = app.test_client()
    client.environ_base.update({"REMOTE_ADDR": ip, **environ})
    return client


def count(model) -> int:
    db.session.rollback()
    return db.session.scalar(select(func.count()).select_from(model))


def test_the_nth_failed_sign_in_from_one_address_gets_429_with_retry_after(limited):
    app = limited(NIMBUS_RATE_LIMIT_SIGN_IN_PER_IP="3/minute", NIMBUS_LOGIN_MAX_FAILURES=50)
    make_account("kim@example.com")
    client = from_address(app, ATTACKER)
    answers = [sign_in(client, f"user{n}@example.com", "guess").status_code for n in range(4)]
    assert answers == [401, 401, 401, 429]
    refused = sign_in(client, "kim@example.com")  # even the right password waits
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    assert f"wait {refused.headers['Retry-After']} second" in refused.text
    assert "Too many sign-in attempts" in refused.text
    assert sign_in(from_address(app, OWNER), "kim@example.com").status_code == 303


def test_a_refused_sign_in_for_htmx_or_json_is_a_partial_or_json(limited):
    app = limited(NIMBUS_RATE_LIMIT_SIGN_IN_PER_IP="1/minute")
    client = from_address(app, ATTACKER)
    sign_in(client, "nobody@example.com", "guess")
    token = client.environ_base["HTTP_X_CSRFTOKEN"]
    partial = client.post("/login", data={"email": "a@example.com", "password": "x",
                                          "csrf_token": token}, headers={"HX-Request": "true"})
    assert partial.status_code == 429 and partial.headers["HX-Retarget"]
    assert "<html" not in partial.text and "Too many sign-in attempts" in partial.text
    answer = client.post("/login", data={"email": "a@example.com", "password": "x",
                                         "csrf_token": token},
                         headers={"Accept": "application/json"})
    assert answer.status_code == 429 and "Too many sign-in attempts" in answer.json["error"]


def test_successful_sign_ins_do_not_use_up_an_address(limited):
    app = limited(NIMBUS_RATE_LIMIT_SIGN_IN_PER_IP="2/minute")
    make_account("kim@example.com")
    assert all(sign_in(from_address(app, OWNER), "kim@example.com").status_code == 303
               for _ in range(4))


def test_the_owner_signs_in_from_another_address_while_the_attackers_is_locked(limited):
    app = limited(NIMBUS_LOGIN_MAX_FAILURES=3)
    make_account("kim@example.com")
    attacker = from_address(app, ATTACKER)
    for _ in range(3):
        assert sign_in(attacker, "kim@example.com", "guess guess").status_code == 401
    locked = sign_in(attacker, "kim@example.com")  # the right password, from the locked address
    assert locked.status_code == 401 and "do not match an account" in locked.text
    assert sign_in(from_address(app, OWNER), "kim@example.com").status_code == 303
    assert sign_in(from_address(app, ATTACKER), "kim@example.com").status_code == 401


def test_failures_from_many_addresses_reach_the_accounts_ceiling_and_lock_it_for_all(limited):
    app = limited(NIMBUS_LOGIN_MAX_FAILURES=2, NIMBUS_LOGIN_ACCOUNT_MAX_FAILURES=6)
    make_account("kim@example.com")
    for n in range(6):
        sign_in(from_address(app, f"192.0.2.{n}"), "kim@example.com", "guess guess")
    assert sign_in(from_address(app, OWNER), "kim@example.com").status_code == 401
    user = db.session.scalar(select(User).where(User.email == "kim@example.com"))
    assert user.locked_until > utcnow()


def test_a_right_password_clears_that_addresss_earlier_mistakes(limited):
    app = limited(NIMBUS_LOGIN_MAX_FAILURES=3)
    make_account("kim@example.com")
    client = from_address(app, OWNER)
    for _ in range(2):
        sign_in(client, "kim@example.com", "typo typo")
    assert sign_in(client, "kim@example.com").status_code == 303
    again = from_address(app, OWNER)
    for _ in range(2):
        sign_in(again, "kim@example.com", "typo typo")
    assert sign_in(again, "kim@example.com").status_code == 303


def test_sign_ups_from_one_address_past_the_limit_get_429_and_create_nobody(limited):
    app = limited(NIMBUS_RATE_LIMIT_SIGN_UP_PER_IP="2/minute")
    client = from_address(app, ATTACKER)
    token = re.search(r'csrf-token" content="([^"]+)"', client.get("/signup").text).group(1)

    def sign_up(n):
        return client.post("/signup", data={"email": f"new{n}@example.com", "name": "New",
                                            "password": PASSWORD, "csrf_token": token})
    assert sign_up(0).status_code == 303
    client.post("/logout", data={"csrf_token": token})
    token = re.search(r'csrf-token" content="([^"]+)"', client.get("/signup").text).group(1)
    assert sign_up(1).status_code == 303
    client.post("/logout", data={"csrf_token": token})
    token = re.search(r'csrf-token" content="([^"]+)"', client.get("/signup").text).group(1)
    users = count(User)
    refused = sign_up(2)
    assert refused.status_code == 429 and "Retry-After" in refused.headers
    assert count(User) == users


def writer(app, ip: str, **environ):
    """A new browser at `ip` that opened the chat page and is about to write (CSRF token in hand)."""
    client = from_address(app, ip, **environ)
    page = client.get("/")
    assert page.status_code == 200
    client.environ_base["HTTP_X_CSRFTOKEN"] = re.search(
        r'csrf-token" content="([^"]+)"', page.text).group(1)
    return client


def test_guests_from_one_address_past_the_limit_create_no_rows(limited):
    app = limited(NIMBUS_RATE_LIMIT_GUESTS_PER_IP="3/minute")
    kept = writer(app, ATTACKER)
    assert kept.post("/messages", data={"message": ""}).status_code == 204  # its guest is stored
    for _ in range(2):
        assert writer(app, ATTACKER).post("/messages", data={"message": ""}).status_code == 204
    users = count(User)
    refused = [writer(app, ATTACKER).post("/messages", data={"message": "Hi"}) for _ in range(5)]
    assert {answer.status_code for answer in refused} == {429}  # reading was free; writing is not
    assert int(refused[0].headers["Retry-After"]) > 0 and "new visitors" in refused[0].text
    assert count(User) == users
    assert kept.post("/messages", data={"message": ""}).status_code == 204  # its guest goes on
    assert writer(app, OWNER).post("/messages", data={"message": ""}).status_code == 204


def test_guessing_share_tokens_hits_429_and_a_refused_open_writes_nothing(limited, alex):
    app = limited(NIMBUS_RATE_LIMIT_SHARE_OPENS_PER_IP="3/minute")
    link = ShareLink(conversation_id=create_conversation(alex).id,
                     expires_at=utcnow() + timedelta(days=1))
    db.session.add(link)
    db.session.commit()
    with app.test_request_context():
        from webapp.staff.shares import serializer
        token = serializer().dumps([link.id, link.key])
    client = from_address(app, ATTACKER)
    answers = [client.get(f"/s/guess{n}").status_code for n in range(3)]
    entries = count(AuditEntry)
    refused = client.get(f"/s/{token}")  # even the real one, once the address guessed enough
    assert answers == [404, 404, 404] and refused.status_code == 429
    assert "Retry-After" in refused.headers and count(AuditEntry) == entries
    assert from_address(app, OWNER).get(f"/s/{token}").status_code == 200


def test_a_forged_x_forwarded_for_is_ignored_by_default(limited):
    app = limited(NIMBUS_RATE_LIMIT_GUESTS_PER_IP="2/minute")
    answers = [writer(app, ATTACKER, HTTP_X_FORWARDED_FOR=f"192.0.2.{n}")
               .post("/messages", data={"message": ""}).status_code for n in range(3)]
    assert answers == [204, 204, 429]


def test_x_forwarded_for_is_honoured_with_the_proxy_setting(limited):
    app = limited(NIMBUS_RATE_LIMIT_GUESTS_PER_IP="2/minute", NIMBUS_PROXY_HOPS=1,
                  NIMBUS_LOGIN_MAX_FAILURES=2)
    proxy = "10.0.0.2"
    answers = [writer(app, proxy, HTTP_X_FORWARDED_FOR=f"192.0.2.{n}")
               .post("/messages", data={"message": ""}).status_code for n in range(3)]
    assert answers == [204, 204, 204]  # three clients behind one proxy
    make_account("kim@example.com")
    attacker = from_address(app, proxy, HTTP_X_FORWARDED_FOR=ATTACKER)
    for _ in range(2):
        sign_in(attacker, "kim@example.com", "guess guess")
    assert sign_in(attacker, "kim@example.com").status_code == 401  # locked, that client only
    owner = from_address(app, proxy, HTTP_X_FORWARDED_FOR=f"{ATTACKER}, {OWNER}")
    assert sign_in(owner, "kim@example.com").status_code == 303  # the hop the proxy saw counts


def test_with_redis_down_the_lock_out_still_holds_and_nothing_answers_500(limited):
    app = limited(REDIS_URL="redis://127.0.0.1:1/0", NIMBUS_JOBS_IMMEDIATE=True,
                  NIMBUS_LOGIN_MAX_FAILURES=2)
    make_account("kim@example.com")
    attacker = from_address(app, ATTACKER)
    for _ in range(2):
        assert sign_in(attacker, "kim@example.com", "guess guess").status_code == 401
    assert sign_in(attacker, "kim@example.com").status_code == 401
    assert sign_in(from_address(app, OWNER), "kim@example.com").status_code == 303


def test_with_redis_a_lock_out_on_one_worker_holds_on_every_other(limited):
    import secrets

    import redis
    url = "redis://127.0.0.1:6379/15"
    redis.Redis.from_url(url).ping()  # the scale path needs a running Redis
    prefix = f"nimbus-test-{secrets.token_hex(4)}"
    workers = [limited(REDIS_URL=url, RATELIMIT_KEY_PREFIX=prefix, NIMBUS_JOBS_IMMEDIATE=True,
                       NIMBUS_LOGIN_MAX_FAILURES=2) for _ in range(2)]
    make_account("kim@example.com")
    for worker in workers:
        assert sign_in(from_address(worker, ATTACKER), "kim@example.com", "guess").status_code == 401
    assert sign_in(from_address(workers[1], ATTACKER), "kim@example.com").status_code == 401
    assert sign_in(from_address(workers[0], OWNER), "kim@example.com").status_code == 303
    keys = redis.Redis.from_url(url).keys(f"*{prefix}*")
    assert keys and redis.Redis.from_url(url).delete(*keys)
