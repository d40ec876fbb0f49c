"""The viewer's debugging and demo tools: find a fact, compare strategies, download as HTML, and
manifests that travel with an export."""
import re

from webapp.storage import all_turns
from webapp.transfer import export_conversation, import_conversation
from webapp.viewer.as_sent import rebuild

from .support import guest_user
from .viewer_support import DROPPING_BUDGET, refund_conversation, summarized_conversation


def test_find_lists_mentions_their_fates_and_what_the_next_request_carries(guest):
    conversation = summarized_conversation(guest_user(guest))
    data = guest.get(f"/c/{conversation.id}/viewer/find?q=dara&format=json").json
    said, answered = data["matches"]  # "My name is Dara…", then "What is my name?"
    assert (said["number"], said["fate"], said["sent"]) == (1, "SUMMARIZED", False)
    assert (answered["number"], answered["fate"], answered["sent"]) == (6, "FULL", True)
    assert {"Rolling summary", "Conversation history"} <= set(data["carried_in"])
    gone = guest.get(f"/c/{conversation.id}/viewer/find?q=1043&format=json&strategy=window").json
    assert gone["matches"] and all(m["fate"] == "DROPPED" for m in gone["matches"])
    assert "Conversation history" not in gone["carried_in"]
    html = guest.get(f"/c/{conversation.id}/viewer/find?q=Dara").text
    assert "The next request still carries “Dara”" in html and 'href="#turn-1"' in html


def test_find_refuses_an_empty_or_huge_query(guest):
    conversation = refund_conversation(guest_user(guest))
    for query in ("", "x", "y" * 101):
        response = guest.get(f"/c/{conversation.id}/viewer/find", query_string={"q": query})
        assert response.status_code == 400 and "search for 2 to 100 characters" in response.text
    assert guest.get(f"/c/{conversation.id}/viewer/find?q=%25_&format=json").json["matches"] == []


def test_compare_shows_tokens_per_section_and_the_turns_that_differ(guest):
    conversation = refund_conversation(guest_user(guest))
    url = f"/c/{conversation.id}/viewer/compare?a=compact&b=window&recent_turns=1"
    data = guest.get(url + "&format=json").json
    assert (data["a"]["strategy"], data["b"]["strategy"]) == ("compact", "window")
    assert data["a"]["sections"]["history"] > data["b"]["sections"]["history"]
    assert data["differences"] == [{"first_seq": 0, "last_seq": 1,
                                    "a": ["COMPACTED", False, data["differences"][0]["a"][2]],
                                    "b": ["DROPPED", False, "outside the last 1 turns"]}]
    html = guest.get(url).text
    assert html.count('class="differs"') >= 2 and "turns 1–2" in html
    assert guest.get(url + "&budget=0").status_code == 400


def test_download_is_one_file_with_inline_css_and_no_scripts(guest):
    conversation = refund_conversation(guest_user(guest))
    response = guest.get(f"/c/{conversation.id}/viewer/report.html?budget={DROPPING_BUDGET}")
    assert response.status_code == 200
    assert response.headers["Content-Disposition"].startswith("attachment; filename=")
    html = response.text
    assert "<script" not in html and "hx-" not in html and "<link" not in html
    assert ".viewer .fate-full" in html and "<svg" in html
    assert 'data-fate="DROPPED"' in html and "What-if preview" in html
    assert "Apply to this conversation</button>" not in html and ">view as sent</a>" not in html
    assert 'href="/' not in html  # every link points inside the file


def test_manifests_survive_export_and_import(app, alex, sam):
    conversation = refund_conversation(alex)
    exported = export_conversation(conversation)
    assert exported["turns"][0]["manifest"]["calls"] and exported["request_texts"]
    copy = import_conversation(exported, sam)
    originals, copies = all_turns(conversation.id), all_turns(copy.id)
    for original, imported in zip(originals, copies):
        assert [c.messages for c in rebuild(imported).calls] == [
            c.messages for c in rebuild(original).calls]
    forged = export_conversation(conversation)
    forged["request_texts"] = {h: "forged" for h in forged["request_texts"]}
    assert rebuild(all_turns(import_conversation(forged, sam).id)[0]).problems


def test_each_turn_offers_view_as_sent(guest):
    conversation = refund_conversation(guest_user(guest))
    html = guest.get(f"/c/{conversation.id}/viewer").text
    assert len(re.findall(r'hx-get="/c/\w+/viewer/turns/\d+/sent"', html)) == 3
    assert 'class="strip"' in html and 'src="/static/js/viewer.js"' in html


def test_a_downloaded_report_holds_every_turn_its_strip_links(guest):
    from tests.fakes.history import fill_conversation
    conversation = refund_conversation(guest_user(guest))
    fill_conversation(conversation, 148, start=conversation.turn_count)  # 151 turns in all
    html = guest.get(f"/c/{conversation.id}/viewer/report.html").text
    anchors = set(re.findall(r'id="turn-(\d+)"', html))
    links = set(re.findall(r'href="#turn-(\d+)"', html))
    assert len(anchors) == 151 and links <= anchors
    assert "Question 3" in html and "Question 150" in html  # first page's and last page's
