"""A fresh PostgreSQL database for a test: created on the local server, dropped afterwards.

Without a reachable server the test is skipped, so the suite still runs on a laptop; with `CI`
set it fails instead, because CI has the server and must never skip the scale path.
"""
import os
import secrets

import psycopg
import pytest

SERVER = os.environ.get("NIMBUS_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")


def new_database(prefix: str = "nimbus_test"):
    """(url, drop): a new, randomly named database and the function that drops it."""
    try:
        admin = psycopg.connect(SERVER, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as error:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"PostgreSQL not reachable at {SERVER}: {error}")
    name = f"{prefix}_{secrets.token_hex(4)}"
    admin.execute(f'CREATE DATABASE "{name}"')

    def drop():
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        admin.close()
    return SERVER.rsplit("/", 1)[0] + "/" + name, drop
