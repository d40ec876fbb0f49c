"""A scriptable local stand-in for the OpenAI HTTP API, so tests can drive the real `openai` SDK offline.

Replies are queued with `FakeOpenAIServer.script()`; see its docstring for the keys a reply may carry.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import itertools
import json
import math
import re
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL_ID = "fake-model"
EMBEDDING_DIMENSIONS = 8

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


def _error_body(message: str, status: int, code: str | None = None) -> dict:
    """OpenAI-style error envelope, which the SDK parses into its exceptions."""
    return {
        "error": {
            "message": message,
            "type": _ERROR_TYPES.get(status, "server_error"),
            "param": None,
            "code": code,
        }
    }


def _word_pieces(text: str) -> list[str]:
    """Split text into word-sized pieces whose concatenation is exactly the text."""
    return re.findall(r"\s*\S+\s*", text) or ([text] if text else [])


def _fragments(value: str, parts: int = 3) -> list[str]:
    """Split a string into up to `parts` non-empty fragments, like OpenAI streams tool arguments."""
    if len(value) < parts:
        return [value] if value else []
    size = math.ceil(len(value) / parts)
    return [value[i : i + size] for i in range(0, len(value), size)]


def _count_tokens(value) -> int:
    """Rough token count (words) for usage figures when a reply does not script them."""
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, dict):
        return sum(_count_tokens(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_tokens(v) for v in value)
    return 0


def fake_embedding(text: str, dimensions: int = EMBEDDING_DIMENSIONS) -> list[float]:
    """Deterministic unit vector derived from a hash of the text, so equal texts embed equally."""
    raw: list[float] = []
    for block in itertools.count():
        digest = hashlib.sha256(f"{block}:{text}".encode()).digest()
        for i in range(0, len(digest), 4):
            raw.append(int.from_bytes(digest[i : i + 4], "big") / 0xFFFFFFFF * 2 - 1)
        if len(raw) >= dimensions:
            break
    raw = raw[:dimensions]
    norm = math.sqrt(sum(x * x for x in raw)) or 1.0
    # Round-trip through float32 so JSON and base64 encodings give identical values.
    return [struct.unpack("<f", struct.pack("<f", x / norm))[0] for x in raw]


class _Reply:
    """A scripted chat reply with the defaults filled in."""

    def __init__(self, spec: dict):
        self.spec = spec
        self.status = spec.get("status")
        self.headers = spec.get("headers") or {}  # sent with an error status (Retry-After)
        self.error = spec.get("error", "scripted failure")
        self.delay = spec.get("delay", 0)
        self.chunk_delay = spec.get("chunk_delay", 0)
        self.pause_after, self.pause = spec.get("pause_after"), spec.get("pause", 0)
        self.stream_error = spec.get("stream_error")
        self.tool_calls = [
            {
                "id": call.get("id") or f"call_{index}",
                "name": call["name"],
                "arguments": call.get("arguments", {}),
            }
            for index, call in enumerate(spec.get("tool_calls") or [])
        ]
        if "text" in spec:
            self.text = spec["text"]
        else:
            self.text = None if self.tool_calls else "ok"
        self.finish_reason = spec.get("finish_reason") or ("tool_calls" if self.tool_calls else "stop")

    def usage(self, request: dict) -> dict:
        """Scripted usage, else a word count of the request and reply."""
        usage = dict(self.spec.get("usage") or {})
        contents = [message.get("content") for message in request.get("messages", [])]
        usage.setdefault("prompt_tokens", _count_tokens(contents))
        usage.setdefault(
            "completion_tokens",
            _count_tokens(self.text or "") + sum(_count_tokens(c["arguments"]) + 1 for c in self.tool_calls),
        )
        usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
        return usage

    @staticmethod
    def arguments_json(call: dict) -> str:
        """Arguments as the JSON string OpenAI sends; a scripted str is passed through to test bad JSON."""
        args = call["arguments"]
        return args if isinstance(args, str) else json.dumps(args)


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # hundreds of clients may connect at once in a load test


def slow_tool_replies(first_token_delay: float = 0.5, words: int = 60, pace: float = 0.15,
                      tool: str = "lookup_order", arguments: dict | None = None):
    """A slow provider for load tests: each question gets a tool call, each tool result an answer
    of `words` words `pace` seconds apart; every call waits `first_token_delay` before speaking."""
    arguments = arguments or {"order_id": 1042}
    answer = " ".join(f"w{i}" for i in range(words))

    def reply(request: dict) -> dict:
        if (request.get("messages") or [{}])[-1].get("role") == "tool":
            return {"text": answer, "delay": first_token_delay, "chunk_delay": pace}
        return {"tool_calls": [{"name": tool, "arguments": arguments}], "delay": first_token_delay}
    return reply


def serve_slow(port: int, first_token_delay: float, words: int, pace: float) -> None:
    """Serve `slow_tool_replies` on `port` until killed (bench/load.py runs it in a process)."""
    server = FakeOpenAIServer(port=port, autoreply=slow_tool_replies(first_token_delay, words, pace))
    server.start()
    server._thread.join()


class FakeOpenAIServer:
    """Serve /v1/chat/completions, /v1/embeddings and /v1/models from a daemon thread on 127.0.0.1.

    `script()` queues chat replies, each a dict with any of these keys:
      text, tool_calls [{"id", "name", "arguments"}], usage {"prompt_tokens", "completion_tokens"}:
        the answer (text defaults to "ok" when there are no tool calls);
      status, error: answer with that HTTP status and an OpenAI-style error body instead;
      headers: sent with that status (a 429's Retry-After);
      delay: seconds to wait before answering, to trigger client timeouts;
      chunk_delay: seconds between streamed chunks, to observe streaming in a UI;
      pause_after, pause: after that many chunks (the first carries only the role), `pause`
        seconds of silence, as a server stalled mid-reply;
      stream_error: message of an error event sent after the streamed content, in place of the finish;
      finish_reason: overrides "stop" / "tool_calls".
    With the queue empty the reply is the text "ok", or what `autoreply(request)` returns (see
    `slow_tool_replies`). `down()` makes it drop connections until `up()`.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, autoreply=None):
        self._host = host
        self._port = port
        self._autoreply = autoreply
        self._lock = threading.Lock()
        self._queue: collections.deque[_Reply] = collections.deque()
        self._stopping = threading.Event()
        self._down = False
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.requests: list[dict] = []
        self.embedding_requests: list[dict] = []
        self.request_headers: list[dict] = []

    @property
    def base_url(self) -> str:
        """The URL to hand to `openai.OpenAI(base_url=...)`."""
        if self._httpd is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        return f"http://{self._host}:{self._httpd.server_port}/v1"

    def script(self, *replies: dict) -> "FakeOpenAIServer":
        """Queue chat replies, answered in order by the next requests."""
        with self._lock:
            self._queue.extend(_Reply(dict(reply)) for reply in replies)
        return self

    def reset(self) -> None:
        """Forget queued replies and recorded requests, so one server can serve many tests."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.embedding_requests.clear()
            self.request_headers.clear()
            self._down = False

    def down(self) -> None:
        """Drop every connection without answering, as an unreachable provider would."""
        self._down = True

    def up(self) -> None:
        """Answer requests again after `down()`."""
        self._down = False

    @property
    def pending(self) -> int:
        """Number of scripted replies not yet used."""
        with self._lock:
            return len(self._queue)

    def start(self) -> "FakeOpenAIServer":
        """Bind a free port and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _Server((self._host, self._port), self._make_handler())
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, waking any handler that is sleeping on a scripted delay."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def _next_reply(self, body: dict) -> _Reply:
        """Record the request and pop its scripted reply."""
        with self._lock:
            self.requests.append(body)
            if self._queue:
                return self._queue.popleft()
        return _Reply(self._autoreply(body) if self._autoreply else {})

    def _sleep(self, seconds: float) -> None:
        """Sleep that ends early when the server stops."""
        if seconds:
            self._stopping.wait(seconds)

    def _completion(self, reply: _Reply, request: dict) -> dict:
        """Non-streamed `chat.completion` object."""
        message: dict = {"role": "assistant", "content": reply.text, "refusal": None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": reply.arguments_json(call)},
                }
                for call in reply.tool_calls
            ]
        return {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", MODEL_ID),
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": reply.finish_reason}
            ],
            "usage": reply.usage(request),
        }

    def _chunks(self, reply: _Reply, request: dict):
        """Yield the `chat.completion.chunk` objects (or an error event) of a streamed reply."""
        include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
        base = {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": request.get("model", MODEL_ID),
        }

        def chunk(delta: dict, finish_reason: str | None = None) -> dict:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            out = dict(base, choices=[choice])
            if include_usage:
                out["usage"] = None
            return out

        yield chunk({"role": "assistant"})
        for piece in _word_pieces(reply.text or ""):
            yield chunk({"content": piece})
        for index, call in enumerate(reply.tool_calls):
            yield chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["name"], "arguments": ""},
                        }
                    ]
                }
            )
            for fragment in _fragments(reply.arguments_json(call)):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})
        if reply.stream_error:
            yield _error_body(reply.stream_error, 500)
            return
        yield chunk({}, reply.finish_reason)
        if include_usage:
            yield dict(base, choices=[], usage=reply.usage(request))

    def _embeddings(self, request: dict) -> dict:
        """`list` of embeddings, base64 when asked (the SDK's default) else floats."""
        inputs = request.get("input", "")
        if not isinstance(inputs, list) or (inputs and isinstance(inputs[0], int)):
            inputs = [inputs]
        dimensions = int(request.get("dimensions") or EMBEDDING_DIMENSIONS)
        data = []
        for index, item in enumerate(inputs):
            vector = fake_embedding(item if isinstance(item, str) else json.dumps(item), dimensions)
            if request.get("encoding_format") == "base64":
                encoded = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            else:
                encoded = vector
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = sum(_count_tokens(i) if isinstance(i, str) else len(i) for i in inputs)
        return {
            "object": "list",
            "data": data,
            "model": request.get("model", MODEL_ID),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def _make_handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            """Route the few OpenAI endpoints the app uses."""

            protocol_version = "HTTP/1.1"

            def log_message(self, format, *args):
                """Keep test output quiet."""

            def handle_one_request(self):
                """Treat a client that hung up (e.g. after its timeout) as normal, not as an error."""
                try:
                    super().handle_one_request()
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def _read_json(self) -> dict:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                return json.loads(raw) if raw else {}

            def _send_json(self, status: int, payload: dict, headers: dict | None = None) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, str(value))
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _write_chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def _gate(self) -> bool:
                """Drop the connection while the server is `down()`."""
                if server._down:
                    self.close_connection = True
                    return False
                return True

            def do_GET(self):
                if not self._gate():
                    return
                if self.path.rstrip("/") == "/v1/models":
                    self._send_json(
                        200,
                        {
                            "object": "list",
                            "data": [
                                {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "nimbus-tests"}
                            ],
                        },
                    )
                else:
                    self._send_json(404, _error_body(f"Unknown path {self.path}", 404))

            def do_POST(self):
                if not self._gate():
                    return
                try:
                    body = self._read_json()
                except ValueError:
                    self._send_json(400, _error_body("Request body is not valid JSON", 400))
                    return
                with server._lock:
                    server.request_headers.append(dict(self.headers))
                path = self.path.split("?", 1)[0].rstrip("/")
                if path == "/v1/chat/completions":
                    self._chat(body)
                elif path == "/v1/embeddings":
                    with server._lock:
                        server.embedding_requests.append(body)
                    self._send_json(200, server._embeddings(body))
                else:
                    self._send_json(404, _error_body(f"Unknown path {self.path}", 404))

            def _chat(self, body: dict) -> None:
                reply = server._next_reply(body)
                server._sleep(reply.delay)
                if reply.status:
                    self._send_json(reply.status, _error_body(reply.error, reply.status),
                                    reply.headers)
                    return
                if not body.get("stream"):
                    self._send_json(200, server._completion(reply, body))
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream; charset=utf-8")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for index, event in enumerate(server._chunks(reply, body)):
                    if index:
                        server._sleep(reply.chunk_delay)
                    if index == reply.pause_after:
                        server._sleep(reply.pause)
                    self._write_chunk(f"data: {json.dumps(event)}\n\n".encode())
                if not reply.stream_error:
                    self._write_chunk(b"data: [DONE]\n\n")
                self._write_chunk(b"")

        return Handler
