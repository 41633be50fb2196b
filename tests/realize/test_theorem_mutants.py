"""Mutants: small faults planted one at a time (monkeypatched) in the compilers, executors, checkers, extraction and
learned layers; each must make at least one named registry entry fail, run exactly as `fsa2rnn theorems --only ID`
runs it (select + run_theorem, default parameters), and the unmutated entries pass.

The table is declarative: ``target`` is "module:attr" (attr may be dotted, "Class.method"), ``make`` builds the
replacement from the original, ``entries`` are the registry ids that must fail. Retargeting after a refactor is a
one-line change per mutant. Each mutant runs only the entries it names.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch

from fsa2rnn.realize.theorems import run_theorem, select

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@dataclass(frozen=True)
class Mutant:
    name: str
    target: str  # "package.module:attr" or "package.module:Class.attr"
    make: Callable[[Any], Any]  # original → replacement
    entries: tuple[str, ...]


def _resolve(target: str) -> tuple[Any, str, Any]:
    """(the object holding the attribute, the attribute's name, its current value)."""
    module_name, attr = target.split(":")
    owner: Any = importlib.import_module(module_name)
    *path, name = attr.split(".")
    for part in path:
        owner = getattr(owner, part)
    return owner, name, owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)


# ------------------------------------------------------------------------------------------------ replacements
def _beta_max_1(orig):
    return lambda self, x: torch.sigmoid(self.b_proj(x))  # β ∈ [0, 1] whatever beta_range says


def _times(factor: float):
    return lambda orig: lambda *a, **k: orig(*a, **k) * factor


def _radius_overclaimed(orig):
    def certified(stepper, automaton, eta, star, *rest):
        return orig(stepper, automaton, eta, 3 * star, *rest)

    return certified


def _moore_one_round(orig):
    from fsa2rnn.fsa import minimize

    def refine(t, cls):
        count = int(cls.max()) + 1
        key = cls
        for x in range(t.shape[0]):
            key = minimize._first_occurrence_ids(key * count + cls[t[x]])
        return key

    return refine


def _isomorphism_sizes_only(orig):
    def iso(a, b, *, labels=None):
        return np.arange(a.n_states) if a.n_states == b.n_states else None

    return iso


def _two_cancelling_swaps(orig):
    from fsa2rnn.compiler.targets.lrnn import gh

    def refl(perm):
        out = list(orig(perm))
        first = {}
        for i, j in gh.transpositions(perm):  # (c0, c1), (c0, c2), … per cycle: one pair per cycle
            first.setdefault(i, j)
        for i, j in first.items():
            out += [gh.GHFactor("swap", i, j), gh.GHFactor("swap", i, j)]  # H·H = I: the product is unchanged
        return out

    return refl


def _fft_size_l(orig):
    from fsa2rnn.nn.ops.dlr.fft import cast_kernel, fft_kernel

    def fft_dlr(log_lambda, w, u, kernel="re", bidirectional=False):
        length = u.shape[1]
        k = cast_kernel(fft_kernel(log_lambda, w, length), kernel)
        if bidirectional:
            fwd, bwd = k[0], k[1]
            k = torch.cat([fwd[:, :1] + bwd[:, :1], fwd[:, 1:], torch.zeros_like(fwd[:, :1]), bwd[:, 1:].flip(-1)], -1)
        n = length  # the fault: a circular convolution of size L wraps around
        spectrum = torch.fft.rfft(u, n=n, dim=1) * torch.fft.rfft(k, n=n, dim=-1).T
        return torch.fft.irfft(spectrum, n=n, dim=1)[:, :length]

    return fft_dlr


def _exact_check_without_delta(orig):
    from fsa2rnn.compiler.targets.lrnn import exact as ec

    def exact_check(model, automaton):
        res = ec.explore(model)
        return {
            "ok": res["ok"],
            "failure": res["failure"],
            "configurations": res["configurations"],
            "transitions_checked": len(res["edges"]),
        }

    return exact_check


