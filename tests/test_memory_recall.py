"""Recall with search on: the embedded MiniLM, hybrid ranking, vectorless rows, embedder failures."""
import numpy as np
import pytest

from webapp.accounts import find_user
from webapp.extensions import db
from webapp.memories.search import embeddings
from webapp.memories.block import memory_section
from webapp.memories.search.embeddings import (
    EmbedderUnavailable,
    MiniLMEmbedder,
    OpenAIEmbedder,
    get_embedder,
)
from webapp.memories.search.conversations import search_turns
from webapp.memories.models import Memory, TurnVector
from webapp.memories.search.recall import for_prompt, search
from webapp.memories.store.scopes import SessionScope
from webapp.memories.store.rows import remember
from webapp.storage import create_conversation, start_turn

from .support import ask, run
from .fakes.openai_server import EMBEDDING_DIMENSIONS, FakeOpenAIServer


@pytest.fixture
def searching(app):
    app.config["NIMBUS_MEMORY_SEARCH"] = True
    return app.config


def note(user, content, config):
    return remember(SessionScope.for_user(user), content, config, source="hand")[0]


def test_minilm_vectors_are_normalised_and_meaningful(app):
    vectors = MiniLMEmbedder().embed(["Alex prefers email over phone.",
                                      "How do I like to be contacted?",
                                      "The espresso grinder arrived broken."])
    assert vectors.shape == (3, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[1] @ vectors[2] + 0.2


def test_minilm_tokenizer_neither_pads_nor_stops_at_128(app):
    tokenizer, _ = MiniLMEmbedder.load()
    assert len(tokenizer.encode("hello").ids) == 3  # [CLS] hello [SEP], no padding
    assert len(tokenizer.encode("word " * 600).ids) == 256


def test_similarity_finds_a_memory_without_shared_keywords(alex, searching):
    note(alex, "Alex prefers email over phone.", searching)
    note(alex, "The espresso grinder arrived broken.", searching)
    found, mode = search(SessionScope.for_user(alex), "How should you contact me?", searching)
    assert mode == "hybrid"
    assert found[0][0].content == "Alex prefers email over phone."
    assert found[0][1].startswith("similarity 0.")


def test_a_memory_without_a_vector_is_reachable_by_keywords_and_sorts_last(app, alex, searching):
    app.config["NIMBUS_MEMORY_SEARCH"] = False
    old = note(alex, "Alex's parcels go to the back door.", app.config)
    app.config["NIMBUS_MEMORY_SEARCH"] = True
    new = note(alex, "Parcels for Alex need a signature.", app.config)
    assert old.embedding is None and new.embedding is not None
    found, _ = search(SessionScope.for_user(alex), "parcels", app.config)
    assert [m.id for m, _ in found] == [new.id, old.id]
    assert found[1][1].startswith("no vector · keyword rank")


def test_an_embedder_that_is_down_falls_back_to_keywords(alex, searching, monkeypatch, caplog):
    def down(self, texts):
        raise EmbedderUnavailable("model file missing")
    monkeypatch.setattr(MiniLMEmbedder, "embed", down)
    memory = note(alex, "Alex prefers email over phone.", searching)
    assert memory.embedding is None  # still stored, just without a vector
    found, mode = search(SessionScope.for_user(alex), "email", searching)
    assert mode == "keywords" and found[0][1] == "keyword rank 1"
    recalled, _ = for_prompt(SessionScope.for_user(alex), searching, "what is the weather")
    assert [m.id for m, _ in recalled] == [memory.id]
    assert "recalling by keywords" in caplog.text


def test_the_block_ranks_by_the_question_being_answered(app, alex, searching):
    searching["NIMBUS_MEMORY_BLOCK_LIMIT"] = 1
    note(alex, "Alex prefers email over phone.", searching)
    note(alex, "Alex lives in Leeds.", searching)
    conversation = create_conversation(alex)
    start_turn(conversation, "How should you contact me?")
    section = memory_section(conversation, None, None)
    assert section.detail["mode"] == "hybrid"
    assert section.detail["memories"][0]["content"] == "Alex prefers email over phone."
    assert section.detail["memories"][0]["why"].startswith("similarity")


def test_vectors_of_another_model_are_not_compared(app, alex, searching):
    memory = note(alex, "Alex prefers email over phone.", searching)
    memory.embedding_model = "some-other-model"
    db.session.commit()
    found, _ = search(SessionScope.for_user(alex), "email", searching)
    assert found[0][1].startswith("no vector")


def test_an_openai_compatible_embeddings_endpoint(app, alex, searching):
    with FakeOpenAIServer() as server:
        searching.update(NIMBUS_MEMORY_EMBEDDINGS="openai", OPENAI_BASE_URL=server.base_url,
                         OPENAI_API_KEY="test", NIMBUS_PROVIDER_TIMEOUT=2.0)
        assert isinstance(get_embedder(searching), OpenAIEmbedder)
        memory = note(alex, "Alex prefers email over phone.", searching)
        assert memory.embedding_model == "text-embedding-3-small"
        assert len(embeddings.from_bytes(memory.embedding)) == EMBEDDING_DIMENSIONS
        assert server.embedding_requests[0]["input"] == ["Alex prefers email over phone."]
        found, mode = search(SessionScope.for_user(alex), "Alex prefers email over phone.",
                             searching)
        assert mode == "hybrid" and found[0][1].startswith("similarity 1.00")
        server.down()
        found, mode = search(SessionScope.for_user(alex), "email", searching)
        assert mode == "keywords" and found[0][0].id == memory.id


def test_conversation_search_is_hybrid_and_only_over_ones_own_turns(app, alex, sam, searching):
    ask(alex, "My parcel should go to the back door.")
    ask(sam, "My parcel should go to the back door too.")
    assert db.session.query(TurnVector).count() == 2
    results, mode = search_turns(alex, "where should deliveries be left", searching)
    assert mode == "hybrid" and len(results) == 1
    assert "back door" in results[0]["content"] and "too" not in results[0]["content"]


def test_conversation_search_fuses_scores_and_memories_ranks_unless_told(app, alex, searching,
                                                                       monkeypatch):
    from webapp.memories.search import conversations, recall
    seen, original = [], recall.rank_hybrid
    spy = (lambda *args, **kwargs: seen.append(kwargs.get("fusion", "rank"))
           or original(*args, **kwargs))
    monkeypatch.setattr(conversations, "rank_hybrid", spy)
    monkeypatch.setattr(recall, "rank_hybrid", spy)
    ask(alex, "Where is my parcel?")
    assert search_turns(alex, "parcel", app.config)[1] == "hybrid"
    search(SessionScope.for_user(alex), "parcel", app.config)
    searching["NIMBUS_HISTORY_FUSION"] = "rank"
    search_turns(alex, "parcel", app.config)
    assert seen == ["score", "rank", "rank"]


def test_a_word_in_most_memories_is_not_scored(app, alex):
    from sqlalchemy import insert

    from webapp.memories.search.keywords import memories_indexed, memory_matches, statistics
    rows = [{"tenant_id": alex.tenant_id, "subject_id": alex.id, "source": "hand",
             "content": f"The customer asked question {i}."} for i in range(1200)]
    rows[7]["content"] = "The customer loves the espresso grinder."
    db.session.execute(insert(Memory), rows)
    db.session.commit()
    scope = SessionScope.for_user(alex)
    stats = statistics(memories_indexed(scope.applies()), ["customer", "grinder"], [])
    assert stats.rows == 1200 and stats.holding == {"grinder": 1}
    scores, rows = memory_matches(scope.applies(), "customer grinder", 50)
    assert len(scores) == 1 and len(rows) == 1


def test_an_imported_conversation_is_searchable_by_meaning(app, runner, searching, tmp_path):
    path = tmp_path / "old.json"
    path.write_text('[{"role": "user", "content": "My parcel should go to the back door."},'
                    ' {"role": "assistant", "content": "Noted: the back door."},'
                    ' {"role": "user", "content": "The espresso grinder arrived broken."},'
                    ' {"role": "assistant", "content": "Sorry about that."}]')
    output = run(runner, "import", str(path), "--user", "dana@example.org")
    assert "Queued its turns for similarity search" in output
    assert db.session.query(TurnVector).count() == 2
    dana = find_user("dana@example.org")
    results, mode = search_turns(dana, "where should deliveries be left", searching)
    assert mode == "hybrid" and "back door" in results[0]["content"]
