"""Every `flask` command and each of its options is in docs/cli.md: a person reads one table, and
a command added or an option renamed without it fails here."""
import re
from pathlib import Path

import click
import pytest

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
FOREIGN = {"run", "shell", "routes", "db", "limiter"}  # Flask's and its extensions': named only
COMMAND_CELL = re.compile(r"^\| (`[^|]*(?:\\\|[^|]*)*) \|", re.M)


def rows() -> list[str]:
    """The first cell of each row of the page's command table."""
    return COMMAND_CELL.findall(REFERENCE.read_text())


def commands(app) -> dict[str, click.Command]:
    """'users add' → its command, for every command of the app that is not a group."""
    found, context = {}, click.Context(app.cli)

    def walk(command, path):
        if isinstance(command, click.Group):
            group = command if path else app.cli
            names = app.cli.list_commands(context) if not path else sorted(command.commands)
            for name in names:
                if path or name not in FOREIGN:
                    walk(group.get_command(context, name), [*path, name])
        else:
            found[" ".join(path)] = command
    walk(app.cli, [])
    return found


def cells_for(path: str) -> list[str]:
    """The rows whose first cell starts with the command (or names it after a `/`)."""
    pattern = re.compile(rf"(?:^|/ )`{re.escape(path)}(?:[ `])")
    return [cell for cell in rows() if pattern.search(cell)]


def test_every_command_has_a_row(app):
    missing = sorted(path for path in commands(app) if not cells_for(path))
    assert not missing, f"add to docs/cli.md: {missing}"


def test_every_option_of_a_command_is_in_its_row(app):
    missing = []
    for path, command in commands(app).items():
        cells = " ".join(cells_for(path))
        for param in command.params:
            if isinstance(param, click.Option):
                missing += [f"{path} {opt}" for opt in param.opts + param.secondary_opts
                            if opt.startswith("--") and opt != "--user" and opt not in cells]
    assert not missing, f"add to docs/cli.md: {missing}"


@pytest.mark.parametrize("name", sorted(FOREIGN))
def test_flask_and_extension_commands_are_named(name):
    assert any(f"`{name}" in cell for cell in rows())
