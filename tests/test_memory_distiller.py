"""The distiller: conservative, checkpointed on every outcome, locked, swept, in the app's words."""
import json
import threading
from datetime import timedelta

from webapp.extensions import db
from webapp.llm.base import ProviderError
from webapp.locks import named_lock
from webapp.memories.distiller.distil import MARKER, distil_conversation, output_schema, system_prompt
from webapp.memories.jobs import inactive_conversations, sweep
from webapp.memories.models import DistillCheckpoint
from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.sharing import set_memory_sharing
from webapp.memories.store.rows import newest
from webapp.models import utcnow

from .support import ask, guest_user
from .fakes.scripted_model import ScriptedModel


def chat(user, *questions):
    conversation = None
    for question in questions:
        _, conversation, _ = ask(user, question, conversation)
    return conversation


def checkpoint(conversation):
    db.session.expire_all()
    row = db.session.get(DistillCheckpoint, conversation.id)
    return (row.distilled_through_seq, row.last_outcome) if row else (-1, "")


def contents(user):
    return [m.content for m in newest(SessionScope.for_user(user), 50)]


def test_offline_distiller_keeps_names_preferences_and_arrangements(app, alex):
    conversation = chat(alex, "Hi", "My name is Dara.", "I prefer email over phone.",
                        "We bill fortnightly.")
    assert distil_conversation(conversation.id).startswith("wrote 3")
    assert contents(alex) == ["We bill fortnightly.", "Prefers email over phone.", "Name: Dara."]
    assert checkpoint(conversation)[0] == 3


def test_chit_chat_writes_nothing_and_still_advances(app, alex):
    conversation = chat(alex, "Hello", "Thanks, that's all.", "What are your shipping times?")
    assert distil_conversation(conversation.id) == "nothing found"
    assert contents(alex) == [] and checkpoint(conversation) == (2, "nothing found")


def test_a_call_that_never_finished_leaves_its_turns_for_the_next_run(app, alex):
    conversation = chat(alex, "I prefer email over phone.")
    outcome = distil_conversation(conversation.id, provider=ScriptedModel(ProviderError("down")))
    assert outcome.startswith("not read") and checkpoint(conversation)[0] == -1
    assert contents(alex) == []
    assert distil_conversation(conversation.id) == "wrote 1 memory"  # read again, this time
    assert contents(alex) == ["Prefers email over phone."]


def test_a_reply_that_is_not_json_counts_as_a_failure(app, alex):
    conversation = chat(alex, "I prefer email over phone.")
    outcome = distil_conversation(conversation.id, provider=ScriptedModel("Sure! Here you go"))
    assert outcome.startswith("failed") and checkpoint(conversation)[0] == 0


def test_only_what_is_new_since_the_checkpoint_is_read(app, alex):
    conversation = chat(alex, "I prefer email over phone.")
    distil_conversation(conversation.id)
    chat_more = ask(alex, "I always pay by card.", conversation)[1]
    model = ScriptedModel(json.dumps({"memories": []}))
    distil_conversation(chat_more.id, provider=model)
    excerpt = model.requests[0][-1]["content"]
    assert "pay by card" in excerpt and "email" not in excerpt


def test_two_concurrent_distillations_run_once(app, alex):
    conversation = chat(alex, "I prefer email over phone.")
    entered, release, outcomes = threading.Event(), threading.Event(), []

    class SlowModel(ScriptedModel):
        def stream(self, messages, tools):
            entered.set()
            release.wait(5)
            yield from super().stream(messages, tools)

    model = SlowModel(json.dumps({"memories": []}))

    def first():
        with app.app_context():
            outcomes.append(distil_conversation(conversation.id, provider=model))

    worker = threading.Thread(target=first)
    worker.start()
    assert entered.wait(5)
    second = distil_conversation(conversation.id, provider=ScriptedModel())
    release.set()
    worker.join(5)
    assert second.startswith("busy") and outcomes == ["nothing found"]
    assert len(model.requests) == 1


def test_a_held_lock_makes_the_distiller_leave(app, alex):
    conversation = chat(alex, "I prefer email over phone.")
    with named_lock(f"distil:{conversation.id}"):
        assert distil_conversation(conversation.id).startswith("busy")
    assert checkpoint(conversation)[0] == -1


