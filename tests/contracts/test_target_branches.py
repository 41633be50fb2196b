"""Outside the target registry no code branches on a target's name or class: a target is added in one folder and one
registration (docs/architecture.md, "Adding a target"), and everything else reads the registry.

Counted in the package (fsa, compiler, nn, realize, cli), outside compiler/registry.py and the targets' own folders
(compiler/targets/): comparisons (``==``, ``!=``, ``in``, ``not in``) and ``match`` cases on a target's name where the
compared value is a target (its text names ``target``, or it is a variable assigned from such a value — a trained
layer called "nfsm" is a layer, not a target); ``isinstance``/``issubclass`` on a target's classes (its program,
numpy executor, exact interpreter and torch module, read from the registry); and dict literals keyed by target names.
The count must be zero, and each kind is planted once to show that it is found.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fsa2rnn.compiler.registry import TARGETS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIRS = ("fsa", "compiler", "nn", "realize", "cli")
#: the registry itself and the targets' own folders, where a target names itself
REGISTRY = ("compiler/registry.py", "compiler/targets/")
CLASS_MEMBERS = ("program", "numpy_executor", "exact_interpreter", "torch_module")


def target_names() -> set[str]:
    return set(TARGETS.names())


def target_classes() -> set[str]:
    """The class names of every registered target's program, executors and torch module."""
    out = set()
    for name in TARGETS.names():
        target = TARGETS.get(name)
        for member in CLASS_MEMBERS:
            value = getattr(target, member)
            attr = value.split(":")[1] if isinstance(value, str) else getattr(value, "__qualname__", "")
            out.add(attr.split(".")[0])
    return out


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _class_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _segments(source: str):
    """``ast.get_source_segment`` with the lines split once (it splits the whole source at every call)."""
    lines = [line.encode() for line in source.splitlines(keepends=True)]

    def seg(node: ast.AST) -> str:
        if getattr(node, "end_lineno", None) is None:
            return ""
        first, last = node.lineno - 1, node.end_lineno - 1
        if first == last:
            return lines[first][node.col_offset : node.end_col_offset].decode()
        parts = [lines[first][node.col_offset :], *lines[first + 1 : last], lines[last][: node.end_col_offset]]
        return b"".join(parts).decode()

    return seg


def branches(source: str, path: str, names: set[str], classes: set[str]) -> list[str]:
    """Every branch on a target's name or class in one module's source, as 'path:line: what'."""
    tree = ast.parse(source)
    seg = _segments(source)
    # variables that hold a target's name: assigned from an expression that names ``target``
    targetish = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and "target" in seg(node.value):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Name):
                    targetish.add(t.id)

    def is_target(node: ast.AST) -> bool:
        return "target" in seg(node) or (isinstance(node, ast.Name) and node.id in targetish)

    out = []
    for node in ast.walk(tree):
        where = f"{path}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            literal = [o for o in operands if set(_strings(o)) & names]
            if literal and any(is_target(o) for o in operands if o not in literal):
                out.append(f"{where}: compares a target with its name: {seg(node)}")
        elif isinstance(node, ast.Match) and is_target(node.subject):
            cases = [c for c in node.cases if isinstance(c.pattern, ast.MatchValue)]
            if any(set(_strings(c.pattern.value)) & names for c in cases):
                out.append(f"{where}: matches a target on its name")
        elif isinstance(node, ast.Call) and _class_name(node.func) in ("isinstance", "issubclass") and node.args:
            second = node.args[-1]
            options = second.elts if isinstance(second, ast.Tuple) else [second]
            hit = sorted({_class_name(o) for o in options} & classes)
            if hit:
                out.append(f"{where}: isinstance on a target's class {', '.join(hit)}")
        elif isinstance(node, ast.Dict) and len(node.keys) >= 2:
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            if len(keys) == len(node.keys) and set(keys) <= names:
                out.append(f"{where}: a dict keyed by target names {keys}")
    return out


def package_branches(extra: dict[str, str] | None = None) -> list[str]:
    names, classes = target_names(), target_classes()
    sources = {str(p.relative_to(ROOT)): p.read_text() for d in PACKAGE_DIRS for p in sorted((ROOT / d).rglob("*.py"))}
    sources.update(extra or {})
    found = []
    for path, text in sources.items():
        if not path.startswith(REGISTRY):
            found += branches(text, path, names, classes)
    return found


def test_no_code_outside_the_registry_branches_on_a_target():
    assert package_branches() == []


PLANTED = [
    ("if model.target == 'nfsm':\n    pass\n", "compares a target with its name"),
    ("t = net.compiled.target\nif t in ('householder', 'diagonal'):\n    pass\n", "compares a target"),
    ("match target:\n    case 'affine':\n        pass\n", "matches a target on its name"),
    ("ok = isinstance(p, NFSMProgram)\n", "isinstance on a target's class NFSMProgram"),
    ("ok = isinstance(m, (LinearRNNModel, AffineModel))\n", "isinstance on a target's class AffineModel"),
    ("BUILDERS = {'householder': 1, 'diagonal': 2}\n", "a dict keyed by target names"),
]


@pytest.mark.parametrize("code, message", PLANTED, ids=[p[1] for p in PLANTED])
def test_a_planted_branch_is_found(code, message):
    found = branches(code, "realize/planted.py", target_names(), target_classes())
    assert any(v.startswith("realize/planted.py") and message in v for v in found), found


def test_a_planted_branch_in_the_registry_or_a_target_folder_is_allowed():
    code = PLANTED[0][0]
    assert package_branches({"compiler/targets/nfsm/planted.py": code, "compiler/registry.py": code}) == []
    assert package_branches({"realize/planted.py": code}) != []


def test_a_layer_named_like_a_target_is_no_branch():
    """A trained layer family called "nfsm" is compared with its own name freely (it is not a target)."""
    code = "if cfg.layer == 'nfsm' or model.config.layer in ('pdssm', 'mamba'):\n    pass\n"
    assert branches(code, "realize/planted.py", target_names(), target_classes()) == []


def test_every_builtin_target_names_its_docs_page_and_the_architecture_page_its_folder():
    text = (ROOT / "docs/architecture.md").read_text()
    for name in TARGETS.names():
        if TARGETS.is_builtin(name):
            target = TARGETS.get(name)
            assert target.docs and (ROOT / "docs" / target.docs).is_file(), (name, target.docs)
            folder = target.compile.split(":")[0].split(".")[3]  # fsa2rnn.compiler.targets.<folder>.…
            assert f"{folder}/" in text, folder
