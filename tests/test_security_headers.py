"""Security headers on every response, a session cookie scripts cannot read, templates the
Content-Security-Policy lets run."""
import pathlib
import re

import pytest

from webapp import create_app
from webapp.extensions import db

from .support import ask, guest_user

TEMPLATES = pathlib.Path(__file__).parent.parent / "templates"


@pytest.mark.parametrize("path", ["/", "/memories", "/search?q=x", "/static/js/chat.js",
                                  "/c/" + "0" * 32, "/c/%00", "/no/such/page"])
def test_every_response_carries_the_security_headers(guest, path):
    with guest.get(path) as response:
        headers = response.headers
    policy = headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "style-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy and "unsafe-inline" not in policy
    assert "unsafe-eval" not in policy
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "same-origin"
    assert headers["X-Frame-Options"] == "DENY"
    assert "Strict-Transport-Security" not in headers  # only behind HTTPS


def test_conversation_pages_and_streams_carry_them_too(guest):
    conversation = ask(guest_user(guest), "Where is my order #1041?")[1]
    for path in (f"/c/{conversation.id}", f"/c/{conversation.id}/viewer",
                 f"/c/{conversation.id}/viewer.json", f"/c/{conversation.id}/turns/0/stream"):
        assert "Content-Security-Policy" in guest.get(path).headers


def test_the_session_cookie_is_httponly_and_samesite_lax(client):
    cookie = client.get("/").headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie


def test_behind_https_the_cookie_is_secure_and_hsts_is_sent(app, tmp_path):
    secure = create_app({"TESTING": True, "SECRET_KEY": "t", "SESSION_COOKIE_SECURE": True,
                         "DATABASE_URL": app.config["DATABASE_URL"]})
    with secure.app_context():
        response = secure.test_client().get("/", base_url="https://localhost")
        db.engine.dispose()
    cookies = response.headers.getlist("Set-Cookie")
    assert cookies and all("Secure" in cookie for cookie in cookies)  # session and remember cookie
    assert response.headers["Strict-Transport-Security"].startswith("max-age=")


INLINE = {
    "inline <script>": re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I),
    "event handler attribute": re.compile(r"\son[a-z]+\s*=", re.I),
    "hx-on attribute": re.compile(r"\shx-on[:\-]", re.I),
    "javascript: URL": re.compile(r"javascript:", re.I),
    "inline style attribute": re.compile(r"\sstyle\s*=", re.I),
}


@pytest.mark.parametrize("template", sorted(p.relative_to(TEMPLATES).as_posix()
                                            for p in TEMPLATES.rglob("*.html")))
def test_no_template_has_script_or_style_the_policy_would_block(template):
    text = (TEMPLATES / template).read_text()
    found = [name for name, pattern in INLINE.items() if pattern.search(text)]
    assert not found, f"{template}: {', '.join(found)} (move it to static/js/ or static/css/)"


def test_private_pages_and_json_are_never_cached(guest, app):
    conversation = ask(guest_user(guest), "Where is my order #1041?")[1]
    for path in (f"/c/{conversation.id}", f"/c/{conversation.id}/viewer",
                 f"/c/{conversation.id}/viewer.json", "/account", "/account/data.json", "/memories"):
        assert "no-store" in guest.get(path).headers.get("Cache-Control", ""), path


def test_an_unknown_viewer_json_answers_its_404_as_json(guest, alex):
    foreign = ask(alex, "Hello")[1]
    for path in (f"/c/{foreign.id}/viewer.json", "/c/nope/viewer.json"):
        answer = guest.get(path)
        assert answer.status_code == 404 and answer.is_json and "error" in answer.get_json()
