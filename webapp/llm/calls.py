"""One provider call in flight: its deadlines, and a way to end it from another thread at once.

A read timeout is no deadline: a server that sends a keep-alive comment every 15 seconds resets
it forever. So each call is watched by one shared thread that ends it when a deadline passes:
- the first-token deadline, until the first word or tool call arrives;
- then the idle deadline: the longest silence between two chunks of the reply;
- and a total cap that fits the server: the time the output cap (`max_tokens`) takes at the
  slowest pace accepted (NIMBUS_MIN_TOKENS_PER_SECOND), or, once the server has sent more than
  `max_tokens` (it ignores the cap), half as long again as that many tokens take at its own pace.
  A reply still coming within its output cap is never cut for being long, only for going silent.
Ending a call shuts its socket down, which wakes the reading thread and tells the server (a
single-slot local server then stops generating for nobody). Stop ends the call the same way.
"""
import heapq
import itertools
import logging
import socket
import threading
import time
from contextlib import contextmanager
from typing import Callable

from . import slot_leases

log = logging.getLogger(__name__)
OVERRUN = 1.5  # a server past max_tokens is cut once this many times max_tokens take at its pace
LIVE: dict = {}  # thread ident -> the Call it is reading: a slot's waiters ask if it progresses


class Call:
    """A request in flight: `cancel(reason)` ends it from any thread."""

    def __init__(self, first_token_deadline: float, idle_deadline: float = 30.0,
                 max_tokens: int | None = None, min_pace: float = 1.0):
        started = time.monotonic()
        self.started = started
        self.first_token_at = started + first_token_deadline
        self.idle, self.max_tokens, self.min_pace = idle_deadline, max_tokens, min_pace
        self.spoke_at = self.last_at = None  # when the first and the latest chunk came
        self.tokens = 0  # chunks that carried words or tool-call fragments: one token or more each
        self.reason: str | None = None  # why it was ended early: "stopped" or a deadline
        self.expired = False  # one of the deadlines ended it (not Stop, not a chat's preemption)
        self.done = False
        self.next_check = self.first_token_at
        self._response = None
        self._lock = threading.Lock()
        self.thread = threading.get_ident()
        LIVE[self.thread] = self

    @property
    def spoke(self) -> bool:
        return self.spoke_at is not None

    def attach(self, http_response) -> None:
        """The response whose socket `cancel` shuts; ended at once if cancelled meanwhile."""
        with self._lock:
            self._response = http_response
            cancelled = self.reason is not None
        if cancelled:
            shut(http_response)

    def heard(self, tokens: int = 1) -> None:
        """A chunk arrived: `tokens` 1 for a word or tool-call fragment, 0 for a chunk without."""
        now = time.monotonic()
        if self.spoke_at is None:
            if not tokens:
                return  # a role-only chunk is not the first token
            self.last_at = now  # before spoke_at: other threads read last_at once it is set
            self.spoke_at = now
            self.next_check = now + self.idle
            WATCHDOG.watch(self.next_check, self)
        self.last_at = now
        self.tokens += tokens
        if self.max_tokens and self.tokens > self.max_tokens:
            when, reason = self.cap()
            if now >= when:
                self.expire_now(reason)

    def cap(self) -> tuple[float, str]:
        """When the reply has run too long, and the words that say so."""
        limit = self.max_tokens or 4096
        when = self.spoke_at + limit / self.min_pace
        reason = f"ran past {when - self.started:.0f} s, slower than " \
                 f"{self.min_pace:g} tokens/s over its {limit} tokens"
        if self.max_tokens and self.tokens > self.max_tokens:
            pace = self.tokens / max(self.last_at - self.spoke_at, 1e-3)
            overrun = self.spoke_at + OVERRUN * self.max_tokens / pace
            if overrun < when:
                when = overrun
                reason = f"ran past its output cap of {self.max_tokens} tokens"
        return when, reason

    def deadline(self) -> tuple[float, str]:
        """The next deadline of this call and what its passing means."""
        if self.spoke_at is None:
            return self.first_token_at, \
                f"no first token within {self.first_token_at - self.started:.0f} s"
        idle = (self.last_at + self.idle, f"the server sent nothing for {self.idle:.0f} s mid-reply")
        return min(idle, self.cap())

    def cancel(self, reason: str) -> None:
        with self._lock:
            if self.done or self.reason is not None:
                return
            self.reason = reason
            response = self._response
        if response is not None:
            shut(response)

    def expire_now(self, reason: str) -> None:
        self.expired = self.reason is None and not self.done
        self.cancel(reason)

    def expire(self, now: float, when: float) -> None:
        """Called by the watchdog at the time it was asked to look (`when`)."""
        if when != self.next_check:
            return  # a stale look: the call was asked to be looked at later
        due, reason = self.deadline()
        if now >= due:
            self.expire_now(reason)
        else:  # a chunk came meanwhile: look again at the deadline it moved to
            self.next_check = due
            WATCHDOG.watch(due, self)

    def progressing(self, now: float) -> bool:
        """Whether the call is still within its deadlines: the server is working on it."""
        return not self.done and self.reason is None and now < self.deadline()[0]

    def finish(self) -> None:
        with self._lock:
            self.done = True
        if LIVE.get(self.thread) is self:
            LIVE.pop(self.thread, None)


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
                    when, _, call = heapq.heappop(self._heap)
                    due.append((when, call))
                if not due:
                    self._changed.wait(self._heap[0][0] - now if self._heap else None)
                    continue
            for when, call in due:
                if not call.done:
                    call.expire(now, when)


