"""Long-term memory end to end through the CLI and the offline model, plus opt-out and tools."""
import re

from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.sharing import set_memory_sharing, shares_memories, sharing_choice
from webapp.memories.store.rows import newest

from .support import ask, run


def test_a_remembered_preference_reaches_a_new_conversation_of_that_person_only(runner):
    first = run(runner, "ask", "Remember that I prefer email over phone.")
    assert "remember" in first.lower() and "email" in first
    later = run(runner, "ask", "How do I prefer to be contacted?")
    assert "email" in later.lower()
    first_id = re.search(r"conversation: (\w+)", first).group(1)
    assert first_id not in later  # a new conversation, so the answer came from memory
    other = run(runner, "ask", "How do I prefer to be contacted?", "--user", "sam@example.com")
    assert "email" not in other.lower() and "don't know" in other


def test_memories_commands_add_list_search_delete(runner):
    added = run(runner, "memories", "add", "Alex's parcels go to the back door.")
    memory_id = re.search(r"#(\d+)", added).group(1)
    assert "added by hand" in run(runner, "memories", "list")
    found = run(runner, "memories", "search", "parcels back door")
    assert "back door" in found and "keyword rank 1" in found
    assert "No memories yet" in run(runner, "memories", "list", "--user", "sam@example.com")
    refused = runner.invoke(args=["memories", "delete", memory_id, "--user", "sam@example.com"])
    assert refused.exit_code != 0 and "no memory" in refused.output
    run(runner, "memories", "delete", memory_id)
    assert "No memories yet" in run(runner, "memories", "list")


def test_memories_add_by_scope(runner):
    out = run(runner, "memories", "add", "It is a gift.", "--scope", "order", "--order", "1042",
              "--shared")
    assert "[order #1042 · shared]" in out
    refused = runner.invoke(args=["memories", "add", "x", "--scope", "order", "--order", "9"])
    assert refused.exit_code != 0 and "not one of this customer's orders" in refused.output


def test_opt_out_and_in_from_the_command_line(runner, app, alex):
    assert "never chose" in run(runner, "memories", "list")
    assert "does not share" in run(runner, "memories", "opt-out", "--user", alex.email)
    assert sharing_choice(alex) is False
    run(runner, "memories", "opt-in", "--user", alex.email)
    assert sharing_choice(alex) is True


def test_opt_out_has_three_states(app, alex):
    assert sharing_choice(alex) is None and shares_memories(alex, app.config)
    app.config["NIMBUS_MEMORY_SHARING_DEFAULT"] = False
    assert not shares_memories(alex, app.config)  # the default follows the configuration
    set_memory_sharing(alex, True)
    assert shares_memories(alex, app.config)  # a decision beats the default
    app.config["NIMBUS_MEMORY_SHARING_DEFAULT"] = True
    set_memory_sharing(alex, False)
    assert not shares_memories(alex, app.config)
    set_memory_sharing(alex, None)
    assert sharing_choice(alex) is None and shares_memories(alex, app.config)


def test_opting_out_stops_save_memory_but_hides_nothing(app, alex):
    ask(alex, "Remember that I prefer email over phone.")
    set_memory_sharing(alex, False)
    answer, _, _ = ask(alex, "Remember that I live in Leeds.")
    assert "you turned memory off" in answer and "Alex Rivera" not in answer
    kept = [m.content for m in newest(SessionScope.for_user(alex), 10)]
    assert kept == ["Prefers email over phone."]
    answer, _, _ = ask(alex, "How do I prefer to be contacted?")
    assert "email" in answer


def test_memory_tools_can_be_switched_off(app, alex):
    app.config["NIMBUS_MEMORY_TOOLS"] = False
    answer, _, events = ask(alex, "Remember that I prefer email over phone.")
    assert not any(e.kind == "tool_call" for e in events)
    assert newest(SessionScope.for_user(alex), 10) == []


