"""Imports flow one way: no circles, no import of a higher layer (tests/layering.py has the
order), no module completed by importing another for its side effects, and a package's internals
stay behind its face (its __init__)."""
from pathlib import Path

import pytest

from .layering import (LAYERS, WITHOUT_A_FACE, cycles, graph, internals_imported, layer_of,
                       side_effect_imports, upward)

WEBAPP = Path(__file__).resolve().parent.parent / "webapp"


def test_no_webapp_modules_import_each_other_round_a_circle():
    assert cycles(graph(WEBAPP)) == []


def test_no_module_imports_a_higher_layer():
    assert upward(graph(WEBAPP)) == []


def test_every_noqa_f401_import_is_a_re_export():
    assert side_effect_imports(WEBAPP) == []


def test_no_module_outside_a_package_imports_its_internals():
    assert internals_imported(WEBAPP, exempt=WITHOUT_A_FACE) == []


def test_a_package_listed_without_a_face_still_lacks_one():
    """The list only shrinks: a package whose internals nobody imports any more leaves it."""
    lacking = {line.split("→ ")[1].split(".")[0] for line in internals_imported(WEBAPP)}
    assert WITHOUT_A_FACE <= lacking


def test_context_never_imports_the_agent():
    edges = graph(WEBAPP)
    assert not {(a, b) for a, targets in edges.items() for b in targets
                if a.startswith("context") and b.startswith("agent")}


def test_the_cli_module_does_not_import_the_context_commands():
    assert "context.cli" not in graph(WEBAPP)["cli"]


def tree(tmp_path: Path, files: dict[str, str]) -> Path:
    """A fake webapp/ with these modules, to run the same checks on."""
    root = tmp_path / "webapp"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_circle_through_a_lazy_import_is_caught(tmp_path):
    root = tree(tmp_path, {"runs/__init__.py": "", "runs/a.py": "from .b import x\n",
                           "runs/b.py": "def f():\n    from . import a\n"})
    assert cycles(graph(root)) == [["runs.a", "runs.b"]]


def test_an_import_only_for_type_checking_makes_no_circle(tmp_path):
    root = tree(tmp_path, {"runs/__init__.py": "", "runs/a.py": "from .b import x\n",
                           "runs/b.py": "if TYPE_CHECKING:\n    from .a import A\n"})
    assert cycles(graph(root)) == []


@pytest.mark.parametrize("text", ["from ..agent.prompts import system_prompt\n",
                                  "def f():\n    from webapp.agent import prompts\n",
                                  "import webapp.agent.prompts\n"])
def test_context_importing_the_agent_is_an_upward_import(tmp_path, text):
    root = tree(tmp_path, {"context/__init__.py": "", "context/assemble.py": text,
                           "agent/__init__.py": "", "agent/prompts.py": ""})
    assert upward(graph(root)) == ["context.assemble → agent.prompts (context → agent)"]


def test_a_package_init_may_wire_in_its_own_views_and_commands(tmp_path):
    root = tree(tmp_path, {"memories/__init__.py": "def init_app(app):\n"
                                                   "    from . import cli, views\n",
                           "memories/cli.py": "", "memories/panel/views.py": ""})
    assert upward(graph(root)) == []


FACED = {"memories/__init__.py": "from .store import remember\n", "memories/store.py": "",
         "memories/models.py": "", "memories/search/__init__.py": "",
         "memories/search/bm25.py": "from ..store import remember\n", "chat/__init__.py": ""}


@pytest.mark.parametrize("text", ["from ..memories.store import remember\n",
                                  "def f():\n    from webapp.memories.search import bm25\n",
                                  "import webapp.memories.store\n"])
def test_an_import_past_a_package_face_is_caught(tmp_path, text):
    root = tree(tmp_path, {**FACED, "chat/views.py": text})
    assert [line.split(" → ")[0] for line in internals_imported(root)] == ["chat.views"]


def test_the_face_the_tables_and_a_package_s_own_modules_pass(tmp_path):
    root = tree(tmp_path, {**FACED, "chat/views.py": "from ..memories import remember\n"
                                                     "from ..memories.models import Memory\n"})
    assert internals_imported(root) == []


def test_a_package_listed_without_a_face_is_not_checked(tmp_path):
    root = tree(tmp_path, {**FACED, "chat/views.py": "from ..memories.store import remember\n"})
    assert internals_imported(root, exempt={"memories"}) == []


def test_a_module_without_a_layer_is_named(tmp_path):
    root = tree(tmp_path, {"gadgets.py": ""})
    assert upward(graph(root)) == ["gadgets has no layer: add it to PLACES"]


@pytest.mark.parametrize("text", ["from . import tools  # noqa: F401  registers the tools\n",
                                  "import webapp.tools  # noqa: F401\n",
                                  "import json  # noqa: F401\n"])
def test_an_import_for_side_effects_is_caught(tmp_path, text):
    root = tree(tmp_path, {"shop/__init__.py": text, "shop/tools.py": "", "tools.py": ""})
    assert side_effect_imports(root) == ["webapp/shop/__init__.py:1"]


def test_a_re_export_passes(tmp_path):
    root = tree(tmp_path, {"llm/__init__.py": "from .base import Reply  # noqa: F401\n",
                           "llm/base.py": "class Reply: ...\n"})
    assert side_effect_imports(root) == []


def test_the_layers_are_listed_lowest_first():
    assert LAYERS[0] == "leaves" and LAYERS[-1] == "commands"
    assert [layer_of(m) for m in ("hooks", "llm.offline", "memories.models", "context.cli",
                                  "chat.views", "")] == [
        "leaves", "infrastructure", "leaves", "commands", "web", "commands"]
