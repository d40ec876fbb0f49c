"""The real llama-server at a 2,048-token window, one slot, through a recording proxy: a
34-turn conversation with a 6,800-character paste in the middle. The paste is refused before it
is sent, with its size in words; the server refuses no request for size, every turn ends
answered or cut off, a rolling summary is stored, and no request carries Nimbus's fallback
sentence as the model's words."""
import pytest

from webapp.agent.model_call import FALLBACK_ERROR
from webapp.context.summary.models import ConversationSummary
from webapp.extensions import db
from webapp.llm import get_provider, profile, server_counts
from webapp.llm.calls import _SLOTS
from webapp.models import Turn

from .fakes.recording_proxy import RecordingProxy
from .support import ask, guest_user
from .test_message_fits_window import PASTE
from .test_provider_conformance import real_server  # noqa: F401  the same start-or-skip

ITEMS = ["rain jacket", "kettle", "desk lamp", "backpack", "headphones", "teapot", "scarf"]


@pytest.mark.timeout(900)
def test_a_34_turn_conversation_with_a_paste_at_2048_tokens(app, guest, real_server):  # noqa: F811
    if real_server.process is None or real_server.process.poll() is not None:
        real_server.start()
    profile.forget()
    server_counts.forget()
    _SLOTS.clear()
    with RecordingProxy(real_server.base_url) as proxy:
        app.config.update(OPENAI_BASE_URL=proxy.base_url, OPENAI_API_KEY="test",
                          NIMBUS_MODEL=real_server.model_name, NIMBUS_MAX_OUTPUT_TOKENS=64,
                          NIMBUS_MEMORY_TOOLS=False, NIMBUS_PROVIDER_TIMEOUT=120.0,
                          # a 135M model on two busy cores: a 2,000-token prompt takes a while
                          NIMBUS_FIRST_TOKEN_TIMEOUT=90.0, NIMBUS_IDLE_TIMEOUT=60.0)
        provider = get_provider(app.config)
        user = guest_user(guest)
        _, conversation, _ = ask(user, "Hi, I have a few questions about my orders.",
                                 provider=provider)
        for n in range(1, 34):
            if n == 17:
                refused = guest.post(f"/c/{conversation.id}/messages", data={"message": PASTE},
                                     headers={"HX-Request": "true"})
                assert refused.status_code == 422 and "reads 2,048 at once" in refused.text
            item = ITEMS[n % len(ITEMS)]
            ask(user, f"Turn {n}: the {item} from order #{1040 + n % 5} arrived scratched and "
                      f"the box was open; I am Dara from Lisbon. What should I do about it?",
                conversation, provider=provider)
    profile.forget()
    _SLOTS.clear()
    turns = db.session.query(Turn).filter_by(conversation_id=conversation.id).all()
    assert len(turns) == 34, "the paste was stored nowhere"
    failed = [(t.seq, t.outcome, t.trace[-1:]) for t in turns if t.outcome not in
              ("answered", "cut_off")]
    assert failed == []
    refused = [t.seq for t in turns if any(step["kind"] == "retry" for step in t.trace)]
    assert refused == [], "the server refused these turns' first request as too long"
    summary = db.session.query(ConversationSummary).filter_by(
        conversation_id=conversation.id).first()
    assert summary is not None and summary.through_seq >= 0 and summary.text.strip(), \
        (summary and (summary.through_seq, summary.failure))
    for request in proxy.chat_requests():
        said = [m.get("content") or "" for m in request["messages"] if m["role"] == "assistant"]
        assert not any(FALLBACK_ERROR in text for text in said)
