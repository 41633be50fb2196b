"""The dependency direction of docs/architecture.md, checked on the source and shown able to fail.

Packages and what each may import (any import, at module level or inside a function; relative imports resolved):

    fsa → nothing; compiler → fsa; runtime → fsa, compiler; nn → fsa, compiler, runtime; realize → those and nn,
    but not the trainer (nn/train); trainer (nn/train) → those and realize; cli → all.

Also: no import of another package's private ``_name``; torch and triton only in nn (with the trainer), realize and
cli's torch engine; no import cycle at module level except the named ones in ALLOWED_CYCLES. fsa, compiler and
runtime run without torch, and so does `fsa2rnn run` at float64 (subprocess checks). Each kind of violation is
planted in a scratch copy of the package and the checks must report it.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("fsa", "compiler", "runtime", "nn", "trainer", "realize", "cli")
ALLOWED: dict[str, set[str]] = {
    "fsa": set(),
    "compiler": {"fsa"},
    "runtime": {"fsa", "compiler"},
    "nn": {"fsa", "compiler", "runtime"},
    "realize": {"fsa", "compiler", "runtime", "nn"},
    "trainer": {"fsa", "compiler", "runtime", "nn", "realize"},
    "cli": set(PACKAGES),
}
#: packages that may import torch / triton
TORCH_PACKAGES = {"nn", "trainer", "realize", "cli"}
#: package-level edges that break the direction but are still there, each with the change that removes it
TEMPORARY_EDGES: set[tuple[str, str]] = set()  # edges outside ALLOWED kept for a named, short-lived reason
#: module-level import cycles that are allowed (none today): frozensets of module names
ALLOWED_CYCLES: set[frozenset[str]] = set()


def _package(module: str) -> str | None:
    """The layering package of a module name fsa2rnn.x.y…, or None outside the layered packages."""
    parts = module.split(".")
    if parts[0] != "fsa2rnn" or len(parts) < 2:
        return None
    if parts[1] == "nn" and len(parts) > 2 and parts[2] == "train":
        return "trainer"
    return parts[1] if parts[1] in PACKAGES else None


def _module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = ["fsa2rnn", *rel.parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(root: Path, path: Path) -> list[tuple[str, list[str], bool, int]]:
    """(module imported, names imported from it, at module level?, line) of every import in a file, relative
    imports resolved."""
    tree = ast.parse(path.read_text())
    here = _module_name(root, path)
    is_pkg = path.name == "__init__.py"
    top = {id(n) for n in tree.body}
    for n in tree.body:  # imports under a module-level `if`/`try` are module level too
        if isinstance(n, (ast.If, ast.Try)):
            top |= {id(m) for m in ast.walk(n)}
    out = []
    for node in ast.walk(tree):
        level_ok = id(node) in top
        if isinstance(node, ast.Import):
            out += [(alias.name, [], level_ok, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".") if is_pkg else here.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names = [a.name for a in node.names]
            base_dir = root / Path(*module.split(".")[1:])
            subs = [n for n in names if (base_dir / n).is_dir() or (base_dir / f"{n}.py").is_file()]
            # `from pkg import submodule` depends on the submodule (the package is being imported already)
            out.append((module, names, level_ok and len(subs) < len(names), node.lineno))
            out += [(f"{module}.{n}", [], level_ok, node.lineno) for n in subs]
    return out


def layering_violations(root: Path) -> list[str]:
    """Every breach of the rules in the module docstring, as 'file:line: what'."""
    bad: list[str] = []
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] not in {"fsa", "compiler", "runtime", "nn", "realize", "cli"}:
            continue
        here = _module_name(root, path)
        pkg = _package(here)
        for module, names, module_level, line in _imports(root, path):
            where = f"{rel}:{line}"
            if module.split(".")[0] in ("torch", "triton") and pkg not in TORCH_PACKAGES:
                bad.append(f"{where}: {pkg} imports {module}")
            target = _package(module)
            if target is None:
                continue
            if target != pkg and target not in ALLOWED[pkg] and (pkg, target) not in TEMPORARY_EDGES:
                bad.append(f"{where}: {pkg} imports {module} ({target})")
            if target != pkg:
                private = [n for n in names if n.startswith("_") and not n.startswith("__")]
                private += [p for p in module.split(".") if p.startswith("_") and not p.startswith("__")]
                if private:
                    bad.append(f"{where}: {pkg} imports private {', '.join(private)} of {module}")
            if module_level:
                graph.setdefault(here, set()).add(module)
    for cycle in _cycles(graph):
        if frozenset(cycle) not in ALLOWED_CYCLES:
            bad.append(f"import cycle at module level: {' → '.join(sorted(cycle))}")
    return bad


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def test_the_package_follows_the_dependency_direction():
    assert layering_violations(ROOT) == []


def _scratch(tmp_path: Path) -> Path:
    dst = tmp_path / "fsa2rnn"
    for d in ("fsa", "compiler", "runtime", "nn", "realize", "cli"):
        shutil.copytree(ROOT / d, dst / d, ignore=shutil.ignore_patterns("__pycache__", "*.md", "*.png"))
    return dst


PLANTED = [
    ("fsa/dot.py", "from fsa2rnn.nn import load_model", "fsa imports fsa2rnn.nn"),
    ("compiler/gh.py", "from fsa2rnn.runtime.lookup import KeyLookup", "compiler imports fsa2rnn.runtime.lookup"),
    ("nn/readout.py", "from fsa2rnn.realize.verify import verify_model", "nn imports fsa2rnn.realize.verify"),
    ("compiler/gh.py", "from ..runtime import lookup", "compiler imports fsa2rnn.runtime"),  # relative
    ("realize/verify.py", "from fsa2rnn.compiler.keys import _secret", "private _secret"),
    ("compiler/gh.py", "import torch", "compiler imports torch"),
    ("runtime/lrnn.py", "from fsa2rnn.nn.train import trainer", "runtime imports fsa2rnn.nn.train"),
    ("compiler/keys.py", "from fsa2rnn.compiler import program", "import cycle"),  # program imports keys
]


@pytest.mark.parametrize("path, line, message", PLANTED, ids=[p[2] for p in PLANTED])
def test_a_planted_violation_is_reported(tmp_path, path, line, message):
    root = _scratch(tmp_path)
    target = root / path
    text = target.read_text()
    head, sep, rest = text.partition("\nfrom __future__ import annotations\n")
    target.write_text(head + sep + line + "\n" + rest if sep else line + "\n" + text)
    found = layering_violations(root)
    assert any(message in v for v in found), found


_WITHOUT_TORCH = """
import json, sys
sys.modules["torch"] = None  # any import of torch now raises ImportError
sys.modules["triton"] = None
from click.testing import CliRunner
from fsa2rnn.cli.main import main
from fsa2rnn.compiler import compile_affine, compile_diagonal, compile_householder, compile_nfsm
from fsa2rnn.compiler.exact import exact_executor
from fsa2rnn.fsa import resolve_spec

