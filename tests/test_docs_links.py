"""Every link a reader follows resolves: the README's, the changelog's and docs' relative links and
anchors, the files that docstrings and comments point to, and the sections they name."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
POINTER = re.compile(r"\b((?:docs|bench|scripts|tests)/[\w./-]+\.(?:md|py|sh|json|txt))\b")
# README "Local models", docs/operations.md "Local models" (a comment may wrap before the quote)
SECTION = re.compile(r'\b(README(?:\.md)?|docs/[\w-]+\.md)\s+(?:#\s*)?["“]([^"”\n]+)["”]')


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation gone, spaces as hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def headings(page: Path) -> list[str]:
    return re.findall(r"^#+\s+(.*)$", page.read_text(), re.M)


def anchors(page: Path) -> set[str]:
    return {slug(h) for h in headings(page)}


def sources() -> list[Path]:
    """The code and templates whose docstrings, comments and words point readers at files and
    sections (this test's own examples of broken ones aside)."""
    return sorted(path for folder in ("webapp", "scripts", "bench", "tests", "templates")
                  for path in (ROOT / folder).rglob("*")
                  if path.suffix in (".py", ".sh", ".html") and path != Path(__file__).resolve())


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


def broken_sections(sources: list[Path]) -> list[str]:
    """'module: page "Section"' for each section a module names that its page does not have."""
    broken = []
    for source in sources:
        for page, section in SECTION.findall(source.read_text()):
            path = ROOT / (page if page.endswith(".md") else page + ".md")
            if not path.exists() or slug(section) not in anchors(path):
                broken.append(f'{source.relative_to(ROOT)}: {page} "{section}"')
    return broken


def test_every_relative_link_in_the_readme_changelog_and_docs_resolves():
    assert broken_links(PAGES) == []


def test_every_new_reference_page_is_checked():
    names = {page.name for page in PAGES}
    assert {"configuration.md", "operations.md", "cli.md", "architecture.md", "CHANGELOG.md"} <= names


def test_every_file_a_module_points_to_exists():
    assert broken_pointers(sources()) == []


def test_every_section_a_module_points_to_exists():
    assert broken_sections(sources()) == []


def test_the_checker_finds_a_missing_page_a_missing_heading_and_a_missing_file(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    (tmp_path / "README.md").write_text("# Nimbus\n## Set up\n[a](#set-up) [b](docs/gone.md) [c](#nowhere)"
                                        " [d](https://example.com)\n")
    (tmp_path / "mod.py").write_text('"""See docs/gone.md and README.md."""\n')
    assert broken_links([tmp_path / "README.md"]) == ["README.md: docs/gone.md", "README.md: #nowhere"]
    assert broken_pointers([tmp_path / "mod.py"]) == ["mod.py: docs/gone.md"]


def test_the_checker_finds_a_section_the_readme_no_longer_has(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    (tmp_path / "README.md").write_text("# Nimbus\n## Set up\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "operations.md").write_text("# Operations\n## Local models\n")
    (tmp_path / "mod.py").write_text('# see README "Set up", README "Local models" and\n'
                                     '# docs/operations.md\n# "Local models", docs/operations.md "Upgrading"\n')
    (tmp_path / "page.html").write_text("the provider settings (README “Local models”)")
    assert broken_sections([tmp_path / "mod.py", tmp_path / "page.html"]) == [
        'mod.py: README "Local models"', 'mod.py: docs/operations.md "Upgrading"',
        'page.html: README "Local models"']


def test_every_file_the_where_is_x_decided_table_names_exists():
    page = (ROOT / "docs" / "architecture.md").read_text()
    table = page.split("## Where is X decided?")[1].split("\n## ")[0]
    named = re.findall(r"`([\w/]+\.py)`", table)
    assert named and [name for name in named if not (ROOT / "webapp" / name).exists()] == []
