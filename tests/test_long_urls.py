"""A URL too long to serve is refused with the same security headers as every other answer, by
the app (a readable 414) up to gunicorn's ceiling and by gunicorn itself beyond it."""
import http.client

import pytest

from webapp.security.headers import HEADERS
from webapp.security.validation import MAX_REQUEST_LINE

from .fakes import live_app


@pytest.fixture(scope="module")
def gunicorn(tmp_path_factory):
    """The app as scripts/serve.sh serves it: gunicorn, gevent workers, gunicorn.conf.py."""
    folder = tmp_path_factory.mktemp("long-urls")
    env = live_app.app_environment(f"sqlite:///{folder}/nimbus.db", "http://127.0.0.1:9/v1",
                                   str(folder))
    server, port = live_app.start_app(env, 1, str(folder))
    yield port
    server.terminate()
    server.wait(30)


def get(port: int, path: str) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", path)
    response = connection.getresponse()
    response.body = response.read().decode("latin-1")
    connection.close()
    return response


@pytest.mark.parametrize("length", [MAX_REQUEST_LINE, 8000, 20_000])
def test_a_too_long_url_gets_414_with_the_security_headers(gunicorn, length):
    response = get(gunicorn, "/search?q=" + "a" * length)
    assert response.status == 414
    for name, value in HEADERS.items():
        assert response.getheader(name) == value, name
    assert response.getheader("Cache-Control") == "no-store"


def test_the_app_says_what_was_wrong_where_gunicorn_would_not(gunicorn):
    assert "address is too long" in get(gunicorn, "/search?q=" + "a" * 6000).body


def test_a_long_url_within_the_bound_is_served(gunicorn):
    response = get(gunicorn, "/login?next=/" + "a" * 3000)
    assert response.status == 200 and response.getheader("X-Frame-Options") == "DENY"
