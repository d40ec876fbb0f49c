"""Every link a reader follows resolves: the README's and docs' relative links and anchors, and the
files that docstrings and comments point to."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
POINTER = re.compile(r"\b((?:docs|bench|scripts|tests)/[\w./-]+\.(?:md|py|sh|json|txt))\b")


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation gone, spaces as hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(h) for h in re.findall(r"^#+\s+(.*)$", page.read_text(), re.M)}


def broken_links(pages: list[Path]) -> list[str]:
    """'page: target' for each relative link whose file or heading does not exist."""
    broken = []
    for page in pages:
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target):
                continue  # http:, https:, mailto:
            path, _, anchor = target.partition("#")
            linked = (page.parent / path) if path else page
            if not linked.exists() or (anchor and linked.suffix == ".md" and anchor not in anchors(linked)):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    return broken


def broken_pointers(sources: list[Path]) -> list[str]:
    """'module: path' for each repository file a docstring or comment names that is not there."""
    return [f"{source.relative_to(ROOT)}: {ref}" for source in sources
            for ref in POINTER.findall(source.read_text()) if not (ROOT / ref).exists()]


def test_every_relative_link_in_the_readme_and_docs_resolves():
    assert broken_links(PAGES) == []


def test_every_file_a_module_points_to_exists():
    assert broken_pointers(sorted((ROOT / "webapp").rglob("*.py"))) == []


def test_the_checker_finds_a_missing_page_a_missing_heading_and_a_missing_file(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    (tmp_path / "README.md").write_text("# Nimbus\n## Set up\n[a](#set-up) [b](docs/gone.md) [c](#nowhere)"
                                        " [d](https://example.com)\n")
    (tmp_path / "mod.py").write_text('"""See docs/gone.md and README.md."""\n')
    assert broken_links([tmp_path / "README.md"]) == ["README.md: docs/gone.md", "README.md: #nowhere"]
    assert broken_pointers([tmp_path / "mod.py"]) == ["mod.py: docs/gone.md"]
