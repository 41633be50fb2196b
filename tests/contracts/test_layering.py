"""The dependency direction of docs/architecture.md, checked on the source and shown able to fail.

The rules are the folders; what each may import (any import, at module level or inside a function; relative imports
resolved):

    fsa → nothing; compiler → fsa; nn → fsa, compiler; realize → those and nn; cli → all.

A package's ``__main__.py`` is a command-line entry point (``python -m fsa2rnn.cli`` runs ``fsa2rnn``):
it may import cli, and no module imports it. Also: no import of another package's private ``_name``; torch and
triton only in nn, realize and cli; no import cycle, counting the imports inside functions too; and an import
inside a function only where it defers a library that is slow to import or optional — torch, triton, matplotlib,
AALpy, sympy, scipy, directly or through a module of the package that loads one the importing module does not —
or where :data:`LAZY` names it with its reason. fsa and compiler run without torch, and so does
`fsa2rnn run` at float64 (subprocess checks). The compile targets name their members of higher layers as
"module:attr" strings (compiler/registry.py): each must point into the layer its role allows, and no compiler
module resolves one. Each kind of violation is planted in a scratch copy of the package
and the checks must report it.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("fsa", "compiler", "nn", "realize", "cli")
ALLOWED: dict[str, set[str]] = {
    "fsa": set(),
    "compiler": {"fsa"},
    "nn": {"fsa", "compiler"},
    "realize": {"fsa", "compiler", "nn"},
    "cli": set(FOLDERS),
}
#: folders that may import torch / triton
TORCH_FOLDERS = {"nn", "realize", "cli"}
#: libraries an import inside a function may defer: slow to import (seconds for torch, a second for scipy and sympy,
#: matplotlib), or optional extras (triton, AALpy)
DEFERRED = ("torch", "triton", "matplotlib", "aalpy", "sympy", "scipy")
#: the other imports inside functions, each with its reason: (file, module imported) → why
LAZY: dict[tuple[str, str], str] = {
    ("fsa/progress.py", "tqdm"): "a bar is drawn only on a terminal; every command imports the progress module",
    ("fsa/relabel.py", "networkx"): "0.3 s at start-up; only the isomorphism test of two automata needs it",
    ("fsa/relabel.py", "networkx.algorithms.isomorphism"): "as networkx",
    ("fsa/dfa_interop.py", "automata.fa.dfa"): "0.4 s at start-up (automata-lib imports networkx); only the "
    "conversion to automata-lib's DFA needs it",
    ("fsa/library/regex.py", "automata.base.exceptions"): "as automata.fa.dfa: only regex:PATTERN specs need it",
    ("fsa/library/regex.py", "automata.fa.nfa"): "as automata.fa.dfa: only regex:PATTERN specs need it",
    ("cli/errors.py", "numpy"): "the error handler of every command; numpy (0.3 s) only to recognise its errors",
    ("nn/ops/delta_product/__init__.py", "fla.ops.delta_rule"): "optional extra (flash-linear-attention, GPU only)",
    ("nn/ops/delta_product/__init__.py", "fla.ops.gated_delta_product"): "as fla.ops.delta_rule",
}
#: module-level import cycles that are allowed (none): frozensets of module names
ALLOWED_CYCLES: set[frozenset[str]] = set()


def _folder(module: str) -> str | None:
    """The folder of a module name fsa2rnn.x.y…, or None outside the layered folders."""
    parts = module.split(".")
    if parts[0] != "fsa2rnn" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in FOLDERS else None


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
    typing_only: set[int] = set()
    for n in tree.body:  # imports under a module-level `if`/`try` are module level too
        if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test):  # never run: not a dependency
            typing_only |= {id(m) for m in ast.walk(n)}
        elif isinstance(n, (ast.If, ast.Try)):
            top |= {id(m) for m in ast.walk(n)}
    out = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
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
            if len(subs) < len(names):
                out.append((module, [n for n in names if n not in subs], level_ok, node.lineno))
            out += [(f"{module}.{n}", [], level_ok, node.lineno) for n in subs]
    return out


def _lazy_names(path: Path) -> dict[str, str]:
    """The lazy attributes of a package (``__getattr__ = lazy_getattr(__name__, {name: (module, attr)})``, the one
    mechanism, fsa/lazy.py): name → module, relative to the package as lazy_getattr reads it."""
    out: dict[str, str] = {}
    body = ast.parse(path.read_text()).body
    assigned = {  # module-level NAME = {...}: a table may be named before it is passed
        t.id: node.value
        for node in body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    for node in body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", None) == "lazy_getattr"
            and len(node.value.args) == 2
        ):
            arg = node.value.args[1]
            table = ast.literal_eval(assigned[arg.id] if isinstance(arg, ast.Name) else arg)
            out.update({name: module for name, (module, _) in table.items()})
    return out


def _tree(root: Path) -> dict[str, tuple[Path, list[tuple[str, list[str], bool, int, list[str]]]]]:
    """module name → (its file relative to root, its imports) for every module of the layered folders; each import
    as in :func:`_imports` and the modules it loads: the one named, and for a name of a package's lazy table the
    module that holds it."""
    out, lazy = {}, {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] in FOLDERS:
            here = _module_name(root, path)
            out[here] = (rel, _imports(root, path))
            if path.name == "__init__.py":
                lazy[here] = {n: f"{here}.{m}" if not m.startswith(".") else f"{here.rsplit('.', 1)[0]}{m}"
                              for n, m in _lazy_names(path).items()}  # fmt: skip
    return {
        here: (rel, [(m, names, level, line, [m] + [lazy[m][n] for n in names if n in lazy.get(m, {})])
                     for m, names, level, line in imports])  # fmt: skip
        for here, (rel, imports) in out.items()
    }


def _resolve(module: str, modules: dict) -> str:
    """The module of the package that ``module`` names (``pkg.mod.attr`` → ``pkg.mod``)."""
    while module not in modules and "." in module and module.startswith("fsa2rnn."):
        module = module.rsplit(".", 1)[0]
    return module


def _loads(modules: dict) -> dict[str, set[str]]:
    """module → the deferred libraries (:data:`DEFERRED`) that importing it loads, through its module-level imports
    and those of the packages above it."""
    direct: dict[str, set[str]] = {}
    for here, (_, imports) in modules.items():
        parts = here.split(".")
        deps = {".".join(parts[:i]) for i in range(2, len(parts))}
        deps |= {_resolve(t, modules) for _, _, level, _, targets in imports if level for t in targets}
        direct[here] = deps
    out: dict[str, set[str]] = {}
    for start in modules:
        seen, stack, libs = set(), [start], set()
        while stack:
            m = stack.pop()
            if m in seen:
                continue
            seen.add(m)
            if m.split(".")[0] in DEFERRED:
                libs.add(m.split(".")[0])
            stack += direct.get(m, ())
        out[start] = libs
    return out


def layering_violations(root: Path) -> list[str]:
    """Every breach of the rules in the module docstring, as 'file:line: what'."""
    bad: list[str] = []
    graph: dict[str, set[str]] = {}
    modules = _tree(root)
    loads = _loads(modules)
    for here, (rel, imports) in modules.items():
        folder = _folder(here)
        entry_point = here.endswith(".__main__")
        for module, names, module_level, line, targets in imports:
            where = f"{rel}:{line}"
            lib = module.split(".")[0]
            if lib in ("torch", "triton") and folder not in TORCH_FOLDERS:
                bad.append(f"{where}: {folder} imports {module}")
            target = _folder(module)
            if not module_level:
                loaded = set().union(*(loads.get(_resolve(t, modules), set()) for t in targets))
                defers = lib in DEFERRED or (target is not None and loaded - loads[here])
                if not defers and (str(rel), module) not in LAZY:
                    bad.append(f"{where}: {module} imported inside a function (it defers no slow or optional "
                               "library; import it at the top, or name it in LAZY with the reason)")  # fmt: skip
            if target is None:
                continue
            if module.endswith(".__main__"):
                bad.append(f"{where}: {folder} imports the entry point {module}")
            if target != folder and target not in ALLOWED[folder] and not (entry_point and target == "cli"):
                bad.append(f"{where}: {folder} imports {module} ({target})")
            if target != folder:
                private = [n for n in names if n.startswith("_") and not n.startswith("__")]
                private += [p for p in module.split(".") if p.startswith("_") and not p.startswith("__")]
                if private:
                    bad.append(f"{where}: {folder} imports private {', '.join(private)} of {module}")
            graph.setdefault(here, set()).update(_resolve(t, modules) for t in targets)
    for cycle in _cycles(graph):
        if frozenset(cycle) not in ALLOWED_CYCLES:
            bad.append(f"import cycle: {' → '.join(sorted(cycle))}")
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
    for d in ("fsa", "compiler", "nn", "realize", "cli"):
        shutil.copytree(ROOT / d, dst / d, ignore=shutil.ignore_patterns("__pycache__", "*.md", "*.png"))
    return dst


PLANTED = [
    ("fsa/dot.py", "from fsa2rnn.nn import load_model", "fsa imports fsa2rnn.nn"),
    ("compiler/targets/lrnn/gh.py", "from fsa2rnn.nn.compiled.keys import KeyTable", "compiler imports fsa2rnn.nn"),
    ("nn/limits.py", "from fsa2rnn.realize.verify import verify_model", "nn imports fsa2rnn.realize.verify"),
    ("compiler/targets/lrnn/gh.py", "from ....nn import compiled", "compiler imports fsa2rnn.nn"),  # relative
    ("realize/verify.py", "from fsa2rnn.compiler.keys import _secret", "private _secret"),
    ("compiler/targets/lrnn/gh.py", "import torch", "compiler imports torch"),
    ("compiler/executor.py", "from fsa2rnn.nn.train import trainer", "compiler imports fsa2rnn.nn.train"),
    ("compiler/xp.py", "from fsa2rnn.compiler import keys", "import cycle"),  # keys imports xp
    ("nn/train/trainer.py", "from fsa2rnn.realize.extract import extract", "nn imports fsa2rnn.realize.extract"),
    ("nn/train/run_eval.py", "from ...realize import verify", "nn imports fsa2rnn.realize.verify"),  # relative
    # a cycle closed by an import inside a function (io is imported by automaton)
    ("fsa/io.py", "def _planted():\n    from .automaton import Automaton", "import cycle"),
    ("fsa/dot.py", "def _planted():\n    import json", "json imported inside a function"),
    ("nn/lmax.py", "def _planted():\n    from .limits import MAX_LENGTH", "nn.limits imported inside a function"),
    ("cli/show.py", "from fsa2rnn.cli import __main__", "imports the entry point fsa2rnn.cli.__main__"),
    ("fsa/dot.py", "from fsa2rnn.compiler import compile_nfsm", "fsa imports fsa2rnn.compiler"),
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


#: the layers each member of a compile target may point into (compiler/registry.py): compiler/ holds what runs
#: without torch; the torch module is nn's, the stepper and the checks realize's (or compiler's, numpy-only)
MEMBER_LAYERS: dict[str, set[str]] = {
    "compile": {"compiler"},
    "program": {"compiler"},
    "numpy_executor": {"compiler"},
    "exact_interpreter": {"compiler"},
    "torch_module": {"nn"},
    "stepper": {"realize"},
    "check": {"compiler", "realize"},
    "robustness": {"realize"},
    "realized_automaton": {"compiler", "realize"},
    "extraction": {"realize"},
    "compile_report": {"compiler", "realize"},
    "sequence_model": {"nn"},
}


def member_violations(targets: dict[str, object]) -> list[str]:
    """Every member string of the given targets that points outside the layer its role allows, or at nothing."""
    from fsa2rnn.fsa.errors import PluginError
    from fsa2rnn.fsa.registry import resolve_ref

    bad = []
    for name, target in targets.items():
        for member, layers in MEMBER_LAYERS.items():
            ref = getattr(target, member)
            if ref is None:
                continue
            if not isinstance(ref, str):
                bad.append(f"target {name!r} {member}: an object, not a 'module:attr' string")
                continue
            layer = _folder(ref.split(":")[0])
            if layer not in layers:
                bad.append(f"target {name!r} {member} {ref!r} points into {layer}, not {' or '.join(sorted(layers))}")
            try:
                resolve_ref(ref)
            except PluginError as exc:
                bad.append(f"target {name!r} {member}: {exc}")
    return bad


def compiler_resolutions(root: Path) -> list[str]:
    """Every compiler module that loads a target member of a higher layer (only nn/, realize/ and cli/ may)."""
    from fsa2rnn.compiler.registry import HIGHER_MEMBERS

    rx = re.compile(r"\.load\(\s*[\"'](" + "|".join(HIGHER_MEMBERS) + r")[\"']")
    out = []
    for path in sorted((root / "compiler").rglob("*.py")):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if rx.search(line):
                out.append(f"{path.relative_to(root)}:{i}: compiler loads a higher layer's target member")
    return out


def test_every_target_member_points_into_its_layer():
    from fsa2rnn.compiler.registry import TARGETS

    builtins = {name: TARGETS.get(name) for name in TARGETS.names() if TARGETS.is_builtin(name)}
    assert set(builtins) >= {"householder", "diagonal", "nfsm", "affine", "pdssm"}
    assert member_violations(builtins) == []
    assert compiler_resolutions(ROOT) == []


def test_a_member_in_the_wrong_layer_is_reported(tmp_path):
    from dataclasses import replace

    from fsa2rnn.compiler.registry import get_target

    wrong = replace(get_target("pdssm"), torch_module="fsa2rnn.compiler.targets.pdssm.executor:PDSSMExecutor")
    found = member_violations({"pdssm": wrong, "gone": replace(wrong, check="fsa2rnn.realize.nowhere:check")})
    assert any("'pdssm' torch_module" in v and "points into compiler, not nn" in v for v in found), found
    assert any("'gone' check" in v and "does not import" in v for v in found), found
    root = _scratch(tmp_path)
    (root / "compiler/executor.py").write_text(
        (root / "compiler/executor.py").read_text() + "\nMODULE = lambda t: t.load('torch_module')\n"
    )
    assert any("compiler/executor.py" in v for v in compiler_resolutions(root))


_WITHOUT_TORCH = """
import json, sys
sys.modules["torch"] = None  # any import of torch now raises ImportError
sys.modules["triton"] = None
from click.testing import CliRunner
from fsa2rnn.cli.main import main
from fsa2rnn.compiler import compile_affine, compile_diagonal, compile_householder, compile_nfsm
from fsa2rnn.compiler import exact_executor
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