WATCHDOG = Watchdog()


CHAT, BACKGROUND = 0, 1  # priorities: lower goes first


class PrioritySlots:
    """At most `size` calls at once to one endpoint (a single-slot local server: 1). Chats go
    ahead of background calls (summaries, the distiller), and a chat that finds every slot taken
    by background calls ends one of them: a local server's one slot is the chat's at once.
    A wait goes on past its timeout while a call holding a slot is within its deadlines: the
    server is busy writing a reply, not down. Threads of one process share it; processes share
    the endpoint's slots through the database (slot_leases.py)."""

    def __init__(self, size: int):
        self.size = size
        # ticket -> (priority, yield_slot, the holder's thread)
        self.holders: dict[int, tuple[int, Callable, int]] = {}
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
                    self.holders[ticket[1]] = (priority, yield_slot, threading.get_ident())
                    self.changed.notify_all()
                    return ticket[1]
                if priority == CHAT and not asked:
                    background = [y for p, y, _ in self.holders.values() if p > CHAT]
                    if len(self.holders) >= self.size and background:
                        background[0]()  # it ends its call and lets the slot go
                        asked = True
                left = deadline - time.monotonic()
                if left <= 0 and not self.progressing():
                    self.waiting.remove(ticket)
                    heapq.heapify(self.waiting)
                    self.changed.notify_all()
                    raise TimeoutError("no free slot on the provider")
                self.changed.wait(min(left, 0.5) if left > 0 else 0.5)

    def progressing(self) -> bool:
        """Whether a call holding a slot is still within its deadlines."""
        now = time.monotonic()
        return any(call.progressing(now) for call in
                   (LIVE.get(thread) for _, _, thread in self.holders.values()) if call)

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
    give_up = lambda: provider.give_up_slot(thread)  # noqa: E731
    try:
        ticket = pool.acquire(CHAT if purpose == "chat" else BACKGROUND, give_up,
                              provider.timeout)
    except TimeoutError as error:
        raise refused(provider, purpose, error) from None
    lease = None
    try:
        # Then the endpoint's slot across processes (web workers and the job worker).
        try:
            lease = slot_leases.take(provider.base_url, size, purpose == "chat",
                                     provider.timeout, give_up, pool.progressing)
        except TimeoutError as error:
            raise refused(provider, purpose, error) from None
        yield
    finally:
        if lease is not None:
            lease.end()
        provider.preempted.discard(thread)
        pool.release(ticket)


def refused(provider, purpose: str, error: Exception):
    """A call that found no slot in time: logged, and the error its caller raises."""
    from .base import ProviderError
    log.warning("provider %s: a %s call refused: %s within %.0f s", provider.name, purpose,
                error, provider.timeout)
    return ProviderError(f"{error} within {provider.timeout:.0f} s")
