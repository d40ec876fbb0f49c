"""Every setting the app reads is in the README's configuration table, with its default, and the
table names no setting the app does not read: a person configuring Nimbus reads one table."""
import re
from pathlib import Path

from webapp.config import DEFAULTS

README = Path(__file__).resolve().parent.parent / "README.md"
ROW = re.compile(r"^\| (`[A-Z_]+`(?: / `_[A-Z_]+`)?) \| ([^|]*) \|", re.M)


def documented() -> dict[str, str]:
    """Setting → the default its row gives; `A_PER_SESSION` / `_PER_IP` rows name two."""
    text = README.read_text().split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for names, default in ROW.findall(text):
        first, *others = [n.strip("`") for n in names.split(" / ")]
        defaults = [d.strip() for d in default.split(" / ")]
        rows[first] = defaults[0]
        for other, value in zip(others, defaults[1:] or defaults):
            rows[first.rsplit("_PER_", 1)[0] + other] = value
    return rows


def shown(value) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def test_every_setting_the_app_reads_is_in_the_readme_table():
    missing = sorted(set(DEFAULTS) - set(documented()))
    assert not missing, f"add to README 'Configuration': {', '.join(missing)}"


def test_the_readme_table_names_only_settings_the_app_reads():
    unknown = sorted(set(documented()) - set(DEFAULTS))
    assert not unknown, f"README 'Configuration' names settings webapp/config.py lacks: {unknown}"


def test_the_readme_gives_each_default_as_the_app_has_it():
    wrong = {key: (cell, shown(DEFAULTS[key])) for key, cell in documented().items()
             if key in DEFAULTS and DEFAULTS[key] is not None
             and f"`{shown(DEFAULTS[key])}`" not in cell}
    assert not wrong, f"README default ≠ webapp/config.py default: {wrong}"
