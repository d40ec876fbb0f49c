"""Benchmark: does the offline model hold a conversation? The share of the scenario suite's
exchanges (tests/offline_scenarios.py: natural multi-turn conversations, typos, no order numbers)
answered on topic, each scenario in a fresh copy of the demo shop. Prints each miss.
Run: .venv/bin/python bench/offline_scenarios.py
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.offline_scenarios import SCENARIOS, exchanges, play  # noqa: E402
from tests.support import app_on  # noqa: E402
from webapp.accounts import find_user, seed_demo  # noqa: E402
from webapp.database import create_schema  # noqa: E402


def main() -> None:
    folder = tempfile.mkdtemp(prefix="nimbus-scenario-bench-")
    template = os.path.join(folder, "template.db")
    try:
        with app_on(template) as app:
            create_schema()
            seed_demo(app.config["NIMBUS_DEMO_TENANT"])
        on_topic = 0
        for number, scenario in enumerate(SCENARIOS):
            path = os.path.join(folder, f"scenario{number}.db")
            shutil.copy(template, path)
            with app_on(path) as app:
                tenant_id = find_user("alex@example.com").tenant_id
                for say, answer, called, ok in play(tenant_id, scenario, app.config):
                    on_topic += ok
                    if not ok:
                        print(f"off topic ({scenario.name}): {say.text!r} -> {called} "
                              f"{answer[:160]!r}")
        print(f"offline scenarios on topic: {on_topic}/{exchanges()} exchanges in "
              f"{len(SCENARIOS)} conversations ({100 * on_topic / exchanges():.0f} %)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