def _gh_plus(orig):
    def float_product(factors, n):
        a = np.eye(n)
        for f in factors:
            a = a + f.beta * np.outer(f.v, f.v @ a)  # I + βvvᵀ
        return a

    return float_product


def _mamba_nonnegative(orig):
    return lambda dt, A, negative: orig(dt, A, False)


def _degree_plus_one(orig):
    return lambda monoid: None if orig(monoid) is None else orig(monoid) + 1


def _no_witness(orig):
    return lambda automaton: None


def _no_adversarial_push(orig):
    return lambda stepper, h, eta, kind, generator: (
        None if kind == "adversarial" else orig(stepper, h, eta, kind, generator)
    )


def _branch_ii(orig):
    return lambda model: {**orig(model), "branch": "ii", "surviving": None}


def _extra_reflections(orig):
    from fsa2rnn.compiler.targets.lrnn import gh

    def refl(q, **kw):
        n = q.shape[0]
        e = np.eye(n)[0]
        return list(orig(q, **kw)) + [gh.FloatGH(e, 2.0), gh.FloatGH(e, 2.0)]

    return refl


def _drop_last_factor(orig):
    return lambda m, **kw: list(orig(m, **kw))[:-1]


def _scan_ignores_h0(orig):
    return lambda bank, keys, h0, lengths=None: orig(bank, keys, torch.zeros_like(h0), lengths)


def _merge_by_one_hot(orig):
    """The log-depth table scan with each merge P_t ∘ P_s done as a one-hot matrix product: still exact, but d²
    work per merge (Def. 5.1's c = O(d) violated)."""

    def scan(bank, keys, h0, lengths=None):
        prefix = bank.long()[keys.long()]
        shift, d = 1, prefix.shape[-1]
        while shift < prefix.shape[1]:
            one_hot = torch.nn.functional.one_hot(prefix[:, :-shift], d).double()  # (B, T − s, d, d)
            prefix[:, shift:] = (one_hot @ prefix[:, shift:].double().unsqueeze(-1)).squeeze(-1).long()
            shift *= 2
        return torch.gather(prefix, 2, h0.long().view(-1, 1, 1).expand(-1, prefix.shape[1], 1)).squeeze(2)

    return scan


def _radius_doubled(orig):
    return property(lambda self: 2 * orig.fget(self))


def _tables_always_match(orig):
    return lambda *a, **k: {**orig(*a, **k), "match": True}


def _prod_kernel_re_re(orig):
    return lambda k, kernel: k.real * k.real if kernel == "prod" else orig(k, kernel)


def _integer_product_transposed(orig):
    return lambda factors, n: orig(factors, n).T


def _source(old: str, new: str):
    """A fault planted in the function's own source: ``old`` (once in it) replaced by ``new``, the function
    recompiled in its module's namespace (so a retarget after a refactor keeps the fault's text)."""
    import inspect
    import textwrap

    def make(orig):
        fn = inspect.unwrap(orig)
        src = textwrap.dedent(inspect.getsource(fn))
        assert src.count(old) == 1, f"{fn.__qualname__}: {old!r} occurs {src.count(old)} times"
        namespace = dict(fn.__globals__)
        exec(compile(src.replace(old, new), inspect.getsourcefile(fn), "exec"), namespace)
        return namespace[fn.__name__]

    return make


def _transposed(orig):
    return lambda self, x, steady=False: orig(self, x, steady).transpose(-1, -2)


def _tolerant_same(orig):
    return lambda stored, exact: np.shape(stored) == np.shape(exact) and bool(np.allclose(stored, exact, atol=1e-6))


