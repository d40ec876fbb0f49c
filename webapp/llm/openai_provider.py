"""Any OpenAI-compatible Chat Completions endpoint (OpenAI, Gemini, Ollama, vLLM, llama.cpp).

Servers differ in what they accept and how they stream (docs/operations.md "Local models"); this module
sends what all of them take and reads what any of them sends:
- `tool_choice: "auto"` wherever tools are offered (llama-cpp-python leaves the tools out of
  the prompt without it); a server that refuses tools while streaming (llama-cpp-python: an
  empty 200, or an error naming tool_choice) gets the same request once more, not streamed,
  and is remembered so its later calls go that way at once;
- a tool call's id and name are taken from the first chunk that carries them (some servers
  repeat the name in every chunk), and only its argument fragments are appended;
- content is never sent as null (llama-cpp-python refuses it);
- a stream with no words and no tool call, or with no finish reason, is an error, never an answer;
  `finish_reason: "length"` is passed on, so the turn is marked cut off;
- `max_tokens` is always sent; `response_format` is dropped once for a server that refuses it;
- deadlines fit the server (`calls.Call`): to the first token, between chunks, and a total cap
  from `max_tokens` and the pace; a chat reply that a deadline ends after its first words comes
  back as a Reply with `finish_reason: "deadline"` (the turn is cut off, its words kept), a
  background call's is an error. The SDK never retries (`max_retries=0`): Nimbus decides.
"""
import json
import logging
import os
import re
import threading
import time
import uuid
from typing import Iterator

import httpx2
import openai

from .base import (GAVE_WAY, ChatProvider, ContextTooLong, ProviderBusy, ProviderCancelled,
                   ProviderError, Reply, ToolCall)
from .calls import OVERRUN, WATCHDOG, Call, slot_for

log = logging.getLogger(__name__)

# What each endpoint (base URL) was found to refuse, learnt once per process.
QUIRKS: dict[str, set[str]] = {}
# Tokens per second each endpoint streamed its last long reply at: a call not streamed, whose
# whole answer is its first token, is given the time its output cap takes at that pace.
PACES: dict[str, float] = {}
NO_RESPONSE_FORMAT = "no_response_format"
TOOL_MODES = [(True, "auto"), (False, "auto"), (True, None)]  # (streamed, tool_choice)


def retry_after(response) -> int | None:
    """The seconds a busy server asked us to wait (Retry-After in seconds; a date counts as
    unsaid), at most an hour: None when it said nothing usable."""
    value = (getattr(response, "headers", None) or {}).get("retry-after", "")
    return min(int(value), 3600) if value.strip().isdigit() else None


def mode_quirk(mode) -> str:
    return f"tools_streamed={mode[0]}_choice={mode[1]}"

# How servers say "too long for my context window" (llama.cpp, OpenAI, vLLM, llama-cpp-python,
# LM Studio, Gemini); the number after n_ctx (llama.cpp) is the window.
CONTEXT_ERRORS = re.compile(
    r"exceed_context_size|context_length_exceeded|maximum context length|context window|"
    r"exceeds? (the )?(available )?context|context size|context length|n_ctx|"
    r"input token count|too many tokens|prompt is too long", re.I)
N_CTX = re.compile(r"n_ctx\W+(\d+)|context (?:window|length|size) of (?:only )?(\d+)|"
                   r"maximum context length is (\d+)|tokens allowed \((\d+)\)", re.I)
# The prompt's size as the server counted it (llama.cpp, vLLM, llama-cpp-python, Gemini).
N_PROMPT = re.compile(r"n_prompt_tokens\W+(\d+)|\((\d+) in the messages|"
                      r"requested tokens \((\d+)\)|input token count \((\d+)\)", re.I)


