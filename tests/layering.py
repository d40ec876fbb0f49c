"""The import rules of webapp/, read from the source (AST), so a fake tree can be checked too."""
import ast
from fnmatch import fnmatch
from pathlib import Path

# The layers, lowest first: a module imports from its own layer or below, never above.
LAYERS = ["leaves", "infrastructure", "context", "agent", "memories", "domain", "runs", "web",
          "commands"]
# A module's role places it first: tables are leaves, pages are web, commands are commands.
ROLES = {"*.models": "leaves", "*.views": "web", "*_views": "web", "*.cli": "commands"}
# Then its package (or the module itself, at the top of webapp/).
PLACES = {
    "hooks": "leaves", "config": "leaves", "extensions": "leaves", "models": "leaves",
    "shop.order_numbers": "leaves",  # the one order-number pattern: the offline model reads it
    "accounts.emails": "leaves",  # one spelling per address, and its user: every command's --user
    "plurals": "leaves",  # counts in words, for every page, command and log line
    "llm": "infrastructure", "local_time": "infrastructure", "locks": "infrastructure",
    "security": "infrastructure", "tracing": "infrastructure", "audit": "infrastructure", "logs": "infrastructure",
    "jobs": "infrastructure", "storage": "infrastructure", "titles": "infrastructure",
    "pacing": "infrastructure",  # background batches rest while replies are being written
    "sqlite_waits": "leaves",  # how a SQLite connection waits for its lock: the database's set-up
    "context": "context", "agent": "agent", "memories": "memories",
    "shop": "domain", "transfer": "domain", "accounts": "domain", "runs": "runs",
    "branches": "domain",  # a conversation's versions, swapped in and out of its turns
    "access": "web", "chat": "web", "viewer": "web", "staff": "web",
    "cli": "commands", "cli_helpers": "commands", "database": "commands", "worker": "commands",
    "": "commands",  # webapp/__init__.py: create_app wires everything
}
# Packages whose modules others still import directly, not through the package's __init__: each
# is to get a face (memories/__init__.py shows one) and leave this list, which only shrinks.
# Empty: every package has a face; a new package starts with one.
WITHOUT_A_FACE: set[str] = set()


def modules(root: Path) -> dict[str, Path]:
    """Every module under root, by dotted name relative to it ('' is root/__init__.py)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def type_checking_only(tree) -> set[int]:
    """Ids of import nodes under `if TYPE_CHECKING:`: annotations only, never run."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            skipped |= {id(n) for child in node.body for n in ast.walk(child)}
    return skipped


def imports(root: Path, known: dict, name: str, path: Path) -> list[tuple[str, ast.AST, bool]]:
    """(module imported, import node, whether the node names that module) for every import of a
    webapp module in the file, those inside functions included. `from pkg import name` counts
    as importing pkg.name when that is a module, else pkg; importing a.b does not count as
    importing a's __init__."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    package = [p for p in package if p]
    tree = ast.parse(path.read_text())
    skipped, found = type_checking_only(tree), []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").split(".")[0] == root.name:
                module = node.module.removeprefix(root.name).lstrip(".")
            else:
                continue
            for alias in node.names:
                full = f"{module}.{alias.name}".strip(".")
                found.append((full, node, True) if full in known else (module, node, False))
        elif isinstance(node, ast.Import):
            found += [(a.name.removeprefix(root.name).lstrip("."), node, True)
                      for a in node.names if a.name.split(".")[0] == root.name]
    return [f for f in found if f[0] != name and f[0] in known]


def graph(root: Path) -> dict[str, set[str]]:
    known = modules(root)
    return {name: {t for t, _, _ in imports(root, known, name, path)}
            for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other, directly or round a circle (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def layer_of(name: str) -> str | None:
    for pattern, layer in ROLES.items():
        if fnmatch(name, pattern):
            return layer
    return PLACES.get(name, PLACES.get(name.split(".")[0]))  # the module's own place first


def upward(edges: dict[str, set[str]]) -> list[str]:
    """'a → b (low → high)' for every import of a higher layer; a module with no layer too."""
    rank = {layer: n for n, layer in enumerate(LAYERS)}
    found = [f"{name} has no layer: add it to PLACES" for name in edges if layer_of(name) is None]
    for name, targets in sorted(edges.items()):
        for target in sorted(targets):
            if name and target.startswith(f"{name}."):
                continue  # a package's __init__ wires its own modules in (init_app)
            low, high = layer_of(name), layer_of(target)
            if low and high and rank[high] > rank[low]:
                found.append(f"{name or 'webapp'} → {target} ({low} → {high})")
    return found


def side_effect_imports(root: Path) -> list[str]:
    """Lines marked `noqa: F401` that import a module for what importing it does (a bare
    `import x`, or `from pkg import module`), instead of re-exporting names."""
    known, found = modules(root), []
    for name, path in known.items():
        lines = path.read_text().splitlines()
        listed = {node.lineno for _, node, names in imports(root, known, name, path) if names}
        for node in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) \
                    or "noqa: F401" not in lines[node.lineno - 1]:
                continue
            if isinstance(node, ast.Import) or node.lineno in listed:
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return found


def internals_imported(root: Path, exempt=frozenset()) -> list[str]:
    """'a → pkg.module' for each import, by a module outside a package of webapp/, of a module
    inside it: others import the package's face (its __init__) only. Leaves are public (a
    package's tables, the order-number pattern): every layer may read them."""
    known = modules(root)
    packages = {name for name, path in known.items() if name and "." not in name
                and path.name == "__init__.py"}
    found = []
    for name, path in known.items():
        for target in sorted({t for t, _, _ in imports(root, known, name, path)}):
            package = target.split(".")[0]
            if package in packages and target != package and package not in exempt \
                    and name.split(".")[0] != package and layer_of(target) != "leaves":
                found.append(f"{name or 'webapp'} → {target}")
    return found
