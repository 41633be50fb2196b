"""The docs stand alone: README.md, docs/*.md and the folders' READMEs refer to no file outside the repository —
no design notes a user never sees, no sibling checkout — and every relative markdown link reaches a file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CODE_FOLDERS = ("fsa", "compiler", "nn", "realize", "cli", "examples", "benchmarks", "tests")
#: names of notes that live outside the repository, and paths that leave it
OUTSIDE = re.compile(r"THEORY\.md|DESIGN\.md|STYLE\.md|\.\./shared|/work/|shared/papers")
#: [text](target) and ![alt](target); the target ends at whitespace or the closing parenthesis
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _markdown_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for folder in CODE_FOLDERS:
        files += sorted(p for p in (ROOT / folder).rglob("*.md") if ".venv" not in p.parts)
    return files


def _code_files() -> list[Path]:
    return [p for folder in CODE_FOLDERS for p in sorted((ROOT / folder).rglob("*.py")) if p.name != "test_docs.py"]


MARKDOWN = _markdown_files()


def test_the_docs_exist():
    names = {p.relative_to(ROOT).as_posix() for p in MARKDOWN}
    assert {"README.md", "docs/theory.md", "docs/architecture.md", "docs/holonomy.md"} <= names


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_markdown_refers_to_nothing_outside_the_repository(path):
    text = path.read_text()
    hits = sorted({m.group(0) for m in OUTSIDE.finditer(text)})
    assert not hits, f"{path.relative_to(ROOT)} refers outside the repository: {hits}"
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL (https:, mailto:) or an anchor on the same page
        resolved = (path.parent / target.split("#", 1)[0]).resolve()
        assert resolved.is_relative_to(ROOT), f"{path.relative_to(ROOT)}: link {target!r} leaves the repository"
        assert resolved.exists(), f"{path.relative_to(ROOT)}: link {target!r} does not resolve to a file"


def test_code_comments_cite_the_repository_docs():
    """Docstrings and comments cite docs/theory.md and docs/architecture.md, not notes outside the repository."""
    bad = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in _code_files()
        for i, line in enumerate(p.read_text().splitlines(), start=1)
        if OUTSIDE.search(line)
    ]
    assert not bad, f"references outside the repository: {bad}"


def test_the_link_checker_sees_links():
    """The link pattern finds the targets it must check (a checker that matches nothing passes everything)."""
    sample = 'see [a](docs/a.md), ![p](docs/p.png "title") and [b](<x.md>) or [c](https://e.org) [d](#top)'
    assert LINK.findall(sample) == ["docs/a.md", "docs/p.png", "x.md", "https://e.org", "#top"]
    readme_links = LINK.findall((ROOT / "README.md").read_text())
    assert "docs/theory.md" in readme_links and "docs/architecture.md" in readme_links


@pytest.mark.slow
def test_docs_site_builds_strict(tmp_path):
    """`make docs`: MkDocs with --strict (a broken link, a missing page or an unresolved API reference fails)."""
    import os
    import subprocess
    import sys

    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "site" / "api" / "realize" / "index.html").is_file()


def test_readme_is_short_and_points_into_the_docs():
    """README.md stays an entry page (≤ 300 lines); the reference lives in docs/, which it links."""
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 300
    links = LINK.findall(text)
    assert "docs/index.md" in links and sum(link.startswith("docs/guide/") for link in links) >= 8


def test_make_setup_installs_the_optional_extras_and_ci_builds_the_docs():
    """CI (.ci/run) builds the docs strictly and `make setup` installs the docs and L* extras, so their tests run."""
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r'pip install -q -e "\.\[[^\]]*\blstar\b[^\]]*\]"', makefile)
    assert re.search(r'pip install -q -e "\.\[[^\]]*\bdocs\b[^\]]*\]"', makefile)
    assert "mkdocs build --strict" in makefile and re.search(r"^shell:", makefile, re.M)
    assert "make docs" in (ROOT / ".ci" / "run").read_text()

def test_every_docs_page_is_in_the_site_navigation():
    """docs/hooks.py lists a page the nav leaves out under "More pages"; the guide pages are in the nav itself."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    nav = ["index.md", {"Guide": ["guide/a.md", {"Deeper": ["guide/b.md"]}]}]
    assert hooks.nav_pages(nav) == {"index.md", "guide/a.md", "guide/b.md"}
    yaml = pytest.importorskip("yaml")
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    unlisted = hooks.unlisted_pages(ROOT / "docs", nav)
    assert not [p for p in unlisted if p.startswith(("guide/", "api/"))], unlisted
