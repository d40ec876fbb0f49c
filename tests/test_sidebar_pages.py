"""The sidebar pages: one page of each section, then "Show more conversations" loads the next
from a keyset, the person's own only, with no repeat and no gap however many share a time."""
import re
from datetime import timedelta

import pytest

from webapp.extensions import db
from webapp.models import utcnow
from webapp.storage import create_conversation

from .support import ask, guest_user, open_as_guest

HTMX = {"HX-Request": "true"}
PAGE = 5
MORE = re.compile(r'hx-get="(/conversations\?[^"]+)"')


@pytest.fixture(autouse=True)
def small_pages(app):
    app.config["NIMBUS_SIDEBAR_PAGE"] = PAGE


def make(user, count: int, *, minutes_apart: int = 1, tied: int = 0, **fields) -> list[str]:
    """`count` conversations of `user`, newest first; the first `tied` share one updated_at."""
    now, made = utcnow(), []
    for n in range(count):
        conversation = create_conversation(user, f"Chat {user.id}-{n}")
        conversation.updated_at = now - timedelta(minutes=max(n - tied + 1, 0) * minutes_apart)
        for name, value in fields.items():
            setattr(conversation, name, value - timedelta(minutes=n) if value else value)
        made.append(conversation)
    db.session.commit()
    return [c.id for c in sorted(made, key=lambda c: (c.updated_at, c.id), reverse=True)]


def ids(html: str) -> list[str]:
    return re.findall(r'<li id="conversation-([0-9a-f]{32})"', html)


def walk(client, html: str) -> tuple[list[str], int]:
    """Every id the sidebar shows, pressing "Show more conversations" until it is gone."""
    shown, pages = ids(html), 1
    while link := MORE.search(html):
        html = client.get(link.group(1).replace("&amp;", "&"), headers=HTMX).text
        shown, pages = shown + ids(html), pages + 1
    return shown, pages


def test_the_sidebar_holds_one_page_and_the_show_more_button(guest):
    make(guest_user(guest), 12)
    page = guest.get("/").text
    assert len(ids(page)) == PAGE
    assert page.count("Show more conversations") == 1


@pytest.mark.parametrize("tied", [0, 7])
def test_show_more_loads_every_conversation_once_in_order(guest, tied):
    expected = make(guest_user(guest), 13, tied=tied)
    shown, pages = walk(guest, guest.get("/").text)
    assert shown == expected and pages == 3


@pytest.mark.parametrize("count", [PAGE - 2, PAGE])
def test_a_section_that_fits_in_a_page_has_no_button(guest, count):
    make(guest_user(guest), count)
    page = guest.get("/").text
    assert len(ids(page)) == count and "Show more conversations" not in page


def test_another_persons_conversations_never_appear(app, guest):
    other = open_as_guest(app.test_client())
    mine = make(guest_user(guest), 8, minutes_apart=2)
    theirs = make(guest_user(other), 8, minutes_apart=2)
    shown, _ = walk(guest, guest.get("/").text)
    assert shown == mine and not set(theirs) & set(shown)
    link = MORE.search(guest.get("/").text).group(1).replace("&amp;", "&")
    assert not set(ids(other.get(link, headers=HTMX).text)) & set(mine)  # their own, from my cursor


def test_a_loaded_page_continues_its_date_group_and_takes_the_focus(guest):
    make(guest_user(guest), 7)
    page = guest.get("/").text
    more = guest.get(MORE.search(page).group(1).replace("&amp;", "&"), headers=HTMX).text
    assert page.count(">Today</h2>") == 1 and ">Today</h2>" not in more
    assert more.count("autofocus") == 1 and "Show more conversations" not in more


@pytest.mark.parametrize("section, field", [("pinned", "pinned_at"), ("archived", "archived_at")])
def test_pinned_and_archived_page_too(guest, section, field):
    make(guest_user(guest), 3)
    make(guest_user(guest), 12, **{field: utcnow()})
    page = guest.get("/").text
    first = page.split(f"conversation-list--{section}")[1].split("load-more--conversations")[0]
    assert len(ids(first)) == PAGE and f"section={section}" in page
    link = re.search(rf'hx-get="(/conversations\?section={section}[^"]+)"', page).group(1)
    shown, _ = walk(guest, guest.get(link.replace("&amp;", "&"), headers=HTMX).text)
    assert len(set(ids(first) + shown)) == 12
    if section == "archived":
        assert f"Archived ({PAGE}+)</summary>" in page


def test_search_finds_a_conversation_the_sidebar_has_not_loaded(guest):
    user = guest_user(guest)
    _, old, _ = ask(user, "Do you sell walnut cutting boards?")
    old.updated_at = utcnow() - timedelta(days=400)
    db.session.commit()
    make(user, 8)
    assert old.id not in ids(guest.get("/").text)
    results = guest.get("/search", query_string={"q": "walnut cutting boards"}, headers=HTMX).text
    assert f"/c/{old.id}" in results


@pytest.mark.parametrize("query", [
    "section=recent&before=yesterday&id=abc", "section=everything&before=2026-01-01T00:00:00&id=a",
    "section=recent&before=2026-01-01T00:00:00", "section=recent&before=2026-01-01T00:00:00%2B02:00&id=a",
    "section=recent&id=abc"])
def test_a_bad_cursor_gets_a_clear_400(guest, query):
    response = guest.get(f"/conversations?{query}", headers=HTMX)
    assert response.status_code == 400 and "error-message" in response.text