MUTANTS = [
    Mutant("DeltaNet β_max = 1", "fsa2rnn.nn.layers.delta_product:DeltaProduct.beta", _beta_max_1, ("grazzi.sec4.2",)),
    Mutant(
        "Mamba [−1, 1] read as [0, 1]",
        "fsa2rnn.nn.layers.selective_diagonal:selective_eigenvalues",
        _mamba_nonnegative,
        ("grazzi.sec4.2",),
    ),
    Mutant(
        "margin certificate weakened 10×",
        "fsa2rnn.realize.certificate:logit_error_bound",
        _times(0.1),
        ("brandoit.propG.3",),
    ),
    Mutant(
        "affine radius over-claimed 3×",
        "fsa2rnn.realize.conditions:_certified",
        _radius_overclaimed,
        ("brandoit.thm4.1.ii", "brandoit.thm3.1"),
    ),
    Mutant("NFSM cell radius doubled", "fsa2rnn.realize.steppers:Block.radius", _radius_doubled, ("brandoit.thm3.1",)),
    Mutant("Moore minimization one round", "fsa2rnn.fsa.minimize:_refine", _moore_one_round, ("brandoit.H.6",)),
    Mutant(
        "isomorphism compares sizes only", "fsa2rnn.fsa.relabel:isomorphism", _isomorphism_sizes_only, ("brandoit.H.6",)
    ),
    Mutant(
        "two cancelling redundant swaps per cycle",
        "fsa2rnn.compiler.targets.lrnn.gh:reflections_of_permutation",
        _two_cancelling_swaps,
        ("grazzi.thm3", "grazzi.prop1.permutation"),
    ),
    Mutant(
        "integer GH product transposed",
        "fsa2rnn.compiler.targets.lrnn.gh:integer_product",
        _integer_product_transposed,
        ("grazzi.prop1.permutation",),
    ),
    Mutant("DLR FFT of size L (wrap-around)", "fsa2rnn.nn.ops.dlr:fft_dlr", _fft_size_l, ("dlr.conv",)),
    Mutant("DLR-prod kernel Re·Re", "fsa2rnn.nn.ops.dlr.fft:cast_kernel", _prod_kernel_re_re, ("dlr.prod",)),
    Mutant(
        "exact check never compares the reached state with δ",
        "fsa2rnn.compiler.targets.lrnn.exact:exact_check",
        _exact_check_without_delta,
        ("grazzi.thm3", "grazzi.thm4", "grazzi.thm6"),
    ),
    Mutant(
        "float GH product I + βvvᵀ",
        "fsa2rnn.compiler.targets.lrnn.gh:float_product",
        _gh_plus,
        ("grazzi.prop1.positive", "grazzi.prop1.norm"),
    ),
    Mutant(
        "orthogonal matrix with two extra cancelling reflections",
        "fsa2rnn.compiler.targets.lrnn.gh:orthogonal_as_reflections",
        _extra_reflections,
        ("grazzi.prop1.orthogonal",),
    ),
    Mutant(
        "contraction missing its last GH factor",
        "fsa2rnn.compiler.targets.lrnn.gh:contraction_as_gh",
        _drop_last_factor,
        ("grazzi.prop1.contraction",),
    ),
    Mutant(
        "definite degree off by one", "fsa2rnn.fsa.classify:definite_degree", _degree_plus_one, ("brandoit.lemF.11",)
    ),
    Mutant(
        "no non-definiteness witness found",
        "fsa2rnn.compiler.targets.affine.definite_to_affine:non_definite_witness",
        _no_witness,
        ("brandoit.lemF.11",),
    ),
    Mutant(
        "adversarial perturbation never pushes",
        "fsa2rnn.realize.robust:perturbation",
        _no_adversarial_push,
        ("brandoit.thm4.1.i", "brandoit.thm3.1"),
    ),
    Mutant(
        "Theorem 4.1 branch (ii) for every model",
        "fsa2rnn.realize.spectral:theorem41_branch",
        _branch_ii,
        ("brandoit.thm4.1.i",),
    ),
    Mutant(
        "chunked table scan ignores the start index",
        "fsa2rnn.nn.ops.table_scan:chunked_table_scan",
        _scan_ignores_h0,
        ("brandoit.def5.1",),
    ),
    Mutant(
        "log-depth table scan merges by one-hot matrix products",
        "fsa2rnn.nn.ops.table_scan:torch_table_scan",
        _merge_by_one_hot,
        ("brandoit.def5.1",),
    ),
    Mutant(
        "parity compiled as a 2×2 rotation by π (width 2, two reflections)",
        "fsa2rnn.compiler.targets.lrnn.householder:rotation",
        _source("if m <= 2:", "if m < 2:"),
        ("grazzi.thm3",),
    ),
    Mutant(
        "DeltaProduct transition transposed",
        "fsa2rnn.nn.layers.delta_product:DeltaProduct.transition",
        _transposed,
        ("grazzi.sec4.2",),
    ),
    Mutant(
        "exact checker loosened to a 1e-6 tolerance",
        "fsa2rnn.compiler.targets.lrnn.exact:_same",
        _tolerant_same,
        ("grazzi.thm3", "grazzi.thm4", "grazzi.thm6"),
    ),
    Mutant(
        "NFSM radius inclusive (η ≤ η* robust)",
        "fsa2rnn.realize.conditions:nfsm_conditions",
        _source("if eta < star:", "if eta <= star:"),
        ("brandoit.thm3.1",),
    ),
    Mutant(
        "certified radius inclusive (η ≤ η* robust)",
        "fsa2rnn.realize.conditions:_certified",
        _source("if eta < star:", "if eta <= star:"),
        ("brandoit.thm3.1", "brandoit.thm4.1.ii"),
    ),
    Mutant(
        "row margin best − worst",
        "fsa2rnn.realize.certificate:row_margins",
        _source("(top2[..., 1] - top2[..., 0])", "(top2[..., 1] - np.sort(blk, axis=-1)[..., 0])"),
        ("brandoit.propG.3",),
    ),
    Mutant(
        "Mamba's fused scan hands the second-last state to the next chunk",
        "fsa2rnn.nn.ops.diag_scan.selective:_fused_forward",
        _source("h = hc[:, -1]", "h = hc[:, -2]"),
        ("grazzi.thm1", "grazzi.thm2"),
    ),
    Mutant(
        "extracted tables always reported matching",
        "fsa2rnn.realize.extract:extract_and_compare",
        _tables_always_match,
        ("brandoit.propG.1", "brandoit.propG.6"),
    ),
]