def test_search_memories_reaches_what_the_block_left_out(app, alex):
    app.config.update(NIMBUS_MEMORY_BLOCK_LIMIT=2, NIMBUS_MEMORY_SEARCH=False)  # newest 2 only
    ask(alex, "Remember that I prefer email over phone.")
    for fact in ("I live in Leeds.", "I always pay by card.", "I work nights."):
        ask(alex, f"Remember that {fact}")
    answer, _, events = ask(alex, "How do I prefer to be contacted?")
    assert [e.data["tool"] for e in events if e.kind == "tool_call"] == ["search_memories"]
    assert "email" in answer


def test_distil_inactive_and_search_commands(runner, app):
    first = run(runner, "ask", "I always pay by card.")
    conversation = re.search(r"conversation: (\w+)", first).group(1)
    swept = run(runner, "distil-inactive", "--minutes", "0")
    assert f"{conversation}: wrote 1 memory" in swept
    assert "0 conversations swept" in run(runner, "distil-inactive", "--minutes", "0")
    found = run(runner, "search", "pay card")
    assert f"{conversation}#turn-1" in found and "pay by card" in found
    assert "0 results" in run(runner, "search", "pay card", "--user", "sam@example.com")


def test_embed_backfills_vectors_once_search_is_on(runner, app, alex):
    app.config["NIMBUS_MEMORY_SEARCH"] = False
    run(runner, "memories", "add", "Alex prefers email over phone.")
    ask(alex, "Where is my parcel?")
    refused = runner.invoke(args=["memories", "embed"])
    assert refused.exit_code != 0 and "NIMBUS_MEMORY_SEARCH" in refused.output
    app.config["NIMBUS_MEMORY_SEARCH"] = True
    assert "Embedded 1 memory and 1 turn " in run(runner, "memories", "embed")
    assert "Embedded 0 memories and 0 turns" in run(runner, "memories", "embed")


def test_embed_runs_in_batches_with_a_progress_bar(runner, app, alex, monkeypatch):
    from webapp.memories.search.embeddings import MiniLMEmbedder
    app.config["NIMBUS_MEMORY_SEARCH"] = False
    for question in ("Hi", "Where is my parcel?", "Thanks", "Bye", "Order 1042?"):
        ask(alex, question)
    app.config["NIMBUS_MEMORY_SEARCH"] = True
    batches, original = [], MiniLMEmbedder.embed
    monkeypatch.setattr(MiniLMEmbedder, "embed",
                        lambda self, texts: batches.append(len(texts)) or original(self, texts))
    output = run(runner, "memories", "embed", "--batch", "2")
    assert "Embedding" in output and "Embedded 0 memories and 5 turns" in output
    assert batches == [2, 2, 1]


def test_save_memory_writes_where_the_model_says_within_the_session(app, alex, sam):
    from .fakes.scripted_model import ScriptedModel
    model = ScriptedModel({"tool": "save_memory", "arguments": {
        "content": "Order 1042 is a birthday present.", "scope": "order", "order_number": 1042,
        "personal": False}}, "Noted.")
    ask(alex, "Remember that order 1042 is a present.", provider=model)
    result = model.requests[1][-1]["content"]
    assert '"saved": true' in result and '"scope": "order #1042 · shared"' in result
    foreign = ScriptedModel({"tool": "save_memory", "arguments": {
        "content": "x", "scope": "order", "order_number": 4242}}, "ok")
    ask(sam, "Remember this.", provider=foreign)
    assert "is not one of this customer's orders" in foreign.requests[1][-1]["content"]


def test_search_history_tool_finds_the_persons_earlier_turns(app, alex, sam):
    from .fakes.scripted_model import ScriptedModel
    ask(alex, "My parcel should go to the back door.")
    ask(sam, "My parcel should go to the garage.")
    model = ScriptedModel({"tool": "search_history", "arguments": {"query": "parcel"}}, "ok")
    ask(alex, "Where did I want parcels?", provider=model)
    result = model.requests[1][-1]["content"]
    assert "back door" in result and "garage" not in result


def test_while_opted_out_the_save_step_says_nothing_was_saved_because_memory_is_off(app, alex):
    from webapp.chat.tool_steps import steps_of
    set_memory_sharing(alex, False)
    _, conversation, _ = ask(alex, "Remember that I live in Leeds.")
    step = steps_of(conversation.turns[0].messages)[0]
    assert step.label == "Nothing saved: you turned memory off"
    assert "Saved a memory" not in step.label
