"""Helpers for Playwright browser tests: serve a WSGI app on a live port and launch Debian's chromium."""

from __future__ import annotations

import threading

from werkzeug.serving import make_server

CHROMIUM_PATH = "/usr/bin/chromium"

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


class LiveServer:
    """Serve a WSGI app on 127.0.0.1 in a daemon thread so a real browser can reach it."""

    def __init__(self, app, host: str = "127.0.0.1", port: int = 0):
        self.app = app
        self.host = host
        self.port = port
        self._server = None
        self._thread = None

    @property
    def url(self) -> str:
        """Base URL without a trailing slash, valid once started."""
        if self._server is None:
            raise RuntimeError("LiveServer is not started")
        return f"http://{self.host}:{self.port}"

    def start(self) -> "LiveServer":
        """Bind a free port (port 0) and serve requests until stop()."""
        if self._server is not None:
            return self
        self._server = make_server(self.host, self.port, self.app, threaded=True)
        self.port = self._server.server_port
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="live-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Shut the server down and free its port."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> "LiveServer":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()


def launch_chromium(playwright, **kwargs):
    """Launch headless Debian chromium, since Playwright's own browsers are not downloaded."""
    options = {
        "executable_path": CHROMIUM_PATH,
        "headless": True,
        "args": list(CHROMIUM_ARGS),
    }
    options.update(kwargs)
    return playwright.chromium.launch(**options)
