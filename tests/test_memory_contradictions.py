"""Memories agree with what the person said last: contradictions supersede, duplicates merge."""
import pytest

from .memory_cases import CASES, resolved


@pytest.mark.parametrize("case", CASES, ids=[" / ".join(c.said)[:60] for c in CASES])
def test_memories_agree_with_what_the_person_said_last(app, alex, case):
    ok, remembered = resolved(alex, case)
    assert ok, remembered


def test_the_suite_has_fifty_cases():
    assert len(CASES) >= 50
