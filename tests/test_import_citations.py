"""ChatGPT's citation markers become readable references: "[1]" in the answer and its sources
listed after it when the metadata names them, and nothing at all when it does not; no private-use
marker or 【3†source】 is ever stored (fixture: tests/data/chatgpt/citations.json, written after
real exports' shapes, see tests/data/real/README.md)."""
import re
from pathlib import Path

from webapp.extensions import db
from webapp.models import Conversation

from .accounts_support import make_account, sign_in
from .test_transfer_views import upload

CITATIONS = Path(__file__).parent / "data" / "chatgpt" / "citations.json"
MARKERS = re.compile("[\ue000-\uf8ff\u200b]|【|】|†")


def imported(client) -> dict[str, Conversation]:
    make_account("dana@example.com")
    sign_in(client, "dana@example.com")
    response = upload(client, CITATIONS)
    assert response.status_code == 200 and "Imported 2 conversations (2 turns)" in response.text
    return {c.title: c for c in db.session.query(Conversation).filter(
        Conversation.import_key.like("chatgpt:%"))}


def test_search_answers_cite_their_sources_by_number_and_list_them_after(client):
    turn = imported(client)["Ferries to Corsica"].turns[0]
    assert turn.answer == (
        "Three lines sail from Marseille to Corsica all year. Here is how they compare:\n\n"
        "**Corsica Linea:** Night crossings to Ajaccio and Bastia, cabins on every sailing. [1]\n\n"
        "**La Méridionale:** Fewer sailings, but the quietest ships, and meals included. [2]\n\n"
        "**Corsica Ferries:** Mostly from Toulon and Nice; from Marseille in summer only.\n\n"
        "Both night lines leave around 19:00. [1]\n\n"
        "Book a cabin early in August.\n\n"
        "Sources:\n\n"
        "1. [Crossings to Corsica - Corsica Linea](https://www.corsicalinea.com/en/crossings)\n"
        "2. [Ferry Marseille – Corse | La Méridionale](https://www.lameridionale.fr/en/corsica)")


def test_legacy_source_markers_become_numbers_or_vanish(client):
    turn = imported(client)["Night ferry times"].turns[0]
    assert turn.answer == (
        "The 19:00 sailing reaches Bastia at 07:00 the next morning [1]. Cabins sell out first "
        "in August.\n\nSources:\n\n"
        "1. [Timetable – Corsica Linea](https://www.corsicalinea.com/en/timetable)")
    # What the browsing tool showed the model is its result, kept as it was.
    assert "【3†Timetable" in next(m for m in turn.messages if m["role"] == "tool")["content"]


def test_no_stored_answer_keeps_a_marker_and_the_page_links_each_source(client):
    conversations = imported(client)
    for conversation in conversations.values():
        for turn in conversation.turns:
            assert not MARKERS.search(turn.answer), turn.answer
    page = client.get(f"/c/{conversations['Ferries to Corsica'].id}").text
    assert '<a href="https://www.lameridionale.fr/en/corsica"' in page
