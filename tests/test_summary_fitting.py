"""Summary folds fitted to the model's window with their output reserve: a small window folds the
oldest turns that fit, a turn longer than the window is folded shortened, the next fold goes on."""
import re

from webapp.context.summary.fold import CUT, Said, fitting, reply_tokens
from webapp.context.summary.section import refresh_summary, summary_size
from webapp.extensions import db
from webapp.storage import create_conversation

from .fakes.compat_servers import CompatServer
from .test_provider_quirks import fresh_endpoints, point_at  # noqa: F401 (a fixture)
from .test_summaries import save

FILLER = "I want to describe everything about the parcel and its contents in detail. " * 4
PASTE = "Here is the whole log I copied from the tracking page: " + "status ok, " * 620


def long_conversation_at_a_small_window(user, turns=34):
    conversation = create_conversation(user)
    conversation.settings = {"budget": 600}
    db.session.commit()
    save(conversation, "My name is Dara and my order is #1042.", "Thanks, Dara.")
    for n in range(1, turns):
        save(conversation, PASTE if n == 5 else f"Note {n}: {FILLER}", f"Noted {n}.")
    return conversation


def folded_ranges(server) -> list[tuple[int, int]]:
    found = (re.search(r"Turns (\d+)–(\d+), to fold in", r["messages"][-1]["content"])
             for r in server.state.requests)
    return [(int(m.group(1)), int(m.group(2))) for m in found if m]


def test_at_a_2048_token_window_no_fold_is_refused_and_each_goes_on_from_the_last(app, alex):
    with CompatServer("llama-server", window=2048) as server:  # /props: n_ctx 2048
        provider = point_at(app, server)
        conversation = long_conversation_at_a_small_window(alex)
        for _ in range(10):  # as the queued job goes again until it is caught up
            summary, caught_up = refresh_summary(conversation, provider)
            if caught_up:
                break
    ranges = folded_ranges(server)
    assert caught_up and server.state.refused == [] and len(ranges) > 2
    assert ranges[0][0] == 1 and all(b[0] == a[1] + 1 for a, b in zip(ranges, ranges[1:]))
    assert summary.through_seq + 1 == ranges[-1][1] and "Dara" in summary.text
    assert all(r["max_tokens"] <= 2048 // 4 for r in server.state.requests)


def test_a_turn_longer_than_the_window_is_folded_alone_and_shortened(app, alex):
    with CompatServer("llama-server", window=2048) as server:
        provider = point_at(app, server)
        conversation = long_conversation_at_a_small_window(alex, turns=12)
        refresh_summary(conversation, provider)
    paste = next(r["messages"][-1]["content"] for r in server.state.requests
                 if "tracking page" in r["messages"][-1]["content"])
    assert "Turns 6–6, to fold in" in paste and CUT.strip() in paste
    assert server.state.refused == []


def test_the_summary_shrinks_to_fit_the_output_reserve_of_a_small_window(app):
    app.config.update(NIMBUS_CONTEXT_WINDOW=2048, NIMBUS_SUMMARY_MAX_TOKENS=600)
    assert reply_tokens(summary_size(app.config)) <= 2048 // 4
    app.config["NIMBUS_CONTEXT_WINDOW"] = None
    assert summary_size(app.config) == 600


def test_without_a_known_window_every_turn_is_folded_as_it_is():
    turns = [Said(n, "x" * 4000, "y") for n in range(3)]
    assert fitting("", [], turns, "concise", 600, None) == turns