def test_compression_distils_once_turns_leave_the_window(app, alex):
    app.config.update(NIMBUS_HISTORY_BUDGET=150, NIMBUS_MEMORY_MIN_MESSAGES=4)
    conversation = chat(alex, "I prefer email over phone.", "I always pay by card.")
    assert checkpoint(conversation)[0] == -1  # everything still fits: nothing to distil yet
    ask(alex, "Thanks! " + "I am just writing a long message here. " * 20, conversation)
    assert checkpoint(conversation)[0] == -1  # the plan that answered it still held every turn
    ask(alex, "Hi", conversation)  # this turn's plan dropped the oldest ones
    assert checkpoint(conversation)[0] == 3
    assert contents(alex) == ["Always pays by card.", "Prefers email over phone."]


def test_the_sweep_takes_inactive_conversations_with_a_floor_of_one(app, alex):
    conversation = chat(alex, "I prefer email over phone.")
    assert distil_conversation(conversation.id, app.config["NIMBUS_MEMORY_MIN_MESSAGES"]) == \
        "waiting: 2 new messages, 4 needed"  # too little for the compression path
    assert inactive_conversations(app.config) == []
    conversation.updated_at = utcnow() - timedelta(minutes=31)
    db.session.commit()
    assert inactive_conversations(app.config) == [conversation.id]
    done = sweep(app.config, run=distil_conversation)
    assert done == [(conversation.id, "wrote 1 memory")]
    assert inactive_conversations(app.config) == []


def test_the_distiller_is_offered_the_sessions_scopes_in_the_apps_words(app, alex):
    scope = SessionScope.for_user(alex)
    schema = output_schema(scope)["properties"]["memories"]["items"]["properties"]
    assert schema["scope"]["enum"] == ["workspace", "account", "order"]
    assert schema["order_number"]["enum"] == [1041, 1042, 1043, 1044, 1045]
    prompt = system_prompt(chat(alex, "Hi"), scope, app.config)
    assert MARKER in prompt and "tenant" not in prompt and "memorable" not in prompt


def test_a_workspace_answer_is_written_without_a_memorable(app, alex, sam):
    app.config["NIMBUS_MEMORY_CHAT_WRITES_WORKSPACE"] = True
    conversation = chat(alex, "Hi")
    reply = {"memories": [{"content": "The shop ships from Leeds.", "scope": "workspace",
                           "personal": False}]}
    distil_conversation(conversation.id, provider=ScriptedModel(json.dumps(reply)))
    memory = newest(SessionScope.for_user(sam), 1)[0]
    assert (memory.tenant_id, memory.memorable_type, memory.subject_id) == (alex.tenant_id, None,
                                                                            None)


def test_by_default_a_chat_cannot_write_for_the_whole_shop(app, alex, sam):
    conversation = chat(alex, "Hi")
    reply = {"memories": [{"content": "Everyone gets free shipping.", "scope": "workspace",
                           "personal": False}]}
    distil_conversation(conversation.id, provider=ScriptedModel(json.dumps(reply)))
    assert contents(sam) == [] and contents(alex) == ["Everyone gets free shipping."]


def test_scopes_outside_the_session_are_dropped(app, alex):
    conversation = chat(alex, "Hi")
    reply = {"memories": [{"content": "A", "scope": "planet", "personal": True},
                          {"content": "B", "scope": "order", "order_number": 7, "personal": True}]}
    assert distil_conversation(conversation.id, provider=ScriptedModel(json.dumps(reply))) == \
        "nothing found"


def test_an_opted_out_person_is_not_distilled_and_their_window_is_skipped(app, alex):
    set_memory_sharing(alex, False)
    conversation = chat(alex, "I prefer email over phone.")
    model = ScriptedModel()
    assert distil_conversation(conversation.id, provider=model).startswith("skipped")
    assert model.requests == [] and checkpoint(conversation)[0] == 0
    set_memory_sharing(alex, True)
    assert distil_conversation(conversation.id).startswith("waiting")  # never retro-actively
    assert contents(alex) == []


def test_the_worker_runs_the_sweep_every_five_minutes(app):
    from datetime import datetime

    from webapp.jobs import huey

    def due(minute):
        return [t.name for t in huey.read_periodic(datetime(2026, 1, 1, 10, minute))]
    assert "distil_inactive_sweep" in due(35) and "distil_inactive_sweep" not in due(36)