specs = {compile_householder: "S4", compile_diagonal: "Z6", compile_nfsm: "T3", compile_affine: "regex:(a|b)*ab"}
models = [compile_(resolve_spec(spec)) for compile_, spec in specs.items()]
exact = [exact_executor(m).predict_states([[0, 0]]).shape[1] for m in models]
codes = [CliRunner().invoke(main, [cmd, "T3", "--json"]).exit_code for cmd in ("show", "analyze", "decompose")]
loaded = sorted(m for m in sys.modules if m.startswith(("fsa2rnn.nn", "fsa2rnn.realize")))
verified = [m.summary["verified"] for m in models]
print(json.dumps({"verified": verified, "exact": exact, "codes": codes, "loaded": loaded}))
"""


def test_compilers_and_symbolic_commands_run_without_torch():
    res = subprocess.run([sys.executable, "-c", _WITHOUT_TORCH], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out == {"verified": [True] * 4, "exact": [2] * 4, "codes": [0, 0, 0], "loaded": []}


_RUN_WITHOUT_TORCH = """
import json, sys
sys.modules["torch"] = None
sys.modules["triton"] = None
from click.testing import CliRunner
from fsa2rnn.cli.main import main
from fsa2rnn.compiler import compile_diagonal, compile_householder, compile_nfsm
from fsa2rnn.fsa import resolve_spec

out = []
for i, (compile_, spec) in enumerate([(compile_householder, "T3"), (compile_diagonal, "Z6"), (compile_nfsm, "T3")]):
    compile_(resolve_spec(spec)).save(f"{sys.argv[1]}/m{i}.safetensors")
    symbol = "cycle" if spec == "T3" else "1"
    res = CliRunner().invoke(main, ["run", f"{sys.argv[1]}/m{i}.safetensors"], input=json.dumps([symbol] * 3) + "\\n")
    out.append([res.exit_code, len(json.loads(res.output))])
loaded = sorted(m for m in sys.modules if m.startswith(("fsa2rnn.nn", "fsa2rnn.realize")))
print(json.dumps({"runs": out, "loaded": loaded}))
"""


def test_run_at_float64_never_imports_torch(tmp_path):
    res = subprocess.run(
        [sys.executable, "-c", _RUN_WITHOUT_TORCH, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out == {"runs": [[0, 3]] * 3, "loaded": []}
