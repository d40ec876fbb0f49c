"""The viewer's routes: owner only, what-if through htmx and JSON, applying settings with CSRF."""
import re

import pytest

from webapp.cli import message_lines
from webapp.extensions import db
from webapp.storage import create_conversation

from .accounts_support import make_account, sign_in
from .support import guest_user
from .viewer_support import DROPPING_BUDGET, refund_conversation, summarized_conversation

HTMX = {"HX-Request": "true", "HX-Target": "plan"}


@pytest.fixture
def conversation(guest):
    return refund_conversation(guest_user(guest))


def fates(html: str) -> list[tuple[str, str]]:
    return re.findall(r'data-turn="(\d+)" data-fate="(\w+)"', html)


@pytest.mark.parametrize("path", ["/c/{}/viewer", "/c/{}/viewer.json"])
def test_only_the_owner_may_open_the_viewer(app, client, sam, path):
    foreign = refund_conversation(sam).id
    make_account("other@example.com")
    sign_in(client, "other@example.com")  # a guest is asked to sign in: tests/test_sign_in_offers.py
    assert client.get(path.format(foreign)).status_code == 404
    assert client.get(path.format("0" * 32)).status_code == 404


def test_chat_page_links_to_the_viewer(guest, conversation):
    page = guest.get(f"/c/{conversation.id}").text
    assert re.search(rf'<a class="[^"]*" href="/c/{conversation.id}/viewer"[^>]*>Viewer</a>', page)


def test_page_shows_fates_sections_and_the_chart(guest, conversation):
    response = guest.get(f"/c/{conversation.id}/viewer")
    assert response.status_code == 200
    html = response.text
    assert fates(html) == [("1", "COMPACTED"), ("2", "FULL"), ("3", "FULL")]
    assert "older than the 2 most recent turns: question and answer only" in html
    assert html.index("System prompt") < html.index("Conversation history") < html.index("Turn 1")
    assert "How to read this page" in html and "<svg class=\"chart\"" in html
    sent = sum(t.prompt_tokens for t in conversation.turns)  # every model call, as reported
    resend = sent + sum(t.resend_tokens - t.context_tokens for t in conversation.turns)
    assert (f"This conversation sent {round(100 * sent / resend)}% of the tokens a "
            f"resend-everything chat would have ({sent:,} of {resend:,} prompt tokens") in html


def test_what_if_renders_only_the_plan_and_saves_nothing(guest, conversation):
    response = guest.get(f"/c/{conversation.id}/viewer?budget={DROPPING_BUDGET}", headers=HTMX)
    assert response.status_code == 200
    assert "<html" not in response.text and "What-if preview" in response.text
    assert fates(response.text)[0] == ("1", "DROPPED")
    db.session.refresh(conversation)
    assert conversation.settings == {}
    assert fates(guest.get(f"/c/{conversation.id}/viewer").text)[0] == ("1", "COMPACTED")


def test_a_bad_what_if_is_explained_and_the_saved_settings_shown(guest, conversation):
    response = guest.get(f"/c/{conversation.id}/viewer?strategy=psychic", headers=HTMX)
    assert response.status_code == 400
    assert "Can't preview that: unknown strategy &#39;psychic&#39;" in response.text
    assert fates(response.text)[0] == ("1", "COMPACTED")
    json_error = guest.get(f"/c/{conversation.id}/viewer.json?budget=-1")
    assert json_error.status_code == 400
    assert json_error.json == {"error": "budget must be between 1 and 1,000,000"}


def test_json_matches_the_page_and_show_context(guest, conversation, runner):
    data = guest.get(f"/c/{conversation.id}/viewer.json?budget={DROPPING_BUDGET}").json
    assert data["what_if"] and data["policy"]["budget"] == DROPPING_BUDGET
    assert [t["fate"] for t in data["turns"]] == ["DROPPED", "FULL", "FULL"]
    assert data["turns"][0]["reason"].startswith(f"over the {DROPPING_BUDGET}-token budget")
    sections = data["request"]["sections"]
    assert data["request"]["messages"] == [m for s in sections for m in s["messages"]]
    history = next(s for s in data["request"]["sections"] if s["name"] == "history")
    assert history["messages"] == [m for t in data["turns"] for m in t["sent"]]
    assert data["fates"] == {"DROPPED": 1, "FULL": 2}
    assert data["cost"]["turns"] == [1, 2, 3]
    assert data["cost"]["sent"] == [t.prompt_tokens for t in conversation.turns]
    assert data["cost"]["sent"] == [t["usage"]["prompt_tokens"] for t in data["turns"]]
    email = guest_user(guest).email
    printed = runner.invoke(args=["show", conversation.id, "--context", "--user", email,
                                  "--budget", str(DROPPING_BUDGET)]).output
    assert printed.split("\n", 2)[2].startswith(
        "\n".join(message_lines(data["request"]["messages"])) + "\n\nTurn fates")
    assert f"({data['request']['total_tokens']} tokens" in printed


