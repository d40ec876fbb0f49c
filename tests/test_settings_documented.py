"""Every setting the app reads is in docs/configuration.md, with its default, and no table names a
setting the app does not read: the reference holds them all, the README's short table a few."""
import re
from pathlib import Path

from webapp.config import DEFAULTS

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "configuration.md"
README = ROOT / "README.md"
ROW = re.compile(r"^\| (`[A-Z_]+`(?: / `_[A-Z_]+`)?) \| ([^|]*) \|", re.M)


def documented(text: str) -> dict[str, str]:
    """Setting → the default its row gives; `A_PER_SESSION` / `_PER_IP` rows name two."""
    rows = {}
    for names, default in ROW.findall(text):
        first, *others = [n.strip("`") for n in names.split(" / ")]
        defaults = [d.strip() for d in default.split(" / ")]
        rows[first] = defaults[0]
        for other, value in zip(others, defaults[1:] or defaults):
            rows[first.rsplit("_PER_", 1)[0] + other] = value
    return rows


def readme_table() -> dict[str, str]:
    """The rows of the README's "Configuration" section."""
    return documented(README.read_text().split("## Configuration", 1)[1].split("\n## ", 1)[0])


def shown(value) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def wrong_defaults(rows: dict[str, str]) -> dict[str, tuple[str, str]]:
    return {key: (cell, shown(DEFAULTS[key])) for key, cell in rows.items()
            if key in DEFAULTS and DEFAULTS[key] is not None
            and f"`{shown(DEFAULTS[key])}`" not in cell}


def test_every_setting_the_app_reads_is_in_the_configuration_reference():
    missing = sorted(set(DEFAULTS) - set(documented(REFERENCE.read_text())))
    assert not missing, f"add to docs/configuration.md: {', '.join(missing)}"


def test_the_reference_names_only_settings_the_app_reads():
    unknown = sorted(set(documented(REFERENCE.read_text())) - set(DEFAULTS))
    assert not unknown, f"docs/configuration.md names settings webapp/config.py lacks: {unknown}"


def test_the_reference_gives_each_default_as_the_app_has_it():
    wrong = wrong_defaults(documented(REFERENCE.read_text()))
    assert not wrong, f"docs/configuration.md default ≠ webapp/config.py default: {wrong}"


def test_the_readme_table_is_a_few_settings_the_app_reads_with_their_defaults():
    rows = readme_table()
    assert rows, "the README's Configuration section has no table"
    unknown = sorted(set(rows) - set(DEFAULTS))
    assert not unknown, f"README 'Configuration' names settings webapp/config.py lacks: {unknown}"
    assert not wrong_defaults(rows), f"README default ≠ webapp/config.py default: {wrong_defaults(rows)}"


def test_the_checker_reads_a_pair_row_and_sees_a_wrong_default():
    rows = documented("| `NIMBUS_RATE_LIMIT_SHARES_PER_SESSION` / `_PER_IP` | `1/minute` / `2/minute` | x |\n"
                      "| `NIMBUS_MAX_STEPS` | `7` | x |\n")
    assert rows == {"NIMBUS_RATE_LIMIT_SHARES_PER_SESSION": "`1/minute`",
                    "NIMBUS_RATE_LIMIT_SHARES_PER_IP": "`2/minute`", "NIMBUS_MAX_STEPS": "`7`"}
    assert set(wrong_defaults(rows)) == set(rows)
