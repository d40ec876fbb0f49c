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
from contextlib import contextmanager
from typing import Callable


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


CHAT, BACKGROUND = 0, 1  # priorities: lower goes first


class PrioritySlots:
    """At most `size` calls at once to one endpoint (a single-slot local server: 1). Chats go
    ahead of background calls (summaries, the distiller), and a chat that finds every slot taken
    by background calls ends one of them: a local server's one slot is the chat's at once.
    Threads of one process share it; processes do not (README "Local models")."""

    def __init__(self, size: int):
        self.size = size
        self.holders: dict[int, tuple[int, Callable]] = {}  # ticket -> (priority, yield_slot)
        self.waiting: list[tuple[int, int]] = []
        self.tickets = itertools.count()
        self.changed = threading.Condition()

    def acquire(self, priority: int, yield_slot: Callable, timeout: float) -> int:
        ticket = (priority, next(self.tickets))
        deadline = time.monotonic() + timeout
        with self.changed:
            heapq.heappush(self.waiting, ticket)
            asked = False
            while True:
                if len(self.holders) < self.size and self.waiting[0] == ticket:
                    heapq.heappop(self.waiting)
                    self.holders[ticket[1]] = (priority, yield_slot)
                    self.changed.notify_all()
                    return ticket[1]
                if priority == CHAT and not asked:
                    background = [y for p, y in self.holders.values() if p > CHAT]
                    if len(self.holders) >= self.size and background:
                        background[0]()  # it ends its call and lets the slot go
                        asked = True
                left = deadline - time.monotonic()
                if left <= 0:
                    self.waiting.remove(ticket)
                    heapq.heapify(self.waiting)
                    self.changed.notify_all()
                    raise TimeoutError("no free slot on the provider")
                self.changed.wait(min(left, 0.5))

    def release(self, ticket: int) -> None:
        with self.changed:
            self.holders.pop(ticket, None)
            self.changed.notify_all()


_SLOTS: dict[tuple, PrioritySlots] = {}
_SLOTS_LOCK = threading.Lock()


def slots(endpoint: str, size: int) -> PrioritySlots:
    with _SLOTS_LOCK:
        found = _SLOTS.get((endpoint, size))
        if found is None:
            found = _SLOTS[(endpoint, size)] = PrioritySlots(size)
        return found


@contextmanager
def slot_for(provider, purpose: str):
    """Hold one of the provider's slots for this call (no limit where none is known)."""
    size = provider.slot_count()
    if not size:
        yield
        return
    thread = threading.get_ident()
    pool = slots(provider.base_url, size)
    try:
        ticket = pool.acquire(CHAT if purpose == "chat" else BACKGROUND,
                              lambda: provider.give_up_slot(thread), provider.timeout)
    except TimeoutError as error:
        from .base import ProviderError
        raise ProviderError(f"{error} within {provider.timeout:.0f} s") from None
    try:
        yield
    finally:
        provider.preempted.discard(thread)
        pool.release(ticket)
