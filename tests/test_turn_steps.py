"""run_turn reads as its steps: it and every function of the agent loop fit on a screen, and the
request it sends comes from the one planner."""
import ast
from pathlib import Path

import pytest

AGENT = Path(__file__).resolve().parent.parent / "webapp" / "agent"
SCREEN = 45  # lines: what one editor window shows


@pytest.mark.parametrize("module", ["loop.py", "model_call.py"])
def test_every_step_of_a_turn_fits_on_a_screen(module):
    tree = ast.parse((AGENT / module).read_text())
    long = {node.name: node.end_lineno - node.lineno + 1 for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > SCREEN}
    assert not long, long


def test_the_loop_plans_only_through_the_planner():
    source = (AGENT / "loop.py").read_text() + (AGENT / "model_call.py").read_text()
    assert "plan_request(" in source
    assert "assemble(" not in source and "fit(" not in source.replace("_fit(", "")
