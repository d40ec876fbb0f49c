"""The validation layer: bounded ids and numbers, NUL bytes and invalid UTF-8 get a clear 4xx."""
import pytest
from sqlalchemy import func, select

from webapp.extensions import db
from webapp.memories.models import Memory
from webapp.models import Conversation, Turn
from webapp.security.validation import NUL_MESSAGE, UTF8_MESSAGE, bounded_int

from .support import ask, guest_user

HUGE = "9223372036854775808"  # 2**63: one past what a BIGINT holds
HTMX = {"HX-Request": "true"}


def stored() -> tuple[int, int, int]:
    db.session.rollback()
    return tuple(db.session.scalar(select(func.count()).select_from(model))
                 for model in (Conversation, Turn, Memory))


@pytest.fixture
def conversation(guest):
    return ask(guest_user(guest), "Where is my order #1041?")[1]


@pytest.mark.parametrize("method, path", [
    ("get", "/c/{id}/turns/{huge}/stream"), ("post", "/c/{id}/turns/{huge}/stop"),
    ("post", "/memories/{huge}"), ("post", "/memories/{huge}/delete"),
    ("get", "/c/{id}/turns/99999999999999999999999999/stream"),
])
def test_ids_beyond_64_bits_are_not_found(guest, conversation, method, path):
    response = getattr(guest, method)(path.format(id=conversation.id, huge=HUGE))
    assert response.status_code == 404


@pytest.mark.parametrize("path", ["/c/{id}/viewer?before={huge}", "/c/{id}/viewer.json?before={huge}"])
def test_a_query_number_beyond_64_bits_falls_back_to_the_default(guest, conversation, path):
    assert guest.get(path.format(id=conversation.id, huge=HUGE)).status_code == 200


def test_bounded_int_refuses_what_no_column_holds():
    assert bounded_int("2147483647") == 2**31 - 1  # the 32-bit columns' largest
    for too_big in ("2147483648", "9223372036854775807", HUGE):
        with pytest.raises(ValueError):
            bounded_int(too_big)


@pytest.mark.parametrize("method, path, form, headers", [
    ("post", "/messages", {"message": "Hello\x00"}, {}),
    ("post", "/c/{id}/messages", {"message": "Hi\x00there"}, {}),
    ("patch", "/c/{id}", {"title": "A\x00B"}, {}),
    ("patch", "/c/{id}", {}, {"HX-Prompt": "A\x00B"}),
    ("patch", "/c/{id}", {}, {"HX-Prompt": "A%00B", "HX-Prompt-URI-AutoEncoded": "true"}),
    ("post", "/memories", {"content": "I like \x00 tea", "scope": "workspace"}, {}),
    ("get", "/c/%00", None, {}),
    ("get", "/search?q=%00", None, {}),
])
def test_nul_bytes_are_refused_with_a_reason_and_nothing_is_stored(guest, conversation, method,
                                                                 path, form, headers):
    before = stored()
    response = getattr(guest, method)(path.format(id=conversation.id), data=form, headers=headers)
    assert response.status_code == 400 and "NUL character" in response.text
    assert stored() == before
    assert db.session.get(Conversation, conversation.id).title != "AB"


def test_a_memory_edit_with_a_nul_byte_changes_nothing(app, guest):
    guest.post("/memories", data={"content": "I like tea.", "scope": "workspace"})
    memory = db.session.scalars(select(Memory)).one()
    response = guest.post(f"/memories/{memory.id}", data={"content": "I like\x00 coffee."})
    assert response.status_code == 400
    db.session.refresh(memory)
    assert memory.content == "I like tea."


@pytest.mark.parametrize("body", [b"message=%ff%fe", b"message=caf\xe9"])
def test_a_form_that_is_not_utf8_is_refused_not_dropped(guest, body):
    before = stored()
    response = guest.post("/messages", data=body, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400 and UTF8_MESSAGE in response.text
    assert stored() == before


def test_a_url_that_is_not_utf8_is_refused(guest):
    assert guest.get("/search?q=%ff").status_code == 400
    assert guest.get("/c/%ff%fe").status_code == 400


def test_an_htmx_refusal_lands_in_the_pages_error_slot(guest):
    response = guest.post("/messages", data={"message": "Hi\x00"}, headers=HTMX)
    assert response.headers["HX-Retarget"] == "#composer-error, #page-alert"
    assert response.text.strip() == f'<p class="error-message">{NUL_MESSAGE}</p>'
    assert 'id="page-alert"' in guest.get("/memories").text


def test_a_huge_body_is_refused_with_413(guest):
    before = stored()
    response = guest.post("/messages", data={"message": "x" * 2_000_000})
    assert response.status_code == 413 and "too much to send" in response.text
    assert stored() == before


def test_a_refused_first_message_leaves_no_empty_conversation(app, guest, monkeypatch):
    from webapp import storage

    def fail(*args):
        raise RuntimeError("the database refused the turn")
    monkeypatch.setattr(storage, "add_turn", fail)  # the one write of a new turn
    before = stored()
    with pytest.raises(RuntimeError):
        guest.post("/messages", data={"message": "Hello"})
    assert stored() == before


@pytest.mark.parametrize("args, reason", [
    (["ask", "Hello\x00"], "NUL character"),
    (["memories", "add", "I like\x00 tea"], "NUL character"),
])
def test_commands_refuse_nul_bytes_too(runner, args, reason):
    before = stored()
    result = runner.invoke(args=args)
    assert result.exit_code != 0 and reason in result.output and "Traceback" not in result.output
    assert stored() == before
