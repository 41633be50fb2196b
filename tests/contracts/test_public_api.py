"""The public API is what each package exports at its top: every ``from fsa2rnn… import …`` in the README, the docs'
Python blocks and the examples names a package (a folder with ``__init__.py``), never a module inside one, and each
name it imports is there — the object, not a submodule that shares its name (fsa2rnn.fsa.lazy.exports_win)."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys

import pytest
from docs_blocks import ROOT, pages, read_blocks


def deep_imports(source: str, where: str) -> tuple[list[tuple[str, str, str]], list[str]]:
    """(every (module, name, where) imported from fsa2rnn…, the lines that are not Python and were skipped)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return [], [where]
    found = []
    for node in ast.walk(tree):
        ours = isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "fsa2rnn"
        if ours:
            found += [(node.module, alias.name, f"{where}:{node.lineno}") for alias in node.names]
    return found, []


def python_of(code: str) -> str:
    """A block's Python: an interactive session's ``>>>`` and ``...`` lines without their prompts, else the block."""
    if not any(line.startswith(">>> ") for line in code.splitlines()):
        return code
    return "\n".join(line[4:] for line in code.splitlines() if line.startswith((">>> ", "... ")))


def used_names() -> list[tuple[str, str, str]]:
    out = []
    for page in pages():
        for block in read_blocks(page):
            if block.lang in ("python", "py", "pycon"):
                out += deep_imports(python_of(block.code), block.where)[0]
    for path in sorted((ROOT / "examples").glob("*.py")):
        out += deep_imports(path.read_text(), path.relative_to(ROOT).as_posix())[0]
    return out


def not_from_a_package(imports: list[tuple[str, str, str]]) -> list[str]:
    """The imports that name a module rather than a package's top."""
    bad = []
    for module, name, where in imports:
        mod = importlib.import_module(module)
        if not hasattr(mod, "__path__"):
            bad.append(f"{where}: from {module} import {name} (a module; import it from its package's top)")
    return bad


def test_the_docs_and_examples_import_from_package_tops():
    imports = used_names()
    assert len(imports) >= 40  # the collector reads the blocks (a broken reader finds nothing)
    assert not_from_a_package(imports) == []


def test_a_deep_import_is_reported():
    planted, _ = deep_imports("from fsa2rnn.realize.extract import extract\nfrom fsa2rnn.fsa import Automaton\n", "x")
    assert not_from_a_package(planted) == ["x:1: from fsa2rnn.realize.extract import extract (a module; import it "
                                           "from its package's top)"]  # fmt: skip


def test_every_used_name_is_the_object_also_after_every_module_is_imported():
    """In a fresh interpreter: import every module of the package first (so each submodule has been bound on its
    package), then every name the docs and examples use must be there and must not be a module."""
    pairs = sorted({(m, n) for m, n, _ in used_names()})
    script = f"""
import importlib, json, pkgutil, types, fsa2rnn
for info in pkgutil.walk_packages(fsa2rnn.__path__, "fsa2rnn."):
    if info.name.endswith("__main__") or ".ops." in info.name and "triton" in info.name:
        continue
    try:
        importlib.import_module(info.name)
    except ImportError:
        pass  # an optional extra (fla, triton on CPU, …)
bad = []
for module, name in {pairs!r}:
    obj = getattr(importlib.import_module(module), name, None)
    if obj is None or isinstance(obj, types.ModuleType):
        bad.append(f"{{module}}.{{name}}: {{type(obj).__name__}}")
print(json.dumps(bad))
"""
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout.strip().splitlines()[-1]) == []


SHARED = [("fsa2rnn.realize", "extract"), ("fsa2rnn.realize", "compare"), ("fsa2rnn.fsa", "classify")]


@pytest.mark.parametrize("package, name", [*SHARED, ("fsa2rnn.realize", "verify_model")])
def test_a_name_that_is_also_a_module_is_the_function(package, name):
    importlib.import_module(f"{package}.{'verify' if name == 'verify_model' else name}")  # bind the submodule
    obj = getattr(importlib.import_module(package), name)
    assert callable(obj) and not isinstance(obj, type(sys))
