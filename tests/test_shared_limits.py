"""Limits that hold on the default deployment (SQLite, no Redis, several workers): the lock-out
and the per-address limits count in a file every worker opens, not in each worker's memory."""
import multiprocessing
import threading

import pytest

from webapp.security.shared_counts import SQLiteStorage

from .accounts_support import make_account, sign_in
from .test_address_limits import ATTACKER, OWNER, from_address, limited  # noqa: F401
from .test_rate_limits import visitor


@pytest.fixture
def workers(limited, tmp_path):  # noqa: F811
    """Two workers of one deployment: two apps on the same database and the same counts file."""
    def build(**config):
        return [limited(NIMBUS_LIMITS_DB=str(tmp_path / "limits.db"), **config) for _ in range(2)]
    return build


def test_a_lock_out_on_one_worker_holds_on_the_other(workers):
    one, two = workers(NIMBUS_LOGIN_MAX_FAILURES=2)
    make_account("kim@example.com")
    assert sign_in(from_address(one, ATTACKER), "kim@example.com", "guess").status_code == 401
    assert sign_in(from_address(two, ATTACKER), "kim@example.com", "guess").status_code == 401
    # the right password from the attacker's address is refused on either worker
    assert sign_in(from_address(one, ATTACKER), "kim@example.com").status_code == 401
    assert sign_in(from_address(two, ATTACKER), "kim@example.com").status_code == 401
    assert sign_in(from_address(two, OWNER), "kim@example.com").status_code == 303


def test_failed_sign_ins_from_one_address_are_counted_across_workers(workers):
    one, two = workers(NIMBUS_RATE_LIMIT_SIGN_IN_PER_IP="4/minute", NIMBUS_LOGIN_MAX_FAILURES=50)
    answers = [sign_in(from_address(worker, ATTACKER), f"user{n}@example.com", "guess").status_code
               for n, worker in enumerate([one, two] * 3)]
    assert answers == [401, 401, 401, 401, 429, 429]  # the 5th failure, not the 9th


def test_memory_writes_from_one_address_are_counted_across_workers(workers):
    one, two = workers(NIMBUS_RATE_LIMIT_MEMORY_PER_IP="2/minute")
    first, second = visitor(one), visitor(two)
    assert first.post("/memories", data={"content": "A"}).status_code == 302
    assert second.post("/memories", data={"content": "B"}).status_code == 302
    assert first.post("/memories", data={"content": "C"}).status_code == 429
    assert second.post("/memories", data={"content": "D"}).status_code == 429


def test_threads_racing_for_the_last_places_take_no_more_than_the_limit(tmp_path):
    storage = SQLiteStorage(f"nimbus-sqlite://{tmp_path / 'limits.db'}")
    taken = []

    def hit():
        for _ in range(10):
            taken.append(storage.acquire_entry("k", 25, 60))
    threads = [threading.Thread(target=hit) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert taken.count(True) == 25 and storage.get_moving_window("k", 25, 60)[1] == 25


def take_places(path: str, tries: int, taken) -> None:
    storage = SQLiteStorage(f"nimbus-sqlite://{path}")
    taken.put(sum(storage.acquire_entry("k", 25, 60) for _ in range(tries)))


def test_two_worker_processes_racing_for_the_last_places_take_no_more_than_the_limit(tmp_path):
    context = multiprocessing.get_context("spawn")  # a worker process of its own, as gunicorn's
    taken = context.Queue()
    workers = [context.Process(target=take_places, args=(str(tmp_path / "limits.db"), 20, taken))
               for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert taken.get(timeout=5) + taken.get(timeout=5) == 25