def to_openai_messages(messages: list[dict]) -> list[dict]:
    """Convert neutral messages; a stored provider_raw is resent as is to keep extra fields,
    except that content is never null."""
    converted = []
    for m in messages:
        if m["role"] == "assistant":
            if m.get("provider_raw"):
                raw = dict(m["provider_raw"])
                raw["content"] = raw.get("content") or ""
                converted.append(raw)
                continue
            out = {"role": "assistant", "content": m.get("content") or ""}
            if m.get("tool_calls"):
                out["tool_calls"] = [
                    {"id": c["id"], "type": "function",
                     "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
                    for c in m["tool_calls"]]
            converted.append(out)
        elif m["role"] == "tool":
            converted.append({"role": "tool", "tool_call_id": m["tool_call_id"],
                              "content": m["content"] or ""})
        else:
            converted.append({"role": m["role"], "content": m["content"] or ""})
    return converted


def to_openai_tools(tools: list[dict]) -> list[dict]:
    return [{"type": "function", "function": t} for t in tools]


def parse_arguments(raw) -> dict:
    """Models sometimes send invalid JSON arguments; pass the text on so the tool can refuse it."""
    if isinstance(raw, dict):  # some servers send the object itself
        return raw
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {"_invalid_json": raw}
    return value if isinstance(value, dict) else {"_invalid_json": raw}


def redact(text: str, api_key: str | None) -> str:
    if api_key and len(api_key) > 4:
        text = text.replace(api_key, "***")
    return re.sub(r"(sk-|Bearer\s+)[A-Za-z0-9_\-]{8,}", r"\1***", text)


def context_error(status: int | None, body: str) -> ContextTooLong | None:
    """A ContextTooLong when the error says the request is over the window."""
    if status not in (None, 400, 413, 422, 500) or not CONTEXT_ERRORS.search(body or ""):
        return None
    found, prompt = N_CTX.search(body), N_PROMPT.search(body)
    n_ctx = next((int(g) for g in found.groups() if g), None) if found else None
    n_prompt = next((int(g) for g in prompt.groups() if g), None) if prompt else None
    return ContextTooLong(f"the request is longer than the model's context window: {body[:300]}",
                          n_ctx, n_prompt)


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
                                                   timeout=timeout, max_retries=0)
    return client


class Refused(Exception):
    """The server refused the request's shape before saying a word: worth one changed retry."""

    def __init__(self, what: str, error: ProviderError):
        self.what, self.error = what, error