def test_the_instructions_can_be_replaced_but_not_the_output_shape(app, alex, tmp_path):
    custom = tmp_path / "prompt.txt"
    custom.write_text("Keep only what {name} says about deliveries at {shop}.", encoding="utf-8")
    app.config["NIMBUS_MEMORY_PROMPT"] = str(custom)
    conversation = chat(alex, "I prefer email over phone.")
    model = ScriptedModel(json.dumps({"memories": []}))
    distil_conversation(conversation.id, provider=model)
    prompt = model.requests[0][0]["content"]
    assert prompt.startswith("Keep only what Alex Rivera says about deliveries at Nimbus Demo Shop.")
    assert MARKER in prompt and '"enum": ["workspace", "account", "order"]' in prompt


def test_remember_that_we_always_is_one_memory_shared_with_the_account(app, alex, sam):
    conversation = chat(alex, "Remember that we always pay by invoice.")
    assert len(contents(alex)) == 1  # the save_memory tool's copy, personal
    distil_conversation(conversation.id)
    assert len(contents(alex)) == 1  # the distiller's replaced it
    memory = newest(SessionScope.for_user(alex), 1)[0]
    assert memory.content == "We always pay by invoice."
    assert (memory.memorable_type, memory.memorable_id, memory.subject_id) == ("account", alex.id,
                                                                               None)
    assert contents(sam) == []


def test_a_fact_the_tool_kept_in_the_same_place_is_not_written_twice(app, alex):
    conversation = chat(alex, "Remember that I prefer email over phone.")
    distil_conversation(conversation.id)
    assert contents(alex) == ["Prefers email over phone."]


def test_remember_to_is_advice_not_a_fact(app, alex):
    conversation = chat(alex, "Remember to send the invoice with the parcel.",
                        "Please remember to call before delivering.")
    assert distil_conversation(conversation.id) == "nothing found"
    assert contents(alex) == []


def test_distilled_memories_are_notes_without_a_subject(app, alex):
    conversation = chat(alex, "I don't want calls after 6pm.", "Remember that I knew the old "
                        "manager.", "Remember that I met the courier at the back door.",
                        "Remember that I wanted the blue one.", "I always fix my own bike.")
    distil_conversation(conversation.id)
    assert sorted(contents(alex)) == [
        "Doesn't want calls after 6pm.", "Knew the old manager.", "Met the courier at the back "
        "door.", 'Said: "I always fix my own bike."', "Wanted the blue one."]


def test_distilled_memories_are_embedded_together(app, alex, monkeypatch):
    from webapp.memories.search.embeddings import MiniLMEmbedder
    app.config["NIMBUS_MEMORY_SEARCH"] = True
    batches = []
    original = MiniLMEmbedder.embed
    monkeypatch.setattr(MiniLMEmbedder, "embed",
                        lambda self, texts: batches.append(len(texts)) or original(self, texts))
    conversation = chat(alex, "Hi", "My name is Dara.", "I prefer email over phone.")
    batches.clear()
    distil_conversation(conversation.id)
    assert batches == [2] and all(m.embedding for m in newest(SessionScope.for_user(alex), 5))


def test_a_guest_is_noted_without_a_handle_and_answered_as_you(app, guest):
    visitor = guest_user(guest)
    distil_conversation(chat(visitor, "Hi", "I prefer email over phone.").id)
    assert contents(visitor) == ["Prefers email over phone."]
    answer, _, _ = ask(visitor, "How do I prefer to be contacted?")
    assert "you prefer email over phone" in answer.lower() and visitor.name not in answer


def test_a_window_the_server_reported_is_read_a_part_at_a_time_oldest_first(app, alex):
    filler = "I want to describe everything about the parcel and its contents in detail. " * 12
    conversation = chat(alex, *[f"Note {n}: {filler}" for n in range(8)])
    model = ScriptedModel(json.dumps({"memories": []}), json.dumps({"memories": []}))
    app.config["NIMBUS_CONTEXT_WINDOW"] = 2048  # as llama-server's /props says
    distil_conversation(conversation.id, provider=model)
    through, _ = checkpoint(conversation)
    assert 0 <= through < 7  # only what fits was read, so only that is marked read
    sent = model.requests[0][1]["content"]
    assert "Note 0:" in sent and f"Note {through + 1}:" not in sent
    distil_conversation(conversation.id, provider=model)
    assert checkpoint(conversation)[0] > through  # the next run reads on from there
