"""Deadlines against the real llama-server (tests/llama_server.py): a reply that streams longer
than NIMBUS_PROVIDER_TIMEOUT comes whole, and a server frozen mid-reply (SIGSTOP) is ended at the
idle deadline with its words. Skipped, or failed in CI, as the conformance cases are."""
import os
import signal
import time

import pytest

from webapp.llm import openai_provider
from webapp.llm.openai_provider import OpenAIProvider

from .test_provider_conformance import real_server  # noqa: F401  the same start-or-skip

pytestmark = pytest.mark.timeout(600)  # two busy cores write 5 to 50 tokens a second
STORY = [{"role": "user", "content": "Write a long story about a lighthouse keeper and his dog."}]


def provider_for(server, timeout: float, idle: float) -> OpenAIProvider:
    openai_provider.PACES.clear()
    return OpenAIProvider("test", server.base_url, server.model_name, timeout=timeout,
                          max_tokens=300, first_token_timeout=timeout, idle_timeout=idle,
                          profile_config={"OPENAI_BASE_URL": server.base_url,
                                          "NIMBUS_MODEL": server.model_name,
                                          "OPENAI_API_KEY": "test"})


def test_a_real_reply_streaming_past_the_provider_timeout_comes_whole(real_server):  # noqa: F811
    provider = provider_for(real_server, timeout=2.0, idle=10.0)
    began = time.monotonic()
    reply = list(provider.stream(STORY, []))[-1]
    took = time.monotonic() - began
    assert reply.finish_reason in ("stop", "length"), reply.cut_by
    assert took > 2.0, "the model answered within the timeout: nothing was tested"
    assert reply.usage["completion_tokens"] > 20


def test_a_real_server_frozen_mid_reply_is_ended_at_the_idle_deadline(real_server):  # noqa: F811
    provider = provider_for(real_server, timeout=30.0, idle=2.0)
    words, frozen = [], None
    try:
        for chunk in provider.stream(STORY, []):
            if isinstance(chunk, str):
                words.append(chunk)
                if len(words) == 20:
                    os.kill(real_server.process.pid, signal.SIGSTOP)
                    frozen = time.monotonic()
            else:
                reply, ended = chunk, time.monotonic()
    finally:
        os.kill(real_server.process.pid, signal.SIGCONT)
    assert frozen is not None and reply.finish_reason == "deadline"
    # words already on their way when it froze still arrive; the silence counts from the last
    assert reply.text == "".join(words).rstrip() and len(words) >= 20
    assert "sent nothing for 2 s" in reply.cut_by and 1.9 < ended - frozen < 4.5
