"""The banner says how the provider is, from the last reply it was asked for: with the server
killed while the app runs, the page says so after one failed reply, on a reload and in the failed
reply's own `done` event, and says "Answering" again after the next reply that succeeds."""
import pytest

from webapp.llm import get_provider, openai_provider, profile
from webapp.llm.calls import _SLOTS

from .support import ask, guest_user, sse_events
from .fakes.compat_servers import CompatServer


@pytest.fixture
def server(app):
    openai_provider.QUIRKS.clear()
    profile.forget()
    _SLOTS.clear()
    with CompatServer("llama-server") as server:
        app.config.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test",
                          NIMBUS_MODEL="fake-model", NIMBUS_MEMORY_TOOLS=False)
        yield server
    profile.forget()
    _SLOTS.clear()


def banner(guest) -> str:
    page = guest.get("/").text
    return page[page.index('id="provider-banner"'):].split("</p>")[0]


def test_an_outage_shows_after_one_failed_reply_and_clears_on_the_next_answer(app, guest, server):
    user = guest_user(guest)
    ask(user, "Hello", provider=get_provider(app.config))
    assert "Answering: <strong>llama.cpp · fake-model</strong>" in banner(guest)
    server.kill()
    ask(user, "Are you there?", provider=get_provider(app.config))
    failed = banner(guest)
    assert 'role="alert"' in failed and "the last reply failed" in failed
    assert "the last reply failed" in banner(guest)  # a reload says it again
    server.revive()
    ask(user, "Hello again", provider=get_provider(app.config))
    assert "Answering: <strong>llama.cpp · fake-model</strong>" in banner(guest)


def test_the_failed_replys_done_event_carries_the_banner(app, guest, server):
    server.kill()
    response = guest.post("/messages", data={"message": "Are you there?"})
    conversation = response.headers["HX-Push-Url"].rsplit("/", 1)[-1]
    body = guest.get(f"/c/{conversation}/turns/0/stream").get_data(as_text=True)
    done = dict(sse_events(body))["done"]
    assert 'id="provider-banner"' in done and 'hx-swap-oob="true"' in done
    assert "the last reply failed" in done
