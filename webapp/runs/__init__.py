"""Replies run in the background: start, lease and heartbeat, takeover after a crash, admission.

Others import what is named here: a turn's run and its stream's hooks (turn_runs.py, heartbeat.py)
and how many replies a worker takes at once (admission.py).
"""
from .admission import admit, is_busy
from .heartbeat import close_if_abandoned, run_for
from .turn_runs import TurnRun, request_stop, wait_until_saved, was_recovered

__all__ = ["TurnRun", "admit", "close_if_abandoned", "is_busy", "request_stop", "run_for",
           "wait_until_saved", "was_recovered"]
