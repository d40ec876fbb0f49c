"""A room behind one address (an office or conference NAT, a proxy without NIMBUS_PROXY_HOPS):
a hundred people open the chat page in the same minute and each can send, while a flood of
sends from one of them is still refused."""
from sqlalchemy import func, select

from webapp.extensions import db
from webapp.models import Turn, User

from .support import wait_for_replies
from .test_address_limits import limited, writer  # noqa: F401

ROOM = "198.51.100.200"


def count(model) -> int:
    db.session.rollback()
    return db.session.scalar(select(func.count()).select_from(model))


def test_a_hundred_people_behind_one_address_open_the_page_and_each_sends(limited):  # noqa: F811
    app = limited()  # the default limits
    users = count(User)
    room = [writer(app, ROOM) for _ in range(100)]  # each opened the chat page: 200
    assert count(User) == users  # reading cost no row
    sent = [person.post("/messages", data={"message": "Hi"}).status_code for person in room]
    wait_for_replies(app)
    assert sent == [200] * 100 and count(User) == users + 100 and count(Turn) >= 100


def test_a_hundred_sends_a_minute_from_one_guest_are_still_limited(limited):  # noqa: F811
    app = limited()
    person = writer(app, ROOM)
    answers = [person.post("/messages", data={"message": "Hi"}).status_code for _ in range(100)]
    wait_for_replies(app)
    limit = int(app.config["NIMBUS_RATE_LIMIT_SENDS_PER_SESSION"].split("/")[0])
    assert answers[:limit] == [200] * limit and set(answers[limit:]) == {429}


def test_a_new_browser_that_only_read_pages_downloads_a_file_with_nothing_stored(client):
    client.get("/")
    data = client.get("/account/data.json").get_json()
    assert data["account"]["guest"] and data["account"]["created_at"] is None
    assert data["conversations"] == []
