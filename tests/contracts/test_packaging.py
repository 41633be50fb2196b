"""How the folders become the import package: pyproject.toml maps ``fsa2rnn`` to the repository root and lists every
subpackage (no setup.py); inside the package, imports of its own modules are relative, so that a tool reading the
tree alone sees the arrows between the folders."""

from __future__ import annotations

import importlib.util
import re

import tomllib
from docs_blocks import ROOT

FOLDERS = ("fsa", "compiler", "nn", "realize", "cli")
ABSOLUTE = re.compile(r"^\s*(from fsa2rnn[.\s]|import fsa2rnn\b)", re.M)


def listed_packages() -> list[str]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]


def folder_packages() -> list[str]:
    out = ["fsa2rnn"]
    for top in FOLDERS:
        inits = sorted((ROOT / top).rglob("__init__.py"))
        out += ["fsa2rnn." + ".".join(p.parent.relative_to(ROOT).parts) for p in inits]
    return out


def test_pyproject_lists_every_subpackage_and_no_other():
    assert sorted(listed_packages()) == sorted(folder_packages())
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"] == {"fsa2rnn": "."}


def test_there_is_no_setup_module():
    assert not (ROOT / "setup.py").exists()
    assert importlib.util.find_spec("fsa2rnn.setup") is None


def absolute_imports(root=ROOT) -> list[str]:
    """Every line inside the package folders that imports a module of the package by its absolute name."""
    bad = []
    for path in [root / "__init__.py", *(p for top in FOLDERS for p in sorted((root / top).rglob("*.py")))]:
        for m in ABSOLUTE.finditer(path.read_text()):
            line = path.read_text()[: m.start()].count("\n") + 1
            bad.append(f"{path.relative_to(root)}:{line}")
    return bad


def test_imports_inside_the_package_are_relative():
    assert absolute_imports() == []


def test_a_planted_absolute_import_is_reported(tmp_path):
    (tmp_path / "fsa").mkdir()
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "fsa" / "x.py").write_text("from .y import z\n\ndef f():\n    from fsa2rnn.nn import load_model\n")
    assert absolute_imports(tmp_path) == ["fsa/x.py:4"]
