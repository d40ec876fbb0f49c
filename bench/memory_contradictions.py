"""Benchmark: do a person's memories agree with what they said last? The share of the
contradiction and duplication cases (tests/memory_cases.py) resolved by the offline distiller:
the newest fact active, the one it contradicts only in its history, one memory per fact.
Run: .venv/bin/python bench/memory_contradictions.py
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.memory_cases import CASES, resolved  # noqa: E402
from tests.support import app_on  # noqa: E402
from webapp.accounts import find_user, seed_demo  # noqa: E402
from webapp.database import create_schema  # noqa: E402


def main() -> None:
    folder = tempfile.mkdtemp(prefix="nimbus-memory-bench-")
    template = os.path.join(folder, "template.db")
    try:
        with app_on(template) as app:
            create_schema()
            seed_demo(app.config["NIMBUS_DEMO_TENANT"])
        passed = 0
        for number, case in enumerate(CASES):
            path = os.path.join(folder, f"case{number}.db")
            shutil.copy(template, path)
            with app_on(path):
                ok, remembered = resolved(find_user("alex@example.com"), case)
            passed += ok
            if not ok:
                print(f"unresolved: {' / '.join(case.said)} -> {remembered}")
        print(f"contradictions and duplicates resolved: {passed}/{len(CASES)} "
              f"({100 * passed / len(CASES):.0f} %)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
