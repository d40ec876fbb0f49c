"""A Redis outage is answered like a database outage: a clear 503 that says to try again, never
Flask's bare 500, on any request that touches Redis (the conversation lock, the job queue)."""
import pytest
import redis

from webapp import create_app

DOWN = "redis://127.0.0.1:1/0"  # nothing listens there: every call is refused at once


@pytest.fixture
def redis_down(app):
    return create_app({"TESTING": True, "SECRET_KEY": "test", "WTF_CSRF_ENABLED": False,
                       "DATABASE_URL": app.config["DATABASE_URL"], "REDIS_URL": DOWN,
                       "NIMBUS_JOBS_IMMEDIATE": True, "NIMBUS_OFFLINE_WORDS_PER_SECOND": 0,
                       "NIMBUS_MEMORY_SEARCH": False})


def test_a_redis_error_anywhere_in_a_request_answers_503_with_retry_after(redis_down):
    @redis_down.get("/touches-redis")
    def touches_redis():
        redis.Redis.from_url(DOWN).ping()

    response = redis_down.test_client().get("/touches-redis")
    assert response.status_code == 503 and "Retry-After" in response.headers
    assert "try again" in response.get_data(as_text=True)
