"""Imports flow one way: the provider layer needs nothing above it, the CLI not its plug-ins."""
import ast
from pathlib import Path

WEBAPP = Path(__file__).resolve().parent.parent / "webapp"


def imported(path: Path) -> set[str]:
    """Modules a file imports, as dotted names relative to webapp/ ('memory.summarizer')."""
    names = set()
    package = path.relative_to(WEBAPP).parent.parts
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = list(package[:len(package) - node.level + 1]) if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            if node.level == 0:
                module = (node.module or "").removeprefix("webapp.")
            names |= {module} | {f"{module}.{a.name}".strip(".") for a in node.names}
    return names


def test_the_provider_layer_imports_nothing_above_it():
    for path in (WEBAPP / "llm").glob("*.py"):
        above = {n for n in imported(path) if n.split(".")[0] in
                 {"memory", "agent", "chat", "viewer", "shop", "storage", "cli"}
                 and not n.startswith("shop.order_numbers")}  # a leaf: it imports nothing
        assert not above, f"{path.name} imports {sorted(above)}"


def test_the_cli_module_does_not_import_the_context_commands():
    assert not {n for n in imported(WEBAPP / "cli.py") if n.startswith("memory.context_cli")}


def test_the_order_number_pattern_is_a_leaf():
    assert not {n for n in imported(WEBAPP / "shop" / "order_numbers.py") if n}
