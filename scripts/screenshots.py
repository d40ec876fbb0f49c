"""Refresh the chat page's screenshots in docs/screenshots/: desktop (1280×800) and phone (390×844),
light and dark.

Run from the project root: .venv/bin/python scripts/screenshots.py
It serves the app on a temporary SQLite database with the offline model, plays the seed scenario in
Debian's chromium and saves what a visitor sees.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from playwright.sync_api import expect, sync_playwright  # noqa: E402

from tests.browser.browser_support import LiveServer, launch_chromium  # noqa: E402
from webapp import create_app  # noqa: E402
from webapp.accounts import seed_demo  # noqa: E402
from webapp.database import create_schema  # noqa: E402
from webapp.extensions import db  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "screenshots")
SEED = ["Can I get a refund for order #1043?", "OK. What about my other order, 1042?", "Yes please.",
        "How do I reset my password?", "What tickets do I have open?"]


def send(page, message, seq):
    page.get_by_label("Message Nimbus").fill(message)
    page.get_by_label("Message Nimbus").press("Enter")
    expect(page.locator(f"#turn-{seq + 1}-answer:not(.is-streaming)")).to_be_visible()


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        app = create_app({"SECRET_KEY": "screenshots", "DATABASE_URL": f"sqlite:///{folder}/nimbus.db",
                          "NIMBUS_OFFLINE_WORDS_PER_SECOND": 0, "NIMBUS_JOBS_IMMEDIATE": True})
        with app.app_context():
            create_schema()
            seed_demo(app.config["NIMBUS_DEMO_TENANT"])
            db.session.remove()
        with LiveServer(app) as server, sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            context = browser.new_context(base_url=server.url, viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto("/")
            page.screenshot(path=os.path.join(OUT, "chat-desktop-welcome.png"))
            for seq, message in enumerate(SEED):
                send(page, message, seq)
            page.locator(".tool-steps summary").last.click()
            page.locator("#messages").evaluate("e => e.scrollTo(0, e.scrollHeight)")
            page.screenshot(path=os.path.join(OUT, "chat-desktop.png"))
            page.emulate_media(color_scheme="dark")
            page.screenshot(path=os.path.join(OUT, "chat-desktop-dark.png"))
            page.emulate_media(color_scheme="light")
            page.set_viewport_size({"width": 390, "height": 844})
            page.reload()
            page.screenshot(path=os.path.join(OUT, "chat-phone.png"))
            page.emulate_media(color_scheme="dark")
            page.screenshot(path=os.path.join(OUT, "chat-phone-dark.png"))
            page.emulate_media(color_scheme="light")
            page.get_by_role("button", name="Your conversations").click()
            expect(page.locator("#sidebar")).to_be_visible()
            page.wait_for_timeout(300)  # the drawer's slide
            page.screenshot(path=os.path.join(OUT, "chat-phone-drawer.png"))
            browser.close()
        with app.app_context():
            db.engine.dispose()
    for name in sorted(os.listdir(OUT)):
        print(os.path.join("docs", "screenshots", name))


if __name__ == "__main__":
    main()
