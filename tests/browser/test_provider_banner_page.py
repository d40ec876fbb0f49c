"""The provider banner in a real browser: the llama-server fake killed while the app runs turns it
red when the failed reply finishes (no reload), and the next answered reply turns it back."""
import pytest
from playwright.sync_api import expect

from webapp.llm import openai_provider, profile
from webapp.llm.calls import _SLOTS

from tests.browser.test_chat_page import send
from tests.fakes.compat_servers import CompatServer


@pytest.fixture
def served(live_app, monkeypatch):
    openai_provider.QUIRKS.clear()
    profile.forget()
    _SLOTS.clear()
    with CompatServer("llama-server") as server:
        for key, value in (("OPENAI_BASE_URL", server.base_url), ("OPENAI_API_KEY", "test"),
                           ("NIMBUS_MODEL", "fake-model"), ("NIMBUS_MEMORY_TOOLS", False)):
            monkeypatch.setitem(live_app.config, key, value)
        yield server
    profile.forget()
    _SLOTS.clear()


def test_the_banner_turns_red_after_one_failed_reply_and_back_after_an_answer(page, served):
    page.goto("/")
    banner = page.locator("#provider-banner")
    expect(banner).to_have_text("Answering: llama.cpp · fake-model")
    served.kill()
    send(page, "Are you there?", 0)
    expect(banner).to_contain_text("the last reply failed")
    expect(banner).to_have_attribute("role", "alert")
    served.revive()
    send(page, "Hello again", 1)
    expect(banner).to_have_text("Answering: llama.cpp · fake-model")
