"""Behaviour fakes of the OpenAI-compatible servers people point Nimbus at, each with its quirks.

Written from each server's documentation and issue trackers (and, for llama-cpp-python and
llama.cpp, from what a logging proxy saw). The answers come from one small deterministic
"model" (`think`); what differs is how each server takes the request and streams the reply:

- llama-cpp-python 0.3 (`python -m llama_cpp.server`): tools reach the prompt only with
  `tool_choice`; `tool_choice: "auto"` while streaming fails inside the stream, which the client
  sees as an empty 200; the function name is repeated in every tool-call chunk; `content: null`
  is refused with 500 ("Input should be a valid string"); no usage in the stream; a keep-alive
  comment (`: ping`) while it thinks; one slot, and a new request ends the running stream
  (`interrupt_requests`); over the window: 400 "Requested tokens (N) exceed context window of M".
- llama.cpp `llama-server` (with a tool-calling chat template and `--jinja`): tool calls
  streamed OpenAI's way (id and name in the first chunk only); usage in the last chunk; `/props`
  gives n_ctx and total_slots; requests beyond the slots wait their turn; over the window:
  400 `exceed_context_size_error` carrying n_ctx. With a template that has no tools (gemma's),
  `/props` says `chat_template_caps.supports_tools: false` and the tools never reach the
  prompt: the model cannot call them and the prompt is counted without them.
- Ollama `/v1`: a tool call arrives whole in one chunk; `tool_choice` is ignored; usage only
  with `include_usage`; over the window it silently drops the oldest part of the prompt
  (num_ctx, told by `/api/show`); requests wait their turn.
- vLLM: `"auto"` tool choice needs `--enable-auto-tool-choice` (else 400; see the variant);
  `max_model_len` in `/v1/models`; prompt plus max_tokens over it: 400 "This model's maximum
  context length is N tokens"; many requests at once.
- LM Studio: `response_format` must be `json_schema` (`json_object` is refused with 400);
  `/api/v0/models` gives loaded_context_length; over the window: 400 naming the context length.
- OpenAI: the reference; over the window: 400 code `context_length_exceeded`.
- Gemini's OpenAI-compatible endpoint: tool-call chunks without `index`, arguments whole,
  `finish_reason: "stop"` even for tool calls, errors as a JSON list, usage in the last chunk.
"""
from __future__ import annotations

import json
import math
import re
import threading
import time
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .openai_server import _word_pieces


@dataclass(frozen=True)
class Quirks:
    name: str
    kind: str  # what Nimbus should call it ("llama.cpp", "vLLM", …)
    needs_tool_choice: bool = False  # tools reach the model only with tool_choice
    streamed_auto_fails: bool = False  # stream + tool_choice auto → empty 200
    auto_refused: bool = False  # tool_choice auto → 400 (vLLM without --enable-auto-tool-choice)
    name_every_chunk: bool = False
    whole_tool_call: bool = False  # one chunk carries the whole call
    no_index: bool = False
    tool_finish: str = "tool_calls"
    usage: str = "if_asked"  # if_asked, always, never
    null_content_status: int | None = None  # refused with this status
    keepalive: bool = False  # ": ping" comments while thinking
    slots: int | None = None  # None: many
    interrupt: bool = False  # single slot: a new request ends the running stream
    window: int = 2048
    counts_output: bool = False  # prompt + max_tokens must fit (vLLM)
    overflow: str = "error"  # error, truncate
    error_list: bool = False  # errors as [{"error": …}] (Gemini)
    formats: tuple = ("json_schema", "json_object")  # response_format types it takes
    probes: tuple = ()  # props, models_len, api_show, lmstudio
    template_tools: bool = True  # False: the chat template drops the tools (llama-server says so)


