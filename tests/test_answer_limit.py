"""A runaway provider answer (two million characters) is cut at NIMBUS_MAX_ANSWER_CHARS and says
so: neither stored, nor streamed, nor shown in full."""
from webapp.agent.loop import CUT_MARK
from webapp.llm.base import ChatProvider, Reply

from .support import ask, guest_user, use_provider

HUGE = 2_000_001


class Runaway(ChatProvider):
    """Streams HUGE characters in 1,000-character chunks, then (if ever reached) the reply."""
    name, model, offline = "runaway", "runaway", True

    def __init__(self, streaming=True):
        self.streaming, self.chunks_sent = streaming, 0

    def stream(self, messages, tools):
        if self.streaming:
            for _ in range(HUGE // 1000 + 1):
                self.chunks_sent += 1
                yield "lorem ipsu" * 100
        yield Reply("x" * HUGE, provider_raw={"role": "assistant", "content": "x" * HUGE})


def test_a_streamed_runaway_answer_is_cut_stored_short_and_marked(app):
    app.config["NIMBUS_MAX_ANSWER_CHARS"] = 5000
    provider = Runaway()
    answer, conversation, events = ask(guest_user_for(app), "Tell me everything", provider=provider)
    streamed = "".join(e.data["text"] for e in events if e.kind == "token")
    assert len(streamed) == 5000 and provider.chunks_sent == 6  # it stopped listening
    turn = conversation.turns[-1]
    assert turn.answer.endswith(CUT_MARK.format(limit=5000)) and len(turn.answer) < 5100
    assert all(len(m.get("content") or "") < 5100 for m in turn.messages)


def test_a_whole_runaway_reply_is_cut_and_its_raw_message_dropped(app):
    answer, conversation, _ = ask(guest_user_for(app), "Tell me", provider=Runaway(streaming=False))
    turn = conversation.turns[-1]
    assert len(turn.answer) < 100_100 and CUT_MARK.format(limit=100_000) in turn.answer
    assert "provider_raw" not in turn.messages[-1]


def test_the_chat_page_shows_the_cut_answer_not_two_million_characters(app, guest):
    use_provider(app, Runaway())
    _, conversation, _ = ask(guest_user(guest), "Tell me everything", provider=Runaway())
    page = guest.get(f"/c/{conversation.id}")
    assert page.status_code == 200 and len(page.text) < 300_000
    assert "Answer cut here" in page.text


def guest_user_for(app):
    from webapp.accounts import create_guest
    return create_guest(app.config["NIMBUS_DEMO_TENANT"])
