"""The mutation-testing tool (mutation/, docs/mutation.md): mutants named by module, function, operator and
occurrence (not by line), the positions it never mutates, and copies whose tests import the copy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("cosmic_ray")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from mutation import engine  # noqa: E402

SOURCE = """from __future__ import annotations
import triton


def f(a: int | None, b: float = 2.0, *, c=None) -> dict[str, int] | None:
    if a < b and a is not None:
        return {"x": a + 1}
    print(f"{a * 2:.3g}")
    return None


class K:
    def g(self, x):
        return x - 3  # pragma: no mutate


@triton.jit
def kernel(x):
    return x + 1
"""


def _module(tmp_path: Path, text: str) -> list[engine.Mutant]:
    (tmp_path / "m.py").write_text(text)
    return engine.enumerate_mutants(tmp_path, "m.py")


def test_names_are_module_function_operator_occurrence(tmp_path):
    names = {m.name for m in _module(tmp_path, SOURCE)}
    assert "m.py::f::ReplaceComparisonOperator_Lt_LtE::0" in names
    assert "m.py::f::ReplaceBinaryOperator_Add_Sub::0" in names
    assert "m.py::f::ReplaceAndWithOr::0" in names
    assert "m.py::f::ReplaceComparisonOperator_IsNot_Is::0" in names
    assert "m.py::f::NumberPlusOne::0" in names  # the default 2.0
    assert "m.py::f::ReturnNone::0" in names and "m.py::f::ReturnNone::1" not in names  # `return None` stays
    assert "m.py::f::AddNot::0" in names


def test_annotations_fstrings_pragmas_and_triton_kernels_are_not_mutated(tmp_path):
    mutants = _module(tmp_path, SOURCE)
    assert not any(m.operator.startswith("ReplaceBinaryOperator_BitOr") for m in mutants)  # `int | None`
    assert not any(m.operator == "ReplaceBinaryOperator_Mul_Div" for m in mutants)  # inside the f-string
    assert not any(m.function in ("K.g", "kernel") and "Binary" in m.operator for m in mutants)
    assert not any(m.function == "kernel" for m in mutants)
    assert not any(m.function == "f" and m.operator == "ReplaceBinaryOperator_Mul_Div" for m in mutants)  # bare *


def test_names_do_not_move_with_lines_or_other_functions(tmp_path):
    before = {m.name: m for m in _module(tmp_path, SOURCE)}
    edited = SOURCE.replace("from __future__ import annotations\n", "from __future__ import annotations\n\n\n" + (
        "def h(y):\n    return y * 4 + 5 < 6\n"
    ))  # fmt: skip
    after = {m.name: m for m in _module(tmp_path, edited)}
    for name, m in before.items():
        assert name in after and after[name].line == m.line + 4
    assert {n for n in after if "::h::" in n} == set(after) - set(before)


def test_a_mutant_changes_exactly_its_token(tmp_path):
    mutants = _module(tmp_path, SOURCE)
    m = next(x for x in mutants if x.name == "m.py::f::ReplaceComparisonOperator_Lt_LtE::0")
    text = engine.mutated_source(tmp_path, m)
    assert text == SOURCE.replace("if a < b", "if a <= b")
    r = next(x for x in mutants if x.name == "m.py::f::ReturnNone::0")
    assert engine.mutated_source(tmp_path, r) == SOURCE.replace('return {"x": a + 1}', "return None")
    assert engine.by_name(tmp_path, m.name) == m
    with pytest.raises(KeyError, match="no such mutant"):
        engine.by_name(tmp_path, "m.py::f::ReplaceComparisonOperator_Lt_LtE::7")


def test_a_copy_imports_itself_not_the_checkout(tmp_path):
    """The runner's copy is a folder named fsa2rnn whose parent comes first on PYTHONPATH: `import fsa2rnn` there
    finds the copy, not the checkout that the editable install maps (what mutmut-style copies get wrong)."""
    import shutil

    from mutation.__main__ import _env

    tree = tmp_path / "fsa2rnn"
    shutil.copytree(ROOT / "fsa", tree / "fsa", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "__init__.py", tree / "__init__.py")
    code = "import fsa2rnn, fsa2rnn.fsa; print(fsa2rnn.__file__); print(fsa2rnn.fsa.__file__)"
    env = {k: v for k, v in _env(tree).items() if k != "PYTHONSAFEPATH"}
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert [Path(p).resolve() for p in out.stdout.split()] == [tree / "__init__.py", tree / "fsa" / "__init__.py"]
    assert os.path.realpath(ROOT) not in out.stdout
