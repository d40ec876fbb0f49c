"""Every extension point is a typed signature, and hooks.FILLED_BY names every package that fills
one: the list a reader finds from webapp/hooks.py matches the init_app functions."""
import re
from pathlib import Path
from typing import Protocol

from webapp import hooks

WEBAPP = Path(__file__).resolve().parent.parent / "webapp"
# How an init_app names each registry it fills.
FILLS = {"TOOLS": r"\bregister_tools\(", "JOBS": r"\bregister_jobs\(",
         **{name: rf"\bhooks\.{name}\b" for name in ("AFTER_TURN", "OFFLINE_TASKS",
                                                     "SECTION_SOURCES", "RESERVATIONS",
                                                     "SYSTEM_PROMPT", "TOOL_SPECS")}}


def fillers(name: str) -> set[str]:
    return {path.parent.name for path in WEBAPP.glob("*/__init__.py")
            if re.search(FILLS[name], path.read_text())}


def test_filled_by_names_every_package_that_fills_each_registry():
    assert {name: fillers(name) for name in FILLS} == \
        {name: set(packages) for name, packages in hooks.FILLED_BY.items()}


def test_every_hook_is_a_protocol_with_a_docstring():
    specs = [hooks.AfterTurn, hooks.OfflineTask, hooks.SectionSource, hooks.Reservation,
             hooks.SystemPrompt, hooks.ToolSpecs, hooks.Job]
    assert all(issubclass(spec, Protocol) and (spec.__call__.__doc__ or spec.__doc__)
               for spec in specs)


def test_add_keeps_a_list_item_once_and_a_named_item_under_its_name():
    listed, named = [], {}
    for _ in range(2):
        hooks.add(listed, print)
        hooks.add(named, print, name="p")
    assert listed == [print] and named == {"p": print}
