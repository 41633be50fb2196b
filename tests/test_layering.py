"""The dependency direction of docs/architecture.md: fsa imports none of the others, compiler only fsa, runtime fsa
and compiler; all three run without torch, and so does `fsa2rnn run` at float64."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "fsa": ("fsa2rnn.compiler", "fsa2rnn.nn", "fsa2rnn.realize", "fsa2rnn.cli", "torch", "triton"),
    "compiler": ("fsa2rnn.nn", "fsa2rnn.realize", "fsa2rnn.cli", "torch", "triton"),
    "runtime": ("fsa2rnn.nn", "fsa2rnn.realize", "fsa2rnn.cli", "torch", "triton"),
}


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_import_against_the_dependency_direction(package):
    bad = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for name in _imports(path)
        if name.split(".")[0] in ("torch", "triton") or name.startswith(FORBIDDEN[package])
    ]
    assert not bad


_WITHOUT_TORCH = """
import json, sys
sys.modules["torch"] = None  # any import of torch now raises ImportError
sys.modules["triton"] = None
from click.testing import CliRunner
from fsa2rnn.cli.main import main
from fsa2rnn.compiler import compile_diagonal, compile_householder, compile_nfsm
from fsa2rnn.fsa import resolve_spec

specs = {compile_householder: "S4", compile_diagonal: "Z6", compile_nfsm: "T3"}
models = [compile_(resolve_spec(spec)) for compile_, spec in specs.items()]
codes = [CliRunner().invoke(main, [cmd, "T3", "--json"]).exit_code for cmd in ("show", "analyze", "decompose")]
loaded = sorted(m for m in sys.modules if m.startswith(("fsa2rnn.nn", "fsa2rnn.realize")))
print(json.dumps({"verified": [m.summary["verified"] for m in models], "codes": codes, "loaded": loaded}))
"""


def test_compilers_and_symbolic_commands_run_without_torch():
    res = subprocess.run([sys.executable, "-c", _WITHOUT_TORCH], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out == {"verified": [True, True, True], "codes": [0, 0, 0], "loaded": []}


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
