"""An upload in the browser: the request answers at once with the import's page, which polls the
job's progress and turns into the result when the job has run."""
import re
from pathlib import Path

from playwright.sync_api import expect

from webapp.jobs import huey

DATA = Path(__file__).resolve().parent.parent / "data"


def test_the_import_page_shows_the_job_queued_then_its_result(page, live_app, monkeypatch):
    queued = []
    monkeypatch.setattr(huey, "enqueue", queued.append)  # the job waits for this test
    page.goto("/import")
    page.locator('input[type="file"]').set_input_files(str(DATA / "openai_messages.json"))
    page.get_by_role("button", name="Import", exact=True).click()
    expect(page).to_have_url(re.compile(r"/imports/[0-9a-f]{32}$"))
    expect(page.locator("#import-queued")).to_contain_text("Queued: the import starts in a moment")
    assert len(queued) == 1 and page.locator("#import-done").count() == 0

    with live_app.app_context():  # the worker picks the job up
        queued[0].execute()
    # The page's next poll (every second) swaps the result in, and polling stops.
    expect(page.locator("#import-done")).to_contain_text("Imported 1 conversation (", timeout=5_000)
    expect(page.locator("#import-progress[hx-get]")).to_have_count(0)
    page.get_by_role("link", name="viewer", exact=True).first.click()
    expect(page.locator(".trace summary").first).to_contain_text("imported · no request")
