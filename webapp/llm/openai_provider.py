"""Any OpenAI-compatible Chat Completions endpoint (OpenAI, Gemini, Ollama, vLLM, llama.cpp)."""
import json
import os
import threading
from typing import Iterator

import httpx2
import openai

from .base import ProviderError, Reply, ToolCall


def to_openai_messages(messages: list[dict]) -> list[dict]:
    """Convert neutral messages; a stored provider_raw is resent as is to keep extra fields."""
    converted = []
    for m in messages:
        if m["role"] == "assistant":
            if m.get("provider_raw"):
                converted.append(m["provider_raw"])
                continue
            out = {"role": "assistant", "content": m.get("content") or None}
            if m.get("tool_calls"):
                out["tool_calls"] = [
                    {"id": c["id"], "type": "function",
                     "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
                    for c in m["tool_calls"]]
            converted.append(out)
        elif m["role"] == "tool":
            converted.append({"role": "tool", "tool_call_id": m["tool_call_id"],
                              "content": m["content"]})
        else:
            converted.append({"role": m["role"], "content": m["content"]})
    return converted


def to_openai_tools(tools: list[dict]) -> list[dict]:
    return [{"type": "function", "function": t} for t in tools]


def parse_arguments(raw: str) -> dict:
    """Models sometimes send invalid JSON arguments; pass the text on so the tool can refuse it."""
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {"_invalid_json": raw}
    return value if isinstance(value, dict) else {"_invalid_json": raw}


_CLIENTS: dict[tuple, openai.OpenAI] = {}
_CLIENTS_LOCK = threading.Lock()


def shared_client(api_key: str, base_url: str | None, timeout: float) -> openai.OpenAI:
    """One client per process and endpoint: building one loads the CA bundle (~15 ms of CPU),
    and a shared one reuses its pooled connections."""
    key = (os.getpid(), api_key, base_url, timeout)
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            client = _CLIENTS[key] = openai.OpenAI(api_key=api_key, base_url=base_url,
                                                   timeout=timeout, max_retries=1)
    return client


class OpenAIProvider:
    offline = False

    def __init__(self, api_key: str, base_url: str | None, model: str, timeout: float):
        self.name = f"openai-compatible ({base_url or 'api.openai.com'})"
        self.model = model
        self.client = shared_client(api_key, base_url, timeout)

    def chunks(self, request: dict) -> Iterator[dict]:
        """The streamed chunks as plain dicts: the SDK's per-chunk models cost ~1 ms each, which
        hundreds of concurrent streams cannot afford on one worker."""
        with self.client.chat.completions.with_streaming_response.create(**request) as response:
            for line in response.iter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    return
                chunk = json.loads(data)
                if chunk.get("error"):
                    raise openai.APIError(str(chunk["error"].get("message") or chunk["error"]),
                                          response.http_request, body=chunk["error"])
                yield chunk

    def stream(self, messages: list[dict], tools: list[dict]) -> Iterator[str | Reply]:
        request = {"model": self.model, "messages": to_openai_messages(messages), "stream": True,
                   "stream_options": {"include_usage": True}}
        if tools:
            request["tools"] = to_openai_tools(tools)
        text, calls, usage = [], {}, None
        try:
            for chunk in self.chunks(request):
                if chunk.get("usage"):
                    usage = {"prompt_tokens": chunk["usage"].get("prompt_tokens"),
                             "completion_tokens": chunk["usage"].get("completion_tokens")}
                for choice in chunk.get("choices") or []:
                    delta = choice.get("delta") or {}
                    if delta.get("content"):
                        text.append(delta["content"])
                        yield delta["content"]
                    for tc in delta.get("tool_calls") or []:
                        call = calls.setdefault(tc.get("index", 0),
                                                {"id": "", "name": "", "arguments": ""})
                        call["id"] = tc.get("id") or call["id"]
                        function = tc.get("function") or {}
                        call["name"] += function.get("name") or ""
                        call["arguments"] += function.get("arguments") or ""
        except (openai.OpenAIError, httpx2.HTTPError, ValueError) as error:
            raise ProviderError(f"{type(error).__name__}: {error}") from error
        tool_calls = [ToolCall(c["id"] or f"call_{i}", c["name"], parse_arguments(c["arguments"]))
                      for i, c in sorted(calls.items())]
        raw = {"role": "assistant", "content": "".join(text) or None}
        if tool_calls:
            raw["tool_calls"] = [{"id": c.id, "type": "function", "function": {
                "name": c.name, "arguments": calls[i]["arguments"] or "{}"}}
                for i, c in zip(sorted(calls), tool_calls)]
        yield Reply("".join(text), tool_calls, raw, usage)
