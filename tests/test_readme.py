"""The README is a tour that fits a sitting: under 300 lines, and its first screen still gives the
two set-up commands, word for word (the one CI runs among them)."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SET_UP = ["bash scripts/serve.sh", "bash scripts/test.sh"]  # serve on the defaults; install and test


def test_the_readme_is_under_300_lines():
    assert len(README.read_text().splitlines()) < 300


def test_the_readme_gives_the_two_set_up_commands_on_its_first_screen():
    first_screen = README.read_text().splitlines()[:40]
    for command in SET_UP:
        assert f"    {command}" in first_screen, f"README lost its set-up command {command!r}"
        assert (ROOT / command.split()[1]).exists()


def test_the_test_command_is_the_one_ci_runs():
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert SET_UP[1] in ci
