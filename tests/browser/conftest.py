"""Browser fixtures: one live server on a temporary SQLite file and one Debian chromium per session."""
import os

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.browser.browser_support import LiveServer, launch_chromium
from webapp import create_app
from webapp.accounts import seed_demo
from webapp.database import create_schema
from webapp.extensions import db

# A busy 2-core CI box can take seconds to serve a page; a real failure fails either way.
expect.set_options(timeout=10_000)

ARTIFACTS = os.path.join(os.path.dirname(__file__), "..", "..", "test-artifacts")


@pytest.fixture(scope="session")
def live_app(tmp_path_factory):
    database = tmp_path_factory.mktemp("live") / "nimbus.db"
    app = create_app({"TESTING": True, "SECRET_KEY": "browser-tests",
                      "DATABASE_URL": f"sqlite:///{database}", "NIMBUS_OFFLINE_WORDS_PER_SECOND": 0,
                      # One live server for every browser test, all from one address: the limits
                      # have their own tests (tests/test_rate_limits.py).
                      "NIMBUS_RATE_LIMIT_ENABLED": False, "NIMBUS_MEMORY_SEARCH": False})
    with app.app_context():
        create_schema()
        seed_demo(app.config["NIMBUS_DEMO_TENANT"])
        db.session.remove()
    yield app
    with app.app_context():
        db.engine.dispose()


@pytest.fixture(scope="session")
def live_server(live_app):
    with LiveServer(live_app) as server:
        yield server


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        yield browser
        browser.close()


@pytest.fixture
def new_page(browser, live_server):
    """Open pages in fresh browser contexts: each context is another visitor (its own guest)."""
    contexts = []

    def open_page(width=1280, height=800):
        context = browser.new_context(base_url=live_server.url,
                                      viewport={"width": width, "height": height})
        context.set_default_timeout(10_000)
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()


@pytest.fixture
def page(new_page):
    return new_page()


@pytest.fixture
def artifacts():
    os.makedirs(ARTIFACTS, exist_ok=True)
    return ARTIFACTS
