"""A failed reply's notice is Nimbus's words, shown to the person, never resent as the model's."""
from webapp.agent.loop import FALLBACK_ERROR
from webapp.extensions import db
from webapp.llm.base import ProviderError
from webapp.models import Turn
from webapp.storage import all_turns

from .fakes.scripted_model import ScriptedModel
from .support import ask


class DiesMidReply(ScriptedModel):
    """Writes a few words of its first reply, then the connection fails."""

    def stream(self, messages, tools):
        if self.requests:
            yield from super().stream(messages, tools)
            return
        self.requests.append(messages)
        yield "Your order "
        yield "is on "
        raise ProviderError("connection reset")


def sent_text(request) -> str:
    return "\n".join(m.get("content") or "" for m in request)


def test_a_failed_turns_notice_is_shown_but_not_resent(alex):
    model = ScriptedModel(ProviderError("down"), "Hello again.", "Still here.")
    answer, conversation, _ = ask(alex, "Hi", provider=model)
    assert answer == FALLBACK_ERROR
    assert all_turns(conversation.id)[0].answer == FALLBACK_ERROR  # the person still reads it
    ask(alex, "Are you there?", conversation=conversation, provider=model)
    resent = model.requests[1]
    assert FALLBACK_ERROR not in sent_text(resent)
    assert [m["role"] for m in resent[1:]] == ["user", "user"]  # nothing said in its place
    ask(alex, "And now?", conversation=conversation, provider=model)  # compacted, too
    assert FALLBACK_ERROR not in sent_text(model.requests[2])


def test_the_words_written_before_a_failure_are_resent_as_they_were(alex):
    model = DiesMidReply("Sure.")
    ask(alex, "Where is my order?", provider=model)
    turn = db.session.query(Turn).order_by(Turn.id.desc()).first()
    assert turn.outcome == "api_error" and turn.answer.endswith(FALLBACK_ERROR)
    assert turn.answer.startswith("Your order is on")
    ask(alex, "Thanks", conversation=turn.conversation, provider=model)
    resent = model.requests[1]
    assert FALLBACK_ERROR not in sent_text(resent)
    assert {"role": "assistant", "content": "Your order is on"} in resent
