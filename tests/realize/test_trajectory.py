"""The fused numpy step of η-trajectories (realize/trajectory.py) against the step-by-step torch loop of
realize/robust.py (the reference): the same states read out, the same drift up to rounding, the same L_max on the
same words, for cascades, diagonal layers, hash readouts, NFSMs and shift registers, random and adversarial."""

from __future__ import annotations

import numpy as np
import pytest

from fsa2rnn.compiler import compile_diagonal, compile_householder, compile_nfsm
from fsa2rnn.compiler.targets.affine.definite_to_affine import compile_affine
from fsa2rnn.fsa import resolve_spec
from fsa2rnn.fsa.errors import SpecError
from fsa2rnn.realize.robust import l_max, run
from fsa2rnn.realize.steppers import stepper_for
from fsa2rnn.realize.trajectory import fast_stepper

pytestmark = pytest.mark.usefixtures("one_torch_thread")

MODELS = {
    "T4 householder (cascade)": (compile_householder, "T4", {}),
    "S5 householder (hash)": (compile_householder, "S5", {}),
    "Z5 householder": (compile_householder, "Z5", {}),
    "Z7 diagonal": (compile_diagonal, "Z7", {}),
    "T4 nfsm": (compile_nfsm, "T4", {}),
    "T4 nfsm stacked": (compile_nfsm, "T4", {"layers": "stacked"}),
    "S5 nfsm": (compile_nfsm, "S5", {}),
    "Z5 nfsm": (compile_nfsm, "Z5", {}),
    "affine": (compile_affine, "regex:(a|b)*aba", {}),
}


@pytest.fixture(scope="module")
def models():
    return {name: compiler(resolve_spec(spec), **kw) for name, (compiler, spec, kw) in MODELS.items()}


def _both(stepper, ids, **kw):
    ref = run(stepper, ids, engine="torch", record_drift=True, **kw)
    fast = run(stepper, ids, engine="numpy", record_drift=True, **kw)
    return ref, fast


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("kind", ["random", "adversarial"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fast_trajectory_reads_what_the_reference_reads(models, name, kind, dtype):
    """Large η (wrong states come early): every state read out is the reference's, the drift agrees to rounding,
    and a trajectory continued across chunks is the one run at once."""
    model = models[name]
    stepper = stepper_for(model, dtype)
    assert fast_stepper(stepper) is not None
    k = len(model.symbols)
    ids = np.random.default_rng(7).integers(0, k, (12, 160))
    eta = 0.75 if "nfsm" in name else 0.6 if name == "affine" else 0.05  # above η* (NFSM 1/√2, affine 1/2)
    (want, _, dw), (got, state, dg) = _both(stepper, ids, eta=eta, perturbation_kind=kind, seed=5)
    truth = model.target_automaton().run(ids, start=np.full(len(ids), model.initial))
    assert kind == "random" or (want.numpy() != truth).any()  # the adversary makes the model fail here
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_allclose(dg.numpy(), dw.numpy(), rtol=1e-6 if dtype == "float32" else 1e-12, atol=1e-12)
    first, state2, _ = run(stepper, ids[:, :100], eta=eta, perturbation_kind=kind, seed=5, engine="numpy")
    rest, _, _ = run(stepper, ids[:, 100:], eta=eta, perturbation_kind=kind, state=state2, engine="numpy")
    np.testing.assert_array_equal(np.concatenate([first.numpy(), rest.numpy()], axis=1), got.numpy())


@pytest.mark.parametrize("name", ["T4 householder (cascade)", "S5 householder (hash)", "Z7 diagonal", "T4 nfsm"])
@pytest.mark.parametrize("kind", ["random", "adversarial"])
def test_fast_lmax_is_the_reference_lmax(models, name, kind):
    """The same L_max (first errors on prefixes of the same words) at float64."""
    stepper = stepper_for(models[name], "float64")
    eta = 0.01 if "nfsm" not in name else 0.75
    common = dict(eta=eta, perturbation_kind=kind, start=4, cap=512, n_words=16, seed=3, stepper=stepper)
    want = l_max(None, engine="torch", **common)
    got = l_max(None, engine="numpy", **common)
    assert got == want


def test_factor_by_factor_mode(models):
    stepper = stepper_for(models["S5 householder (hash)"], "float64", "factors")
    ids = np.random.default_rng(1).integers(0, 2, (8, 120))
    (want, _, _), (got, _, _) = _both(stepper, ids, eta=0.02, perturbation_kind="adversarial")
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_engines(models):
    """bfloat16 has no numpy twin: auto falls back to the reference, numpy is refused; an unknown engine is bad
    input."""
    stepper = stepper_for(models["Z5 householder"], "bfloat16")
    assert fast_stepper(stepper) is None
    ids = np.zeros((2, 8), dtype=np.int64)
    out, state, _ = run(stepper, ids, eta=0.01)
    assert state.fast is None and out.shape == (2, 8)
    with pytest.raises(SpecError, match="numpy engine"):
        run(stepper, ids, eta=0.01, engine="numpy")
    with pytest.raises(SpecError, match="unknown engine"):
        run(stepper_for(models["Z5 householder"]), ids, engine="jax")
