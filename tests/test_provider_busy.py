"""A busy model server (429, or 503 with Retry-After) is answered at once with when to try
again: the person is never held for the server's Retry-After, and the request is sent once."""
import time

import pytest

from webapp.agent.loop import FALLBACK_ERROR
from webapp.storage import all_turns

from .support import ask
from .test_provider_deadlines import fresh_endpoints, provider_at, server  # noqa: F401


@pytest.mark.parametrize("status, headers, notice", [
    (429, {"Retry-After": "30"}, "the model is busy right now. Please try again in 30 seconds."),
    (429, {"Retry-After": "600"}, "the model is busy right now. Please try again in 10 minutes."),
    (429, {}, "the model is busy right now. Please try again in a moment."),
    (503, {"Retry-After": "5"}, "the model is busy right now. Please try again in 5 seconds."),
])
def test_a_busy_server_is_answered_at_once_with_when_to_try_again(
        app, alex, server, status, headers, notice):  # noqa: F811
    server.script({"status": status, "error": "Rate limit reached", "headers": headers})
    began = time.monotonic()
    answer, conversation, _ = ask(alex, "Where is my order #1041?",
                                  provider=provider_at(app, server))
    assert time.monotonic() - began < 3.0 and len(server.requests) == 1
    assert answer == f"Sorry, {notice}"
    assert all_turns(conversation.id)[0].outcome == "api_error"


def test_a_server_error_without_retry_after_keeps_the_plain_notice(app, alex, server):  # noqa: F811
    server.script({"status": 503, "error": "overloaded"})
    answer, _, _ = ask(alex, "Hello?", provider=provider_at(app, server))
    assert answer == FALLBACK_ERROR
