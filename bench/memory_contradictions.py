"""Benchmark: do a person's memories agree with what they said last? The share of the
contradiction and duplication cases (tests/memory_cases.py) resolved by the offline distiller:
the newest fact active, the one it contradicts only in its history, one memory per fact.
Run: .venv/bin/python bench/memory_contradictions.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.memory_cases import CASES, resolved  # noqa: E402
from tests.support import demo_shop_copies  # noqa: E402
from webapp.accounts import find_user  # noqa: E402


def main() -> None:
    passed = 0
    with demo_shop_copies("nimbus-memory-bench-") as fresh_shop:
        for case in CASES:
            with fresh_shop():
                ok, remembered = resolved(find_user("alex@example.com"), case)
            passed += ok
            if not ok:
                print(f"unresolved: {' / '.join(case.said)} -> {remembered}")
    print(f"contradictions and duplicates resolved: {passed}/{len(CASES)} "
          f"({100 * passed / len(CASES):.0f} %)")


if __name__ == "__main__":
    main()
