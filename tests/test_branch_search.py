"""Conversation search reaches the branches a person left (an edited-away question, a
regenerated-away answer) and marks such hits everywhere they are shown: the search results in
the sidebar, `flask search`, and the search_history tool, which tells the model the hit is from a
branch not taken."""
from types import SimpleNamespace

from webapp import branches
from webapp.extensions import db
from webapp.models import TurnAlternative
from webapp.memories.search.conversations import search_turns
from webapp.memories.tools import search_history

from .support import ask, guest_user, run
from .test_branches import answer

LEFT = "My umbrella stayed at the Lyon store."
SHOWN = "My scarf stayed at the Lyon store."


def edited(user):
    """A conversation whose only question was edited: the umbrella is on the branch left."""
    _, conversation, _ = ask(user, LEFT)
    answer(branches.fork(conversation, 0, SHOWN))
    return conversation


def test_words_only_on_a_branch_left_are_found_and_marked(app, alex):
    conversation = edited(alex)
    results, _ = search_turns(alex, "umbrella", app.config)
    assert [(r["question"], r["inactive_branch"], r["turn"], r["conversation_id"])
            for r in results] == [(LEFT, True, 0, conversation.id)]
    assert results[0]["content"].startswith("on a branch not taken (a question you edited; not "
                                            "what that conversation says now)")


def test_the_shown_branch_is_found_unmarked_and_not_twice(app, alex):
    edited(alex)
    results, _ = search_turns(alex, "scarf", app.config)
    assert [(r["question"], r["inactive_branch"]) for r in results] == [(SHOWN, False)]


def test_a_regenerated_away_answer_is_found_by_its_own_words_not_the_shared_question(app, alex):
    _, conversation, _ = ask(alex, "Is the parcel insured?")
    answer(branches.fork(conversation, 0, "Is the parcel insured?"))
    kept = db.session.scalar(db.select(TurnAlternative))
    turns = [{**kept.branch["turns"][0], "answer": "Yes, for up to 500 euros."}]
    kept.branch = {**kept.branch, "turns": turns}
    db.session.commit()
    (hit,) = [r for r in search_turns(alex, "euros", app.config)[0] if r["inactive_branch"]]
    assert hit["answer"] == "Yes, for up to 500 euros." and "an answer you had me regenerate" in \
        hit["content"]
    assert not [r for r in search_turns(alex, "insured", app.config)[0] if r["inactive_branch"]]


def test_another_persons_branches_are_not_searched(app, alex, sam):
    edited(alex)
    assert search_turns(sam, "umbrella", app.config)[0] == []


def test_the_tool_tells_the_model_the_hit_is_from_a_branch_not_taken(app, alex):
    edited(alex)
    found = search_history(SimpleNamespace(user=alex, config=app.config), {"query": "umbrella"})
    (hit,) = found["results"]
    assert hit["inactive_branch"] is True and "branch not taken" in hit["content"]
    assert "branch not taken" in search_history.tool.description


def test_the_search_command_marks_the_hit(runner, app):
    from webapp.accounts import find_user
    conversation = edited(find_user("alex@example.com"))
    found = run(runner, "search", "umbrella", "--user", "alex@example.com")
    assert f"{conversation.id}#turn-1  [on another branch]" in found


def test_the_sidebar_search_marks_the_hit(guest):
    conversation = edited(guest_user(guest))
    results = guest.get("/search?q=umbrella", headers={"HX-Request": "true"}).text
    assert "On another branch" in results
    assert f'href="/c/{conversation.id}?at=1#turn-1-question"' in results
    shown = guest.get("/search?q=scarf", headers={"HX-Request": "true"}).text
    assert "On another branch" not in shown


def test_words_beyond_ascii_are_found_on_a_branch_left(app, alex):
    _, conversation, _ = ask(alex, "Le café de ma commande est arrivé froid.")
    answer(branches.fork(conversation, 0, "Ma commande est arrivée en retard."))
    results, _ = search_turns(alex, "café", app.config)
    assert [(r["inactive_branch"], r["question"]) for r in results] == [
        (True, "Le café de ma commande est arrivé froid.")]


def test_the_offline_model_tells_the_customer_the_hit_is_from_a_branch_not_taken(app, alex):
    edited(alex)
    said, _, events = ask(alex, "What did I ask you about the umbrella before?")
    assert [e.data["tool"] for e in events if e.kind == "tool_call"] == ["search_history"]
    assert said.startswith("From what I found: on a branch not taken (a question you edited")
