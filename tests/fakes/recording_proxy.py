"""A recording proxy: Nimbus talks to it as to its server, it forwards every request unchanged to
the server behind it (a fake or the real llama-server) and keeps what was asked, so a test reads
exactly what the server received, probes included. Replies stream through as they come, and
each request's times are kept: when it came, when the server's first bytes came, when it ended."""
import http.client
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class RecordingProxy:
    """`base_url` ends in /v1 as the target's does; `requests` holds (method, path, body)."""

    def __init__(self, target_base_url: str):
        target = urlsplit(target_base_url)
        self.host, self.port = target.hostname, target.port
        self.requests: list[tuple[str, str, dict | None]] = []
        self.times: list[dict] = []  # beside `requests`: arrived, first (bytes), ended (monotonic)
        self.lock = threading.Lock()
        self.httpd: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def chat_requests(self) -> list[dict]:
        """The bodies of every chat completion asked for, in order."""
        return [body for method, path, body in self.requests
                if method == "POST" and path.rstrip("/").endswith("/chat/completions")]

    def __enter__(self):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    def handler(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # the reply's end is the connection's: no re-framing

            def log_message(self, *args):
                pass

            def do_GET(self):
                self.forward(None)

            def do_POST(self):
                self.forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def forward(self, body: bytes | None):
                try:
                    parsed = json.loads(body) if body else None
                except ValueError:
                    parsed = None
                times = {"arrived": time.monotonic(), "first": None, "ended": None}
                with proxy.lock:
                    proxy.requests.append((self.command, self.path, parsed))
                    proxy.times.append(times)
                upstream = http.client.HTTPConnection(proxy.host, proxy.port, timeout=300)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                try:
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    response = upstream.getresponse()
                except OSError:
                    self.send_error(502)
                    times["ended"] = time.monotonic()
                    return
                self.send_response(response.status)
                for key, value in response.getheaders():
                    if key.lower() not in HOP_BY_HOP:
                        self.send_header(key, value)
                self.end_headers()
                try:
                    while chunk := response.read1(65536):
                        times["first"] = times["first"] or time.monotonic()
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (OSError, http.client.HTTPException):  # a side hung up: the reply ends here
                    pass
                finally:
                    times["ended"] = time.monotonic()
                    upstream.close()

        return Handler
