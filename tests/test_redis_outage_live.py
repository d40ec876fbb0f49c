"""Redis stopped and started again while guests chat, on the app as it is served (gunicorn,
gevent workers, a Huey worker, a redis-server of the test's own): every answer during the
outage is the clear 503, never a bare 500; a refused send stores nothing; and every turn stored
gets its vector once Redis is back, though the queue was lost with it."""
import pytest

from .fakes.redis_outage import run
from .fakes.redis_server import RedisServer

pytestmark = pytest.mark.skipif(not RedisServer.available(), reason="needs redis-server")


@pytest.fixture(scope="module")
def outage():
    """Four guests, Redis stopped for 4 s mid-load; the lost-vector sweep run once the load ends
    (as the worker's next minute would), not waited for."""
    return run(guests=4, before=2, outage=4, after=3, workers=2, wait_vectors=90, sweep_after=5,
               say=lambda line: None)


def test_no_answer_during_a_redis_outage_is_a_bare_500(outage):
    assert outage["statuses"].get(503, 0) > 0  # the outage was met: sends were refused
    assert outage["bare"] == []


def test_a_send_refused_for_the_outage_stored_nothing(outage):
    assert not [error for error in outage["errors"] if error.startswith("turn ")]
    assert outage["statuses"].get(409, 0) == 0  # nobody was told a reply they had read was pending
    assert outage["pending"] == 0


def test_every_turn_has_its_vector_after_the_restart(outage):
    assert outage["turns"] > 0 and outage["lacking"] == 0