def test_apply_saves_the_settings_and_needs_the_csrf_token(app, guest, conversation):
    form = {"strategy": "compact", "budget": str(DROPPING_BUDGET), "recent_turns": "1"}
    url = f"/c/{conversation.id}/viewer/settings"
    token = guest.environ_base.pop("HTTP_X_CSRFTOKEN")
    assert guest.post(url, data=form).status_code == 400
    db.session.refresh(conversation)
    assert conversation.settings == {}
    response = guest.post(url, data={**form, "csrf_token": token})
    assert response.status_code == 303
    assert response.headers["Location"] == f"/c/{conversation.id}/viewer?applied=1"
    db.session.refresh(conversation)
    assert conversation.settings == {"budget": DROPPING_BUDGET, "recent_turns": 1}
    page = guest.get(response.headers["Location"]).text
    assert "Saved: this conversation now uses the compact strategy" in page
    assert fates(page) == [("1", "COMPACTED"), ("2", "COMPACTED"), ("3", "FULL")]


def test_apply_through_htmx_swaps_the_plan_and_cleans_the_url(guest, conversation):
    response = guest.post(f"/c/{conversation.id}/viewer/settings", headers=HTMX,
                          data={"strategy": "compact", "budget": "5000", "recent_turns": "3"})
    assert response.status_code == 200
    assert response.headers["HX-Push-Url"] == f"/c/{conversation.id}/viewer"
    assert "<html" not in response.text and "What-if preview" not in response.text
    assert fates(response.text) == [("1", "FULL"), ("2", "FULL"), ("3", "FULL")]


def test_apply_refuses_bad_values(guest, conversation):
    response = guest.post(f"/c/{conversation.id}/viewer/settings", data={"budget": "lots"})
    assert response.status_code == 400 and "budget must be a whole number" in response.text
    db.session.refresh(conversation)
    assert conversation.settings == {}


def test_an_empty_conversation_says_so(guest):
    conversation = create_conversation(guest_user(guest))
    html = guest.get(f"/c/{conversation.id}/viewer").text
    assert "No turns yet" in html and "No answered turns yet" in html
    assert guest.get(f"/c/{conversation.id}/viewer.json").json["turns"] == []


def test_memory_section_shows_why_each_memory_was_recalled(guest, conversation, monkeypatch):
    from webapp.context import assemble
    memory = {"content": "Prefers email.", "scope": "account · personal", "turn_seq": 1,
              "conversation_id": conversation.id, "source": "distiller", "why": "recency rank 1"}

    def memory_source(conversation_, policy, history):
        block = [{"role": "system", "content": "Remember: prefers email."}]
        return assemble.Section("memory", block, 8, {"mode": "recency", "memories": [memory]})

    monkeypatch.setattr(assemble, "SECTION_SOURCES", [memory_source])
    html = guest.get(f"/c/{conversation.id}/viewer").text
    order = [html.index(title) for title in ("System prompt", "Long-term memory",
                                              "Conversation history")]
    assert order == sorted(order)
    assert "Prefers email." in html and "recency rank 1" in html and "account · personal" in html
    assert '<a href="#turn-2">turn 2 of this conversation</a>' in html


def test_summary_section_and_summarized_turns(guest):
    conversation = summarized_conversation(guest_user(guest))
    html = guest.get(f"/c/{conversation.id}/viewer").text
    assert fates(html) == [(str(n), "SUMMARIZED") for n in range(1, 6)] + [("6", "FULL")]
    assert html.count('folded into the <a href="#section-summary">rolling summary</a>') == 5
    summary = html[html.index('id="section-summary"'):html.index('id="section-history"')]
    assert "Rolling summary" in summary and "<dt>through</dt>\n        <dd>turn 5</dd>" in summary
    assert "refunds, " in summary  # topics read as a list
    assert "for the summary)" in html