def test_at_least_twenty_mutants_each_naming_an_existing_entry():
    from fsa2rnn.realize.theorems import registry

    assert len(MUTANTS) >= 20 and len({m.name for m in MUTANTS}) == len(MUTANTS)
    for m in MUTANTS:
        owner, name, _ = _resolve(m.target)
        assert hasattr(owner, name), m.target
        assert m.entries and set(m.entries) <= set(registry()), m.entries


@pytest.fixture
def fresh_target_members():
    """A target resolves its ``"module:attr"`` members once and keeps them (compiler/registry.py ``Target.load``):
    during the test they are resolved again, so a mutant patched into such a module is the one called; after it,
    the targets keep what they had."""
    from fsa2rnn.compiler.registry import TARGETS, get_target

    saved = {name: dict(get_target(name)._loaded) for name in TARGETS}
    for name in saved:
        get_target(name)._loaded.clear()
    yield
    for name, members in saved.items():
        get_target(name)._loaded.clear()
        get_target(name)._loaded.update(members)


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_the_registry_catches_the_mutant(mutant, monkeypatch, fresh_target_members):
    owner, name, original = _resolve(mutant.target)
    monkeypatch.setattr(owner, name, mutant.make(original))
    for entry_id in mutant.entries:
        (entry,) = select(entry_id)  # what `fsa2rnn theorems --only ID` runs
        result = run_theorem(entry)
        assert result["status"] == "failed", f"{mutant.name}: {entry_id} still {result['status']}: {result['evidence']}"


def test_the_unmutated_entries_the_mutants_name_pass():
    for entry_id in sorted({e for m in MUTANTS for e in m.entries}):
        (entry,) = select(entry_id)
        result = run_theorem(entry)
        assert result["status"] != "failed", result
