"""Imported history becomes memories only when the person chooses it, and only their own words."""
import io
import json

from webapp.extensions import db
from webapp.memories.distiller.distil import distil_conversation
from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.rows import newest
from webapp.models import Conversation

from .support import guest_user
from .test_transfer_views import upload

EXPORT = json.dumps([
    {"role": "user", "content": "I prefer email over phone. My friend wrote \"My name is Dara\"."},
    {"role": "assistant", "content": "Noted. My name is Kim, I live in Oslo."},
    {"role": "user", "content": "I live in Lisbon."},
    {"role": "assistant", "content": "Lisbon is lovely."},
]).encode()


def import_export(guest, **form):
    response = upload(guest, (io.BytesIO(EXPORT), "chat.json"), format="openai", **form)
    assert response.status_code in (200, 302, 303), response.text
    for conversation in db.session.query(Conversation).all():
        distil_conversation(conversation.id)
    db.session.expire_all()
    return sorted(m.content for m in newest(SessionScope.for_user(guest_user(guest)), 50))


def test_imported_history_is_not_distilled_unless_chosen(app, guest):
    assert import_export(guest) == []


def test_chosen_at_import_only_the_importers_own_words_become_memories(app, guest):
    assert import_export(guest, distil="1") == ["Lives in Lisbon.", "Prefers email over phone."]


def test_importing_the_same_export_twice_adds_no_second_copy(app, guest):
    import_export(guest, distil="1")
    assert import_export(guest, distil="1") == ["Lives in Lisbon.", "Prefers email over phone."]


def test_the_import_form_offers_the_choice_unticked(app, guest):
    page = guest.get("/import").text
    assert 'name="distil"' in page and 'name="distil" value="1" checked' not in page
