"""The viewer speaks as the chat does: the shop's persona, the reader's time zone, one date format."""
import re
from datetime import datetime

from webapp.extensions import db
from webapp.models import Turn

from .support import guest_user
from .viewer_support import refund_conversation, summarized_conversation

PINNED_AT = datetime(2026, 6, 1, 23, 30)  # 11:30 the next morning in Auckland


def test_answers_in_the_viewer_go_under_the_shops_persona(guest):
    user = guest_user(guest)
    user.tenant.settings = {**(user.tenant.settings or {}), "assistant_name": "Skye"}
    db.session.commit()
    conversation = refund_conversation(user)
    page = guest.get(f"/c/{conversation.id}/viewer").text
    assert '<span class="who">Skye</span>' in page
    assert '<span class="who">Nimbus</span>' not in page
    sent = guest.get(f"/c/{conversation.id}/viewer/turns/2/sent").text
    assert '<span class="who">Skye</span>' in sent


def test_a_pins_time_is_the_readers_in_the_one_date_format(guest):
    conversation = refund_conversation(guest_user(guest))
    guest.post(f"/c/{conversation.id}/turns/0/mark", data={"mark": "pinned"})
    turn = db.session.query(Turn).filter_by(conversation_id=conversation.id, seq=0).one()
    turn.marked_at = PINNED_AT
    db.session.commit()
    guest.set_cookie("nimbus_tz", "Pacific/Auckland")
    page = guest.get(f"/c/{conversation.id}/viewer").text
    assert "on 2 Jun 2026, 11:30" in page
    assert "UTC" not in page


def test_the_first_sentence_says_what_the_assistant_will_read_in_words(guest):
    conversation = refund_conversation(guest_user(guest))
    page = guest.get(f"/c/{conversation.id}/viewer").text
    first = page[page.index('<p class="gauge-words">'):]
    first = " ".join(first[:first.index("</p>")].split())
    assert "With the next question, Nimbus will read about" in first
    assert "its instructions and <strong>3 earlier turns</strong> of this conversation" in first
    assert "budget" not in first  # the arithmetic comes after, for those who want it


def test_the_turn_columns_are_one_click_from_the_top_of_the_viewer(guest):
    conversation = refund_conversation(guest_user(guest))
    page = guest.get(f"/c/{conversation.id}/viewer").text
    jump = page.index('href="#turns-title"')
    assert jump < page.index('id="what-if"') and 'id="turns-title"' in page


def test_the_first_sentence_names_the_memories_and_the_summarys_reach(guest):
    conversation = summarized_conversation(guest_user(guest))
    page = guest.get(f"/c/{conversation.id}/viewer").text
    first = page[page.index('<p class="gauge-words">'):]
    first = " ".join(first[:first.index("</p>")].split())
    assert "its instructions, 1 long-term memory, a summary of turns 1–5 and <strong>1 earlier turn</strong>" in first, first


def test_pages_write_dates_one_way():
    """Every page's date and time goes through the one format ("3 Dec 2026, 07:48"); only a bare
    time of day, a bare date or the audit log's seconds write their own."""
    from pathlib import Path
    allowed = {"%H:%M", "%-d %b %Y", "%-d %b %Y, %H:%M:%S", "%-d %b %Y, %H:%M %Z"}
    templates = Path(__file__).resolve().parent.parent / "templates"
    formats = {(path.name, found) for path in templates.rglob("*.html")
               for found in re.findall(r"""strftime\(['"]([^'"]+)['"]\)""", path.read_text())}
    assert {f for _, f in formats} <= allowed, sorted(formats)


def test_without_a_known_window_the_viewer_says_the_budget_alone_limits_the_request(app, guest):
    app.config["NIMBUS_CONTEXT_WINDOW"] = None
    conversation = refund_conversation(guest_user(guest))
    page = " ".join(guest.get(f"/c/{conversation.id}/viewer").text.split())
    assert "No context window is known for this model, so the budget alone limits what is sent; 1,024 tokens are asked for the answer" in page
    app.config["NIMBUS_CONTEXT_WINDOW"] = 4096
    page = " ".join(guest.get(f"/c/{conversation.id}/viewer").text.split())
    assert "Planned for the model's <strong>4,096-token window</strong>" in page
