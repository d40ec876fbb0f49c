"""Benchmark: does the offline model hold a conversation? The share of the scenario suite's
exchanges (tests/offline_scenarios.py: natural multi-turn conversations, typos, no order numbers)
answered on topic, each scenario in a fresh copy of the demo shop. Prints each miss.
Run: .venv/bin/python bench/offline_scenarios.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.offline_scenarios import SCENARIOS, exchanges, play  # noqa: E402
from tests.support import demo_shop_copies  # noqa: E402
from webapp.accounts import find_user  # noqa: E402


def main() -> None:
    on_topic = 0
    with demo_shop_copies("nimbus-scenario-bench-") as fresh_shop:
        for scenario in SCENARIOS:
            with fresh_shop() as app:
                tenant_id = find_user("alex@example.com").tenant_id
                for say, answer, called, ok in play(tenant_id, scenario, app.config):
                    on_topic += ok
                    if not ok:
                        print(f"off topic ({scenario.name}): {say.text!r} -> {called} "
                              f"{answer[:160]!r}")
    print(f"offline scenarios on topic: {on_topic}/{exchanges()} exchanges in "
          f"{len(SCENARIOS)} conversations ({100 * on_topic / exchanges():.0f} %)")


if __name__ == "__main__":
    main()
