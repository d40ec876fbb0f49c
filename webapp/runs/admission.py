"""Each worker's runs and how many it takes on: a registry of the replies it writes, the slots
that bound them (NIMBUS_MAX_RUNS), and the sends admitted whose streams have not started yet.
"""
from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .turn_runs import TurnRun

RUNS_LOCK = threading.Lock()


def runs_of(app) -> dict[int, TurnRun]:
    """The runs this worker writes, by turn id."""
    return app.extensions.setdefault("turn_runs", {})


def slots_of(app) -> threading.BoundedSemaphore:
    """At most NIMBUS_MAX_RUNS runs write at once in this worker; the others wait their turn."""
    with RUNS_LOCK:
        return app.extensions.setdefault(
            "run_slots", threading.BoundedSemaphore(app.config["NIMBUS_MAX_RUNS"]))


ADMISSION_SECONDS = 10.0  # a send counts against its worker's runs until its stream starts


def is_busy(app) -> bool:
    """Whether this worker already has as many runs as it may write at once, counting the
    sends it admitted whose streams have not started yet (a burst arrives before its streams)."""
    now = time.monotonic()
    with RUNS_LOCK:
        admitted = app.extensions.setdefault("admitted", {})
        for key in [key for key, at in admitted.items() if now - at > ADMISSION_SECONDS]:
            admitted.pop(key)
        return len(runs_of(app)) + len(admitted) >= app.config["NIMBUS_MAX_RUNS"]


def admit(app, turn_id: int) -> None:
    """Count a send just stored until its run starts (here or on another worker)."""
    with RUNS_LOCK:
        app.extensions.setdefault("admitted", {})[turn_id] = time.monotonic()
