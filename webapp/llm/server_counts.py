"""The tool specs counted by the server itself, where it offers a way: llama.cpp's
`/apply-template` renders a request through the model's own chat template (tools included) and
`/tokenize` counts the result, so the specs are counted as the server will count them
(SmolLM2 with a Hermes template: 959 tokens, where the four-characters estimate says 730).
An estimate that low shrank every reply's calibration target by the difference, and the
token ratio drifted from 1.0 towards 1.8. Elsewhere, or when the server does not answer, the
estimate stands. The count is kept per process for each endpoint, model and set of specs.
"""
import hashlib
import json
import logging
import threading
import time

import httpx2

from .profile import PROBE_TIMEOUT, RETRY_UNREACHABLE, Profile, server_root
from .tokens import estimate_tools

log = logging.getLogger(__name__)
_CACHE: dict[tuple, tuple[float, int | None]] = {}
_LOCK = threading.Lock()
PROBE = [{"role": "system", "content": "."}, {"role": "user", "content": "."}]


def tool_tokens(config, profile: Profile, specs: list[dict]) -> tuple[int, bool]:
    """(tokens the specs take, whether the server counted them) — else the estimate."""
    if not specs:
        return 0, True
    counted = server_count(config, profile, specs) if profile.kind == "llama.cpp" else None
    return (counted, True) if counted is not None else (estimate_tools(specs), False)


def server_count(config, profile: Profile, specs: list[dict]) -> int | None:
    base_url = config.get("OPENAI_BASE_URL") or ""
    digest = hashlib.sha1(json.dumps(specs, sort_keys=True).encode()).hexdigest()
    key = (base_url, config.get("NIMBUS_MODEL") or "", digest)
    now = time.monotonic()
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is not None and (cached[1] is not None or now - cached[0] < RETRY_UNREACHABLE):
        return cached[1]
    try:
        counted = count_with_server(base_url, config.get("OPENAI_API_KEY"), specs)
    except (httpx2.HTTPError, ValueError, KeyError, TypeError) as error:
        log.info("provider %s: the tool specs are estimated (%s did not count them: %s)",
                 profile.label, base_url, type(error).__name__)
        counted = None
    with _LOCK:
        _CACHE[key] = (now, counted)
    return counted


def count_with_server(base_url: str, api_key: str | None, specs: list[dict]) -> int:
    """Tokens of the probe rendered with the specs less without them, as the server counts."""
    root = server_root(base_url)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    tools = [{"type": "function", "function": spec} for spec in specs]
    with httpx2.Client(timeout=PROBE_TIMEOUT, headers=headers) as client:
        def tokens(body: dict) -> int:
            rendered = client.post(f"{root}/apply-template", json=body)
            rendered.raise_for_status()
            counted = client.post(f"{root}/tokenize", json={"content": rendered.json()["prompt"]})
            counted.raise_for_status()
            return len(counted.json()["tokens"])
        return max(tokens({"messages": PROBE, "tools": tools}) - tokens({"messages": PROBE}), 0)


def forget() -> None:
    with _LOCK:
        _CACHE.clear()
