"""The distiller after a read cut off at the output cap or refused for size: it waits (doubling)
instead of reading the same window after every turn, reads less, and gives the window up after
NIMBUS_MEMORY_MAX_TRIES with a record on its checkpoint."""
import json
from datetime import timedelta

import pytest

from webapp.extensions import db
from webapp.llm.base import ContextTooLong, Reply
from webapp.memories.distiller.distil import distil_conversation
from webapp.memories.models import DistillCheckpoint
from webapp.models import utcnow

from .fakes.scripted_model import ScriptedModel
from .test_memory_distiller import chat

NOTHING = json.dumps({"memories": []})
CUT = Reply('{"memories": [{"content": "Prefers', finish_reason="length")


def failing(kind: str) -> list:
    """One run's worth of failed reads: a reply cut at the cap, or two refusals for size (the
    distiller reads the older half once before it stops)."""
    return [CUT] if kind == "cut" else [ContextTooLong("over the window")] * 2


def row(conversation) -> DistillCheckpoint:
    db.session.expire_all()
    return db.session.get(DistillCheckpoint, conversation.id)


def wait_over(conversation) -> None:
    row(conversation).retry_after = utcnow() - timedelta(seconds=1)
    db.session.commit()


def turns_read(request) -> int:
    return request[-1]["content"].count("Customer:")


@pytest.mark.parametrize("kind", ["cut", "refused"])
def test_a_cut_or_refused_read_waits_before_the_window_is_read_again(app, alex, kind):
    conversation = chat(alex, *[f"Note {n}: I prefer email." for n in range(8)])
    model = ScriptedModel(*failing(kind), NOTHING)
    outcome = distil_conversation(conversation.id, provider=model)
    assert outcome.startswith("not read (try 1 of 3), again in 5 min")
    assert row(conversation).distilled_through_seq == -1 and row(conversation).failed_tries == 1
    asked = len(model.requests)
    assert distil_conversation(conversation.id, provider=model).startswith("waiting: 1 cut")
    assert len(model.requests) == asked  # the next turn's run did not read it again


def test_the_read_after_a_cut_takes_fewer_turns_and_waits_twice_as_long(app, alex):
    conversation = chat(alex, *[f"Note {n}: I prefer email." for n in range(8)])
    model = ScriptedModel(CUT, CUT)
    distil_conversation(conversation.id, provider=model)
    wait_over(conversation)
    assert "again in 10 min" in distil_conversation(conversation.id, provider=model)
    assert [turns_read(r) for r in model.requests] == [8, 4]


def test_a_window_is_given_up_after_the_tries_with_a_record_and_the_rest_is_read(app, alex):
    app.config["NIMBUS_MEMORY_MAX_TRIES"] = 2
    conversation = chat(alex, *[f"Note {n}: I prefer email." for n in range(8)])
    model = ScriptedModel(CUT, CUT, NOTHING)
    distil_conversation(conversation.id, provider=model)
    wait_over(conversation)
    outcome = distil_conversation(conversation.id, provider=model)
    assert outcome.startswith("gave up on turns 1–4 after 2 tries")
    checkpoint = row(conversation)
    assert checkpoint.distilled_through_seq == 3 and checkpoint.failed_tries == 0
    assert checkpoint.given_up.startswith("turns 1–4 after 2 cut or refused reads")
    assert distil_conversation(conversation.id, provider=model) == "nothing found"
    assert "Note 4:" in model.requests[-1][-1]["content"] and row(conversation).given_up


def test_a_provider_that_is_down_is_not_counted_as_a_try(app, alex):
    from webapp.llm.base import ProviderError
    conversation = chat(alex, "I prefer email over phone.")
    distil_conversation(conversation.id, provider=ScriptedModel(ProviderError("down")))
    assert row(conversation) is None or row(conversation).failed_tries == 0
    assert distil_conversation(conversation.id, provider=ScriptedModel(NOTHING)) == "nothing found"
