"""Helpers for Playwright browser tests: serve a WSGI app on a live port and launch Debian's chromium."""

from __future__ import annotations

import threading

from werkzeug.serving import WSGIRequestHandler, make_server

_BODY = "tests.live_server.body"

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


class _OnceClosing:
    """A response body whose close() runs once, however many times it is called."""

    def __init__(self, body):
        self._body = body
        self._closed = False

    def __iter__(self):
        return iter(self._body)

    def close(self):
        if not self._closed and hasattr(self._body, "close"):
            self._closed = True
            self._body.close()


def _remember_body(app):
    """Keep each response body in its environ, so a dropped connection can still close it."""

    def wsgi(environ, start_response):
        body = environ[_BODY] = _OnceClosing(app(environ, start_response))
        return body

    return wsgi


class _ClosingRequestHandler(WSGIRequestHandler):
    """Close the body when the browser leaves mid-response: werkzeug's dev server skips
    close() when draining the dropped socket fails, and leaks the static file it was sending."""

    def connection_dropped(self, error, environ=None):
        if environ is not None and _BODY in environ:
            environ[_BODY].close()


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
        self._server = make_server(self.host, self.port, _remember_body(self.app), threaded=True,
                                   request_handler=_ClosingRequestHandler)
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


def open_viewer(page) -> None:
    """Follow the chat's Viewer link (its "…" menu item on a phone) and wait for the load event:
    htmx binds its inputs on DOMContentLoaded, and a value typed before that asks for no preview."""
    link = page.get_by_role("link", name="Viewer")
    if link.is_visible():
        link.click()
    else:  # on a phone the viewer is an item of the conversation's "…" menu
        page.locator("#conversation-menu-button").click()
        page.get_by_role("menuitem", name="Open the viewer").click()
    page.wait_for_load_state("load")