SERVERS = {
    "llama-cpp-python": Quirks(
        "llama-cpp-python", "OpenAI-compatible", needs_tool_choice=True, streamed_auto_fails=True,
        name_every_chunk=True, usage="never", null_content_status=500, keepalive=True, slots=1,
        interrupt=True),
    "llama-server": Quirks("llama-server", "llama.cpp", usage="always", slots=1,
                           probes=("props",)),
    "llama-server-no-tools": Quirks("llama-server-no-tools", "llama.cpp", usage="always", slots=1,
                                    probes=("props",), template_tools=False),
    "ollama": Quirks("ollama", "Ollama", whole_tool_call=True, slots=1, overflow="truncate",
                     probes=("api_show",)),
    "vllm": Quirks("vllm", "vLLM", counts_output=True, probes=("models_len",)),
    "vllm-no-auto": Quirks("vllm-no-auto", "vLLM", auto_refused=True, counts_output=True,
                           probes=("models_len",)),
    "lm-studio": Quirks("lm-studio", "LM Studio", formats=("json_schema",), slots=1,
                        probes=("lmstudio",)),
    "openai": Quirks("openai", "OpenAI-compatible", window=8192),
    "gemini": Quirks("gemini", "OpenAI-compatible", whole_tool_call=True, no_index=True,
                     tool_finish="stop", usage="always", error_list=True, window=8192),
}


def count_tokens(request: dict, template_tools: bool = True) -> int:
    """The fake's tokenizer: a little over four characters a token, tool schemas included when
    the template puts them in the prompt."""
    return math.ceil(len(rendered(request, template_tools)) / 3.6)


def rendered(request: dict, template_tools: bool = True) -> str:
    """The fake's chat template: what count_tokens counts, as llama-server's /apply-template
    returns it (its /tokenize then counts the same tokens as the reply's usage)."""
    text = json.dumps(request.get("messages") or [], ensure_ascii=False)
    if request.get("tools") and template_tools:
        text += json.dumps(request["tools"], ensure_ascii=False)
    return text


ORDER = re.compile(r"#?\b(\d{4})\b")


def think(request: dict, tools_visible: bool) -> dict:
    """The fake model: {"text"} or {"tool_calls"}; deterministic from the request."""
    messages = request.get("messages") or []
    system = next((m.get("content") or "" for m in messages if m["role"] == "system"), "")
    last = messages[-1] if messages else {"role": "user", "content": ""}
    fmt = (request.get("response_format") or {}).get("type")
    if fmt in ("json_schema", "json_object") or "Output format of the memory distiller" in system:
        said = " ".join(m.get("content") or "" for m in messages if m["role"] == "user")
        found = re.search(r"Customer: (I prefer [^.\n]+)", said)
        memories = [{"content": found.group(1).replace("I prefer", "The customer prefers") + ".",
                     "scope": "account", "personal": True}] if found else []
        return {"text": json.dumps({"memories": memories})}
    if system.startswith("You keep the rolling summary"):
        body = last.get("content") or ""
        facts = [line for line in body.splitlines() if line.startswith("User: ")][:12]
        return {"text": "\n".join(facts or ["(nothing yet)"]) + "\nTopics: support"}
    if last["role"] == "tool":
        return {"text": f"Here is what I found: {last.get('content', '')[:120]}"}
    question = last.get("content") or ""
    names = {t["function"]["name"] for t in request.get("tools") or []} if tools_visible else set()
    order = ORDER.search(question)
    if "check_refund_eligibility" in names and "refund" in question.lower() and order:
        return {"tool_calls": [{"name": "check_refund_eligibility",
                                "arguments": {"order_id": int(order.group(1))}}]}
    if "lookup_order" in names and "order" in question.lower() and order:
        return {"tool_calls": [{"name": "lookup_order",
                                "arguments": {"order_id": int(order.group(1))}}]}
    if "story" in question.lower():
        return {"text": " ".join(f"word{i}" for i in range(400)), "pace": 0.01}
    return {"text": "You said: " + " ".join(question.split()[:12]) + "."}


@dataclass
class Crash:
    after_words: int  # the connection is dropped after this many words


@dataclass
class State:
    requests: list = field(default_factory=list)
    refused: list = field(default_factory=list)  # (status, body) of each refusal
    running: list = field(default_factory=list)  # streams in progress (interrupt policy)
    crash: Crash | None = None
    think_delay: float = 0.0
    disconnected: int = 0  # streams the client closed before the end
    dead: bool = False  # killed: streams drop mid-word, new connections are refused
    reply_for: object = None  # request -> a reply of the test's own ({"text", "pace", "delay"}) or None
    first_words: list = field(default_factory=list)  # (request, seconds from its slot to its first word)