class OpenAIProvider(ChatProvider):
    takes_options = True

    def __init__(self, api_key: str, base_url: str | None, model: str, timeout: float,
                 max_tokens: int | None = None, first_token_timeout: float | None = None,
                 profile_config: dict | None = None, idle_timeout: float | None = None,
                 min_pace: float | None = None):
        self.name = f"openai-compatible ({base_url or 'api.openai.com'})"
        self.base_url = base_url or ""
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        # The provider timeout bounds every wait for the server to start; a begun reply is
        # held by the idle deadline and the cap instead.
        self.first_token_timeout = min(first_token_timeout or timeout, timeout)
        self.idle_timeout = idle_timeout or self.first_token_timeout
        self.min_pace = min_pace or 1.0
        self.max_tokens = max_tokens
        self.client = shared_client(api_key, base_url, timeout)
        self._calls: dict[int, Call] = {}  # thread ident -> the call it is reading
        self.preempted: set[int] = set()  # background threads asked to give their slot up
        self.profile_config = profile_config or {"OPENAI_BASE_URL": base_url,
                                                 "NIMBUS_MODEL": model, "OPENAI_API_KEY": api_key}

    def slot_count(self) -> int | None:
        """Calls at once: NIMBUS_PROVIDER_SLOTS, else the server's own slots where it says."""
        from .profile import profile_for
        return profile_for(self.profile_config).slots

    @property
    def supports_tools(self) -> bool:
        """Whether the server's chat template carries tools, as it said when first asked."""
        from .profile import profile_for
        return profile_for(self.profile_config).supports_tools

    def give_up_slot(self, thread_id: int) -> None:
        """A chat waits for this background call's slot: end the call now."""
        self.preempted.add(thread_id)
        self.cancel(thread_id, GAVE_WAY)

    def cancel(self, thread_id: int | None = None, reason: str = "stopped") -> None:
        """End the call that thread is reading now (Stop): its socket is shut at once."""
        call = self._calls.get(thread_id if thread_id is not None else threading.get_ident())
        if call is not None:
            call.cancel(reason)

    def stream(self, messages: list[dict], tools: list[dict], response_format: dict | None = None,
               max_tokens: int | None = None, purpose: str = "chat") -> Iterator[str | Reply]:
        """Text deltas, then one Reply. `purpose`: "chat", or "background" (summaries, the
        distiller), which waits behind chats for a slot and gives its slot up to one."""
        quirks = QUIRKS.setdefault(self.base_url, set())
        # How tools are asked for, best first: streamed with tool_choice "auto"; the same not
        # streamed (llama-cpp-python); streamed without tool_choice (vLLM without
        # --enable-auto-tool-choice). A server's refusal moves it down the list for good.
        modes = TOOL_MODES if tools else [(True, None)]
        start = max((i for i, mode in enumerate(TOOL_MODES) if mode_quirk(mode) in quirks),
                    default=0) if tools else 0
        if NO_RESPONSE_FORMAT in quirks:
            response_format = None
        attempt, index = 0, start
        with slot_for(self, purpose):
            while True:
                attempt += 1
                streamed, choice = modes[index]
                request = {"model": self.model, "messages": to_openai_messages(messages),
                           "max_tokens": max_tokens or self.max_tokens}
                if not request["max_tokens"]:
                    del request["max_tokens"]
                if tools:
                    request["tools"] = to_openai_tools(tools)
                    if choice:
                        request["tool_choice"] = choice
                if response_format:
                    request["response_format"] = response_format
                try:
                    if streamed:
                        request.update(stream=True, stream_options={"include_usage": True})
                        yield from self._streamed(request, tools_offered=bool(tools),
                                                  purpose=purpose)
                    else:
                        yield self._whole(request, purpose)
                    return
                except Refused as refused:
                    if attempt >= 3:
                        raise refused.error from None
                    if refused.what in ("tools", "tool_choice") and tools and index + 1 < len(modes):
                        index = len(modes) - 1 if refused.what == "tool_choice" else index + 1
                        quirks.add(mode_quirk(modes[index]))
                    elif refused.what == "response_format" and response_format:
                        quirks.add(NO_RESPONSE_FORMAT)
                        response_format = None
                    else:
                        raise refused.error from None
                    log.warning("provider %s refused %s; asking again %s (remembered)",
                                self.name, refused.what,
                                "without response_format" if refused.what == "response_format" else
                                f"{'streamed' if modes[index][0] else 'not streamed'}, "
                                f"tool_choice {modes[index][1] or 'left out'}")

    # -- one HTTP call ----------------------------------------------------------------------

    def _call(self, request: dict, streamed: bool = True) -> Call:
        max_tokens = request.get("max_tokens")
        if streamed:
            call = Call(self.first_token_timeout, self.idle_timeout, max_tokens, self.min_pace)
        else:  # the whole answer is the first token: the time its output cap takes
            call = Call(self.whole_deadline(max_tokens))
        self._calls[threading.get_ident()] = call
        if threading.get_ident() in self.preempted:
            call.cancel(GAVE_WAY)
        WATCHDOG.watch(call.first_token_at, call)
        return call

    def whole_deadline(self, max_tokens: int | None) -> float:
        """Seconds a call not streamed may take: to the first token, then its output cap at the
        pace this server was seen streaming at (else at the slowest pace accepted)."""
        limit = max_tokens or 4096
        pace = PACES.get(self.base_url)
        return self.first_token_timeout + (OVERRUN * limit / pace if pace else limit / self.min_pace)

    def _end(self, call: Call, purpose: str = "chat") -> None:
        call.finish()
        self._calls.pop(threading.get_ident(), None)
        if call.expired:  # operators hear of every deadline hit, chats and background alike
            log.warning("provider %s: %s call ended: %s (%d chunks in %.1f s)", self.name,
                        purpose, call.reason, call.tokens, time.monotonic() - call.started)
        elif call.tokens >= 16 and call.last_at - call.spoke_at >= 0.5:
            PACES[self.base_url] = call.tokens / (call.last_at - call.spoke_at)

    def _open(self, request: dict, timeout: httpx2.Timeout):
        """The SDK's streamed response to the request, whose body goes out as built: passed as
        `extra_body`, it skips the SDK's field-by-field walk of the messages and tool specs
        (3-5 ms of a worker's time per call, more as the history grows) that changes nothing
        in a body of plain JSON. The empty `messages` is replaced by the request's own."""
        body = {key: value for key, value in request.items() if key != "model"}
        return self.client.chat.completions.with_streaming_response.create(
            model=request["model"], messages=[], extra_body=body, timeout=timeout)

    def _timeout(self) -> httpx2.Timeout:
        # The read timeout covers the wait for the headers (a second after the first-token
        # deadline, so that the watchdog, which knows which deadline passed, is first); after
        # them it is the longer of that and the idle deadline (`read_body_within`), and the
        # watchdog's deadlines hold whatever the server sends to keep the connection alive.
        return httpx2.Timeout(self.timeout, connect=min(10.0, self.timeout),
                              read=self.first_token_timeout + 1.0)

    def _failed(self, error: Exception, call: Call, request: dict) -> ProviderError:
        """The ProviderError for what went wrong, logged with status and body (key redacted)."""
        if call.reason is not None:
            return ProviderCancelled(call.reason)
        status = getattr(error, "status_code", None)
        body = ""
        response = getattr(error, "response", None)
        if response is not None:
            try:
                body = response.text
            except Exception:  # a streamed body that was never read
                body = str(getattr(error, "body", "") or "")
        body = redact(body or str(getattr(error, "body", "") or error), self.api_key)
        log.warning("provider %s: %s%s: %s", self.name, type(error).__name__,
                    f" (HTTP {status})" if status else "", body[:2000])
        too_long = context_error(status, body)
        if too_long is not None:
            return too_long
        failure = ProviderError(f"{type(error).__name__}{f' {status}' if status else ''}: "
                                f"{body[:300]}")
        wait = retry_after(response)
        if status == 429 or (status == 503 and wait is not None):
            return ProviderBusy(str(failure), wait)
        if status and status >= 400 and "tools" in request and re.search(r"tool[_ ]choice", body):
            # "streaming tool choice is not supported": not streamed; else: no tool_choice
            raise Refused("tools" if re.search(r"stream", body, re.I) else "tool_choice", failure)
        if status and status >= 400 and "response_format" in request and re.search(
                r"response_format|json_schema|grammar", body):
            raise Refused("response_format", failure)
        return failure

    def _streamed(self, request: dict, tools_offered: bool,
                  purpose: str = "chat") -> Iterator[str | Reply]:
        """The streamed chunks, read as plain dicts: the SDK's per-chunk models cost ~1 ms
        each, which hundreds of concurrent streams cannot afford on one worker."""
        call = self._call(request)
        text, calls, usage, finish, last_index, chunks = [], {}, None, None, None, 0
        answered = {}  # the completion's id and model, as the chunks name them (for tracing)
        cut = None  # the deadline that ended a chat reply after its first words
        try:
            with self._open(request, self._timeout()) as response:
                call.attach(response.http_response)
                # a server may send its headers before it has read the prompt: the first token
                # can still be a first-token deadline away
                read_body_within(response.http_response,
                                 max(self.first_token_timeout, self.idle_timeout) + 1.0)
                for line in response.iter_lines():
                    if call.reason is not None:
                        raise ProviderCancelled(call.reason)
                    if not line.startswith("data:"):  # blank lines and ": keep-alive" comments
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    chunk = json.loads(data)
                    chunks += 1
                    for key in ("id", "model"):
                        if isinstance(chunk, dict) and isinstance(chunk.get(key), str):
                            answered.setdefault(key, chunk[key])
                    spoken = call.tokens
                    if chunk.get("error"):
                        error = chunk["error"]
                        message = str(error.get("message") or error) if isinstance(error, dict) \
                            else str(error)
                        log.warning("provider %s: error in the stream: %s", self.name,
                                    redact(message, self.api_key)[:2000])
                        too_long = context_error(None, message)
                        if too_long is not None and not text and not calls:
                            raise too_long
                        if tools_offered and not text and not calls and "tool" in message:
                            raise Refused("tools", ProviderError(f"error in the stream: {message}"))
                        raise ProviderError(f"error in the stream: {message[:300]}")
                    if chunk.get("usage"):
                        usage = {"prompt_tokens": chunk["usage"].get("prompt_tokens"),
                                 "completion_tokens": chunk["usage"].get("completion_tokens")}
                    for choice in chunk.get("choices") or []:
                        finish = choice.get("finish_reason") or finish
                        delta = choice.get("delta") or {}
                        if delta.get("content"):
                            call.heard()
                            text.append(delta["content"])
                            yield delta["content"]
                        for tc in delta.get("tool_calls") or []:
                            call.heard()
                            last_index = merge_tool_call(calls, tc, last_index)
                    if call.tokens == spoken:
                        call.heard(0)  # a chunk without words still says the server is alive
            if call.reason is not None:
                raise ProviderCancelled(call.reason)
        except Refused:
            raise
        except ProviderError as error:
            cut = self._kept(error, call, text, purpose)
        except (openai.OpenAIError, httpx2.HTTPError, ValueError, OSError) as error:
            cut = self._kept(self._failed(error, call, request), call, text, purpose, error)
        finally:
            self._end(call, purpose)
        if cut is not None:  # the words so far are the reply; a half-sent tool call is dropped
            reply = reply_of("".join(text).rstrip(), [], usage, "deadline")
            reply.cut_by = cut
            reply.response_id, reply.response_model = answered.get("id"), answered.get("model")
            yield reply
            return
        if not text and not calls:
            if chunks == 0 and tools_offered:  # llama-cpp-python: streamed tool choice → empty 200
                raise Refused("tools", ProviderError("the server sent an empty stream"))
            log.warning("provider %s: a stream with no words and no tool call (finish reason %s)",
                        self.name, finish)
            raise ProviderError(f"the stream carried no words and no tool call "
                                f"(finish reason: {finish or 'none'})")
        if finish is None:
            log.warning("provider %s: the stream ended without a finish reason", self.name)
            raise ProviderError("the stream was cut off: it ended without a finish reason")
        reply = reply_of("".join(text), [calls[i] for i in sorted(calls)], usage, finish)
        reply.response_id, reply.response_model = answered.get("id"), answered.get("model")
        yield reply

    @staticmethod
    def _kept(error: ProviderError, call: Call, text: list[str], purpose: str,
              cause: Exception | None = None) -> str:
        """Why a chat reply ended at a deadline after its first words, which it keeps; any other
        failure (a background call's too: it is tried again later) is raised."""
        if isinstance(error, ProviderCancelled) and call.expired and purpose == "chat" \
                and "".join(text).strip():
            return error.reason
        raise error from cause

    def _whole(self, request: dict, purpose: str = "chat") -> Reply:
        """One request not streamed: the answer arrives whole."""
        call = self._call(request, streamed=False)
        deadline = call.first_token_at - call.started
        try:
            with self._open(  # a second late, so that the watchdog says which deadline passed
                    request, httpx2.Timeout(deadline + 1.0, connect=min(10.0, self.timeout))
            ) as response:
                call.attach(response.http_response)
                body = json.loads(response.http_response.read())
        except (openai.OpenAIError, httpx2.HTTPError, ValueError, OSError) as error:
            raise self._failed(error, call, request) from error
        finally:
            self._end(call, purpose)
        choice = (body.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        calls = [{"id": c.get("id") or "", "name": (c.get("function") or {}).get("name") or "",
                  "arguments": (c.get("function") or {}).get("arguments") or "",
                  "extra": {k: v for k, v in c.items() if k not in ("id", "type", "function",
                                                                     "index")}}
                 for c in message.get("tool_calls") or []]
        text = message.get("content") or ""
        if not text.strip() and not calls:
            raise ProviderError(f"the reply carried no words and no tool call "
                                f"(finish reason: {choice.get('finish_reason') or 'none'})")
        usage = body.get("usage") or {}
        reply = reply_of(text, calls, {"prompt_tokens": usage.get("prompt_tokens"),
                                       "completion_tokens": usage.get("completion_tokens")}
                         if usage else None, choice.get("finish_reason") or "stop")
        reply.response_id, reply.response_model = body.get("id"), body.get("model")
        return reply


def read_body_within(http_response, seconds: float) -> None:
    """Give each read of the body `seconds`: the body's reads take the request's read timeout
    when they start, so a first-token deadline shorter than the idle one cuts no pause."""
    timeouts = getattr(getattr(http_response, "request", None), "extensions", {}).get("timeout")
    if isinstance(timeouts, dict):
        timeouts["read"] = seconds


def merge_tool_call(calls: dict, delta: dict, last_index):
    """Fold one streamed tool-call fragment in. The id and name come from the first fragment that
    carries them (llama-cpp-python repeats the name in every chunk); later fragments only add
    argument text. A fragment without an index (Gemini) belongs to the call before it unless it
    brings a new id."""
    function = delta.get("function") or {}
    index = delta.get("index")
    if index is None:
        current = calls.get(last_index)
        new_id = delta.get("id") and current is not None and current["id"] \
            and delta["id"] != current["id"]
        index = len(calls) if current is None or new_id else last_index
    arguments = function.get("arguments") or ""
    if isinstance(arguments, dict):
        arguments = json.dumps(arguments)
    call = calls.get(index)
    extra = {k: v for k, v in delta.items() if k not in ("index", "id", "type", "function")}
    if call is None:
        calls[index] = {"id": delta.get("id") or "", "name": function.get("name") or "",
                        "arguments": arguments, "extra": extra}
    else:
        call["extra"].update(extra)
        call["id"] = call["id"] or delta.get("id") or ""
        call["name"] = call["name"] or function.get("name") or ""
        call["arguments"] += arguments
    return index


def reply_of(text: str, calls: list[dict], usage, finish: str) -> Reply:
    """The Reply, with the provider's own message (content never null) kept to resend."""
    if finish in ("length", "deadline") and calls:  # cut inside a tool call: not whole
        calls = []
        if not text.strip():
            raise ProviderError("the output cap cut the reply off inside a tool call")
    for c in calls:
        c["id"] = c["id"] or f"call_{uuid.uuid4().hex[:12]}"
        if isinstance(c["arguments"], dict):
            c["arguments"] = json.dumps(c["arguments"])
    tool_calls = [ToolCall(c["id"], c["name"], parse_arguments(c["arguments"])) for c in calls]
    raw = {"role": "assistant", "content": text}
    if tool_calls:
        raw["tool_calls"] = [{**(c.get("extra") or {}), "id": c["id"], "type": "function",
                              "function": {"name": c["name"], "arguments": c["arguments"] or "{}"}}
                             for c in calls]
    return Reply(text, tool_calls, raw, usage, finish)
