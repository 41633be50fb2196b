"""Mutants of a module, named stably: ``path::function::operator::occurrence``.

The mutation operators are cosmic-ray's (its parso-based operator classes and its ``MutationVisitor``, which applies
the n-th position of one operator in a module), restricted to the kinds this project mutates, plus one of ours for
return values:

- arithmetic: + ↔ −, * ↔ /, / → //, // → /, % → //, ** → *, << ↔ >>, | ↔ &, unary − deleted;
- comparison: < ↔ <=, > ↔ >=, == ↔ !=, is ↔ is not;
- boolean: and ↔ or, True ↔ False, ``not`` deleted, a condition negated (if, while, assert, x if c else y);
- constants: every number + 1 (0 → 1, 2 → 3, 0.5 → 1.5, 1e-9 → 1.000000001);
- return values: ``return expr`` → ``return None``.

No string is ever mutated, and no position inside an f-string (messages), a type annotation (not evaluated: every
module has ``from __future__ import annotations``), a signature's bare ``*`` or ``/``, a function decorated with
``triton.jit`` (GPU kernels), or on a line marked ``# pragma: no mutate`` is used. C sources are never read.

A mutant's name is the module's path, the qualified name of the function holding the position (``<module>`` for
module-level code, ``Class.method``), the operator and the occurrence of that operator within that function
(0, 1, …, in source order). Moving code within a file, or editing other functions, leaves a name unchanged.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import parso
from cosmic_ray.ast import ast_nodes, is_none
from cosmic_ray.mutating import MutationVisitor
from cosmic_ray.operators import (
    binary_operator_replacement as binop,
)
from cosmic_ray.operators import (
    boolean_replacer as boolean,
)
from cosmic_ray.operators import (
    comparison_operator_replacement as comparison,
)
from cosmic_ray.operators import (
    unary_operator_replacement as unary,
)
from cosmic_ray.operators.operator import Example, Operator

PRAGMA = "pragma: no mutate"


class _Number(Operator):
    """A number replaced by itself plus ``offset`` (cosmic-ray's NumberReplacer with one offset)."""

    offset = 0

    def mutation_positions(self, node):  # type: ignore[no-untyped-def]
        if isinstance(node, parso.python.tree.Number):
            yield (node.start_pos, node.end_pos)

    def mutate(self, node, index):  # type: ignore[no-untyped-def]
        value = eval(node.value) + self.offset  # a literal number: safe
        return parso.python.tree.Number(node.prefix + repr(value), node.start_pos)

    @classmethod
    def examples(cls):  # type: ignore[no-untyped-def]
        return (Example("x = 1", f"x = {1 + cls.offset}"),)


class NumberPlusOne(_Number):
    offset = 1


class ReturnNone(Operator):
    """``return expr`` → ``return None`` (expr not already None)."""

    def mutation_positions(self, node):  # type: ignore[no-untyped-def]
        if node.type == "return_stmt" and len(node.children) == 2 and not is_none(node.children[1]):
            yield (node.start_pos, node.end_pos)

    def mutate(self, node, index):  # type: ignore[no-untyped-def]
        node.children[1] = parso.python.tree.Keyword("None", node.children[1].start_pos, prefix=" ")
        return node

    @classmethod
    def examples(cls):  # type: ignore[no-untyped-def]
        return (Example("def f():\n    return 1\n", "def f():\n    return None\n"),)


def _binop(a: str, b: str) -> type[Operator]:
    return getattr(binop, f"ReplaceBinaryOperator_{a}_{b}")


def _cmp(a: str, b: str) -> type[Operator]:
    return getattr(comparison, f"ReplaceComparisonOperator_{a}_{b}")


#: every operator used, by the name that appears in mutant names
OPERATORS: dict[str, type[Operator]] = {
    op.__name__: op
    for op in (
        _binop("Add", "Sub"),
        _binop("Sub", "Add"),
        _binop("Mul", "Div"),
        _binop("Div", "Mul"),
        _binop("Div", "FloorDiv"),
        _binop("FloorDiv", "Div"),
        _binop("Mod", "FloorDiv"),
        _binop("Pow", "Mul"),
        _binop("LShift", "RShift"),
        _binop("RShift", "LShift"),
        _binop("BitOr", "BitAnd"),
        _binop("BitAnd", "BitOr"),
        unary.ReplaceUnaryOperator_Delete_USub,
        _cmp("Lt", "LtE"),
        _cmp("LtE", "Lt"),
        _cmp("Gt", "GtE"),
        _cmp("GtE", "Gt"),
        _cmp("Eq", "NotEq"),
        _cmp("NotEq", "Eq"),
        _cmp("Is", "IsNot"),
        _cmp("IsNot", "Is"),
        boolean.ReplaceAndWithOr,
        boolean.ReplaceOrWithAnd,
        boolean.ReplaceTrueWithFalse,
        boolean.ReplaceFalseWithTrue,
        unary.ReplaceUnaryOperator_Delete_Not,
        boolean.AddNot,
        NumberPlusOne,
        ReturnNone,
    )
}


@dataclass(frozen=True)
class Mutant:
    """One mutant: ``module`` (path relative to the repository root), ``function`` (qualified name), ``operator``,
    ``occurrence`` (within module and function), ``index`` (the operator's position in the whole module, what the
    visitor applies), ``line`` (for reports only: names never use it)."""

    module: str
    function: str
    operator: str
    occurrence: int
    index: int
    line: int
    end_line: int

    @property
    def name(self) -> str:
        return f"{self.module}::{self.function}::{self.operator}::{self.occurrence}"


def _qualname(node: parso.tree.NodeOrLeaf) -> tuple[str, list]:
    """(qualified name of the innermost def/class holding ``node`` or ``<module>``, the enclosing funcdefs)."""
    names, funcs = [], []
    p = node.parent
    while p is not None:
        if p.type in ("funcdef", "classdef"):
            names.append(p.name.value)
            if p.type == "funcdef":
                funcs.append(p)
        p = p.parent
    return (".".join(reversed(names)) or "<module>"), funcs


def _excluded(node: parso.tree.NodeOrLeaf, funcs: list, lines: list[str]) -> bool:
    """Inside an f-string, an annotation or a ``triton.jit`` function, or on a line marked ``# pragma: no mutate``."""
    if any(PRAGMA in lines[i - 1] for i in range(node.start_pos[0], node.end_pos[0] + 1) if i - 1 < len(lines)):
        return True
    if node.type == "operator" and node.parent is not None and node.parent.type in ("parameters", "lambdef"):
        return True  # the bare * (keyword-only) or / (positional-only) of a signature: not an operator
    child, p = node, node.parent
    while p is not None:
        if p.type in ("fstring", "fstring_expr"):
            return True
        if p.type == "tfpdef" and len(p.children) == 3 and child is p.children[2]:
            return True
        if p.type == "annassign" and child is p.children[1]:
            return True
        if p.type == "funcdef" and child is p.annotation:
            return True
        child, p = p, p.parent
    for f in funcs:
        for dec in f.get_decorators():
            if "triton.jit" in dec.get_code() or "triton.autotune" in dec.get_code():
                return True
    return False


def source_sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def enumerate_mutants(root: Path, module: str) -> list[Mutant]:
    """Every mutant of ``module`` (a path relative to ``root``), in source order per operator."""
    text = (root / module).read_text()
    lines = text.splitlines()
    out: list[Mutant] = []
    for op_name, op_cls in OPERATORS.items():
        op = op_cls()
        counts: dict[str, int] = {}
        index = 0
        for node in ast_nodes(parso.parse(text)):
            for _ in op.mutation_positions(node):
                qual, funcs = _qualname(node)
                if not _excluded(node, funcs, lines):
                    occ = counts.get(qual, 0)
                    counts[qual] = occ + 1
                    out.append(Mutant(module, qual, op_name, occ, index, node.start_pos[0], node.end_pos[0]))
                index += 1
    return out


def by_name(root: Path, name: str) -> Mutant:
    """The mutant called ``name`` (KeyError with the name if the module has none such)."""
    module = name.split("::", 1)[0]
    if not (root / module).is_file():
        raise KeyError(f"{name}: no module {module}")
    for m in enumerate_mutants(root, module):
        if m.name == name:
            return m
    raise KeyError(f"{name}: no such mutant (renamed or removed?)")


def mutated_source(root: Path, mutant: Mutant) -> str:
    """The module's text with ``mutant`` applied."""
    text = (root / mutant.module).read_text()
    code = MutationVisitor.mutate_code(text, OPERATORS[mutant.operator](), mutant.index)
    if code is None or code == text:
        raise ValueError(f"{mutant.name}: the operator did not apply")
    return code


def diff(root: Path, mutant: Mutant) -> str:
    """A unified diff of the mutant (for reports)."""
    import difflib

    before = (root / mutant.module).read_text().splitlines()
    after = mutated_source(root, mutant).splitlines()
    return "\n".join(difflib.unified_diff(before, after, f"a/{mutant.module}", f"b/{mutant.module}", lineterm="", n=0))