class CompatServer:
    """One fake server on 127.0.0.1 with the given quirks; `base_url` ends in /v1."""

    def __init__(self, quirks: Quirks | str, **overrides):
        quirks = SERVERS[quirks] if isinstance(quirks, str) else quirks
        self.quirks = replace(quirks, **overrides) if overrides else quirks
        self.state = State()
        self.lock = threading.Lock()
        self.slot = threading.Semaphore(self.quirks.slots) if self.quirks.slots else None
        self.httpd: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def start(self) -> "CompatServer":
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None

    def kill(self) -> None:
        """Die as a killed process would: the running stream drops, nothing answers."""
        self.state.dead = True

    def revive(self) -> None:
        self.state.dead = False

    def template_or_tokens(self, path: str, request: dict) -> dict:
        """llama-server's /apply-template ({"prompt"}) and /tokenize ({"tokens"})."""
        if path == "/apply-template":
            return {"prompt": rendered(request, self.quirks.template_tools)}
        return {"tokens": list(range(math.ceil(len(request.get("content") or "") / 3.6)))}

    def crash_after(self, words: int) -> None:
        """The next stream dies (connection dropped) after `words` words."""
        self.state.crash = Crash(words)

    # -- what a request gets --------------------------------------------------------------

    def refusal(self, request: dict) -> tuple[int, object] | None:
        q = self.quirks
        for m in request.get("messages") or []:
            if m.get("content") is None and q.null_content_status:
                return q.null_content_status, self.error(
                    "1 validation error: messages.content Input should be a valid string",
                    q.null_content_status)
        if q.auto_refused and request.get("tool_choice") == "auto":
            return 400, self.error('"auto" tool choice requires --enable-auto-tool-choice and '
                                   "--tool-call-parser to be set", 400)
        fmt = (request.get("response_format") or {}).get("type")
        if fmt and fmt not in q.formats:
            return 400, self.error(f"'response_format.type' must be one of {list(q.formats)}", 400)
        prompt = count_tokens(request, q.template_tools)
        need = prompt + (request.get("max_tokens") or 0 if q.counts_output else 0)
        if need > q.window and q.overflow == "error":
            return 400, self.context_error(prompt, need)
        return None

    def context_error(self, prompt: int, need: int):
        q = self.quirks
        if q.name == "llama-server":
            return {"error": {"code": 400, "message": "the request exceeds the available context "
                              "size, try increasing it", "type": "exceed_context_size_error",
                              "n_prompt_tokens": prompt, "n_ctx": q.window}}
        if q.name == "llama-cpp-python":
            return self.error(f"Requested tokens ({prompt}) exceed context window of {q.window}",
                              400)
        if q.name.startswith("vllm"):
            return self.error(f"This model's maximum context length is {q.window} tokens. "
                              f"However, you requested {need} tokens ({prompt} in the messages, "
                              f"{need - prompt} in the completion).", 400)
        if q.name == "gemini":
            return self.error(f"The input token count ({prompt}) exceeds the maximum number of "
                              f"tokens allowed ({q.window}).", 400)
        if q.name == "lm-studio":
            return self.error(f"Trying to keep the first {prompt} tokens when context the "
                              f"overflows. However, the model is loaded with context length of "
                              f"only {q.window} tokens", 400)
        return {"error": {"message": f"This model's maximum context length is {q.window} tokens.",
                          "type": "invalid_request_error", "code": "context_length_exceeded"}}

    def error(self, message: str, status: int):
        body = {"error": {"message": message, "type": "invalid_request_error" if status < 500
                          else "server_error", "code": status}}
        return [body] if self.quirks.error_list else body

    def truncated(self, request: dict) -> dict:
        """Ollama: the oldest messages (after the system prompt) dropped until it fits."""
        messages = list(request.get("messages") or [])
        while len(messages) > 2 and count_tokens({**request, "messages": messages}) > \
                self.quirks.window:
            del messages[1]
        return {**request, "messages": messages}

    def handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def handle_one_request(self):
                try:
                    super().handle_one_request()
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def send_json(self, status, payload):
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                q, path = server.quirks, self.path.rstrip("/")
                if path == "/v1/models":
                    entry = {"id": "fake-model", "object": "model", "owned_by": q.name}
                    if "models_len" in q.probes:
                        entry["max_model_len"] = q.window
                    if "props" in q.probes:
                        entry["owned_by"] = "llamacpp"
                    self.send_json(200, {"object": "list", "data": [entry]})
                elif path == "/props" and "props" in q.probes:
                    self.send_json(200, {"default_generation_settings": {"n_ctx": q.window},
                                         "total_slots": q.slots or 1,
                                         "model_path": "models/fake-model.gguf",
                                         "chat_template_caps": {
                                             "supports_tools": q.template_tools,
                                             "supports_tool_calls": q.template_tools,
                                             "supports_system_role": True}})
                elif path == "/api/v0/models" and "lmstudio" in q.probes:
                    self.send_json(200, {"data": [{"id": "fake-model",
                                                   "loaded_context_length": q.window,
                                                   "max_context_length": 32768}]})
                elif path == "/health":
                    self.send_json(200, {"status": "ok"})
                else:
                    self.send_json(404, server.error(f"not found: {self.path}", 404))

            def do_POST(self):
                self._started = False  # one handler serves every request of a connection
                if server.state.dead:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                path = self.path.rstrip("/")
                if path == "/api/show" and "api_show" in server.quirks.probes:
                    self.send_json(200, {"parameters": f"num_ctx {server.quirks.window}",
                                         "model_info": {"llama.context_length": 8192}})
                    return
                if path in ("/apply-template", "/tokenize") and "props" in server.quirks.probes:
                    self.send_json(200, server.template_or_tokens(path, request))
                    return
                if path != "/v1/chat/completions":
                    self.send_json(404, server.error(f"not found: {self.path}", 404))
                    return
                with server.lock:
                    server.state.requests.append(request)
                refused = server.refusal(request)
                if refused is not None:
                    with server.lock:
                        server.state.refused.append(refused)
                    self.send_json(*refused)
                    return
                if server.quirks.overflow == "truncate":
                    request = server.truncated(request)
                self.chat(request)

            def chat(self, request):
                q = server.quirks
                tools_visible = bool(request.get("tools")) and q.template_tools and (
                    not q.needs_tool_choice or request.get("tool_choice") not in (None, "none"))
                streamed = bool(request.get("stream"))
                if streamed and q.streamed_auto_fails and request.get("tools") and \
                        request.get("tool_choice") == "auto":
                    self.start_stream()  # the error is raised inside the generator: nothing sent
                    self.write_chunk(b"")
                    return
                slot = server.slot
                if slot is not None and q.interrupt:
                    with server.lock:  # a new request ends the running one (interrupt_requests)
                        for running in server.state.running:
                            running.set()
                    slot.acquire()
                elif slot is not None:
                    slot.acquire()  # wait for the slot, as llama-server and Ollama queue
                interrupted = threading.Event()
                with server.lock:
                    server.state.running.append(interrupted)
                try:
                    reply = (server.state.reply_for or (lambda _: None))(request) or \
                        think(request, tools_visible)
                    if server.state.think_delay:
                        try:
                            self.wait_thinking(server.state.think_delay, streamed)
                        except OSError:  # the client hung up while it waited
                            with server.lock:
                                server.state.disconnected += 1
                            self.close_connection = True
                            return
                    if streamed:
                        self.stream(request, reply, interrupted)
                    else:
                        self.whole(request, reply)
                finally:
                    with server.lock:
                        server.state.running.remove(interrupted)
                    if slot is not None:
                        slot.release()

            def wait_thinking(self, seconds, streamed):
                if not streamed:
                    time.sleep(seconds)
                    return
                self.start_stream()
                end = time.monotonic() + seconds
                while time.monotonic() < end:
                    time.sleep(min(0.2, max(end - time.monotonic(), 0)))
                    if server.quirks.keepalive:
                        self.write_chunk(b": ping\n\n")

            def capped(self, request, reply):
                words = _word_pieces(reply.get("text") or "")
                cap = request.get("max_tokens")
                if cap and len(words) > cap:
                    return words[:cap], "length"
                return words, None

            def usage(self, request, words):
                prompt = count_tokens(request, server.quirks.template_tools)
                return {"prompt_tokens": prompt, "completion_tokens": len(words),
                        "total_tokens": prompt + len(words)}

            def whole(self, request, reply):
                words, cut = self.capped(request, reply)
                message = {"role": "assistant", "content": "".join(words) or None}
                finish = cut or "stop"
                if reply.get("tool_calls"):
                    message["tool_calls"] = [
                        {"id": f"call_{i}", "type": "function", "function": {
                            "name": c["name"], "arguments": json.dumps(c["arguments"])}}
                        for i, c in enumerate(reply["tool_calls"])]
                    finish = "tool_calls"
                body = {"id": "cmpl-1", "object": "chat.completion", "model": "fake-model",
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
                if server.quirks.usage != "never":
                    body["usage"] = self.usage(request, words)
                self.send_json(200, body)

            def start_stream(self):
                if getattr(self, "_started", False):
                    return
                self._started = True
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()

            def write_chunk(self, data: bytes):
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def event(self, payload):
                self.write_chunk(f"data: {json.dumps(payload)}\n\n".encode())

            def stream(self, request, reply, interrupted):
                q = server.quirks
                self.start_stream()
                include_usage = q.usage == "always" or (
                    q.usage == "if_asked" and (request.get("stream_options") or {}).get(
                        "include_usage"))
                base = {"id": "chunk-1", "object": "chat.completion.chunk", "model": "fake-model"}
                began = time.monotonic()

                def chunk(delta, finish=None):
                    return dict(base, choices=[{"index": 0, "delta": delta,
                                                "finish_reason": finish}])
                crash, server.state.crash = server.state.crash, None
                try:
                    self.event(chunk({"role": "assistant", "content": ""}))
                    words, cut = self.capped(request, reply)
                    for n, word in enumerate(words):
                        if interrupted.is_set():
                            self.write_chunk(b"")  # ended for the newer request: no finish
                            return
                        if server.state.dead or (crash is not None and n >= crash.after_words):
                            self.connection.shutdown(2)
                            return
                        if not n:
                            time.sleep(reply.get("delay") or 0)  # reading the prompt
                            with server.lock:
                                server.state.first_words.append(
                                    (request, time.monotonic() - began))
                        self.event(chunk({"content": word}))
                        if reply.get("pace"):
                            time.sleep(reply["pace"])
                    finish = cut or "stop"
                    for i, c in enumerate(reply.get("tool_calls") or []):
                        finish = q.tool_finish
                        self.tool_call_chunks(chunk, i, c)
                    self.event(chunk({}, finish))
                    if include_usage:
                        self.event(dict(base, choices=[], usage=self.usage(request, words)))
                    self.write_chunk(b"data: [DONE]\n\n")
                    self.write_chunk(b"")
                except (BrokenPipeError, ConnectionResetError, OSError):
                    with server.lock:
                        server.state.disconnected += 1
                    self.close_connection = True

            def tool_call_chunks(self, chunk, index, call):
                q = server.quirks
                arguments = json.dumps(call["arguments"])
                head = {"id": f"call_{index}_{int(time.time() * 1000) % 100000}",
                        "type": "function", "function": {"name": call["name"]}}
                if not q.no_index:
                    head["index"] = index
                if q.whole_tool_call:
                    head["function"]["arguments"] = arguments
                    self.event(chunk({"tool_calls": [head]}))
                    return
                head["function"]["arguments"] = ""
                self.event(chunk({"tool_calls": [head]}))
                for start in range(0, len(arguments), 7):
                    piece = {"index": index, "function": {"arguments": arguments[start:start + 7]}}
                    if q.name_every_chunk:
                        piece["id"], piece["function"]["name"] = head["id"], call["name"]
                    self.event(chunk({"tool_calls": [piece]}))

        return Handler
