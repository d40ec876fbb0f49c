"""One provider call in flight: its deadlines, and a way to end it from another thread at once.

A read timeout is no deadline: a server that sends a keep-alive comment every 15 seconds resets
it forever. So each call is watched by one shared thread that ends it when its deadline passes:
the first-token deadline until the first word or tool call arrives, then the total one. Ending a
call shuts its socket down, which wakes the reading thread and tells the server (a single-slot
local server then stops generating for nobody). Stop ends the call the same way.
"""
import heapq
import itertools
import socket
import threading
import time


class Call:
    """A request in flight: `cancel(reason)` ends it from any thread."""

    def __init__(self, first_token_deadline: float, total_deadline: float):
        started = time.monotonic()
        self.started = started
        self.first_token_at = started + min(first_token_deadline, total_deadline)
        self.total_at = started + total_deadline
        self.reason: str | None = None  # why it was ended early: "stopped" or a deadline
        self.spoke = False
        self.done = False
        self._response = None
        self._lock = threading.Lock()

    def attach(self, http_response) -> None:
        """The response whose socket `cancel` shuts; ended at once if cancelled meanwhile."""
        with self._lock:
            self._response = http_response
            cancelled = self.reason is not None
        if cancelled:
            shut(http_response)

    def first_token(self) -> None:
        if not self.spoke:
            self.spoke = True
            WATCHDOG.watch(self.total_at, self)

    def cancel(self, reason: str) -> None:
        with self._lock:
            if self.done or self.reason is not None:
                return
            self.reason = reason
            response = self._response
        if response is not None:
            shut(response)

    def expire(self, now: float) -> None:
        """Called by the watchdog at one of the call's deadlines."""
        if not self.spoke and now >= self.first_token_at:
            self.cancel(f"no first token within {self.first_token_at - self.started:.0f} s")
        elif now >= self.total_at:
            self.cancel(f"not finished within {self.total_at - self.started:.0f} s")

    def finish(self) -> None:
        with self._lock:
            self.done = True


def shut(http_response) -> None:
    """Shut the response's socket down (wakes a blocked read, sends the server a FIN)."""
    stream = (getattr(http_response, "extensions", None) or {}).get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    try:
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
            return
    except OSError:
        pass
    try:
        http_response.close()
    except Exception:  # closing from another thread is best effort
        pass


class Watchdog:
    """One daemon thread ending calls at their deadlines."""

    def __init__(self):
        self._heap: list = []
        self._ids = itertools.count()
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def watch(self, when: float, call: Call) -> None:
        with self._changed:
            heapq.heappush(self._heap, (when, next(self._ids), call))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="provider-deadlines",
                                                daemon=True)
                self._thread.start()
            self._changed.notify()

    def _run(self) -> None:
        while True:
            with self._changed:
                now = time.monotonic()
                due = []
                while self._heap and self._heap[0][0] <= now:
                    due.append(heapq.heappop(self._heap)[2])
                if not due:
                    self._changed.wait(self._heap[0][0] - now if self._heap else None)
                    continue
            for call in due:
                if not call.done:
                    call.expire(now)


WATCHDOG = Watchdog()
