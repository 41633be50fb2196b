"""selective_scan (the Mamba-style layer's scan): the fused torch path against a step-by-step float64 loop written
from the definition and against the materialized reference (naive_diag_scan), values and every gradient, at every
chunking, with the eigenvalues the theory needs (a = 1, a = 0 and a = −1 exactly); gradcheck; low precision; the
Triton path under the interpreter; the layer's fused path against its naive path; bad input."""

from __future__ import annotations

import os

import pytest
import torch
from helpers import err_ratio

from fsa2rnn.fsa.errors import FsaError
from fsa2rnn.nn.layers import SelectiveDiagonal
from fsa2rnn.nn.ops import selective_scan

pytestmark = pytest.mark.usefixtures("one_torch_thread")
NAMES = ("y", "h_T", "grad dt", "grad x", "grad A", "grad B", "grad C", "grad h0")


def _case(bsz=2, length=23, d=3, n=4, *, hard=False, seed=0, dtype=torch.float64):
    """dt ≥ 0, x, A > 0, B, C, h0; ``hard`` sets some Δ to 0 (a = 1) and some Δ·A to 800 (exp underflows: a = 0,
    and a = −1 with ``negative``), exactly."""
    g = torch.Generator().manual_seed(seed)
    dt = torch.nn.functional.softplus(torch.randn(bsz, length, d, generator=g, dtype=torch.float64))
    A = 0.2 + 3 * torch.rand(d, n, generator=g, dtype=torch.float64)
    if hard:
        pick = torch.rand(bsz, length, d, generator=g)
        dt = torch.where(pick < 0.2, 0.0, torch.where(pick > 0.8, 800 / 0.2, dt))
    x = torch.randn(bsz, length, d, generator=g, dtype=torch.float64)
    B, C = (torch.randn(bsz, length, n, generator=g, dtype=torch.float64) for _ in range(2))
    h0 = torch.randn(bsz, d, n, generator=g, dtype=torch.float64)
    return tuple(t.to(dtype) for t in (dt, x, A, B, C, h0))


def _loop(dt, x, A, B, C, h0, negative):
    """The definition, one step at a time in float64: a_t = exp(−Δ_t A) (2·that − 1), h_t = a_t h_{t−1} + x_t B_tᵀ,
    y_t = h_t C_t."""
    h, ys = h0, []
    for t in range(dt.shape[1]):
        a = torch.exp(-dt[:, t, :, None] * A)
        if negative:
            a = 2 * a - 1
        h = a * h + x[:, t, :, None] * B[:, t, None, :]
        ys.append(torch.einsum("bdn,bn->bd", h, C[:, t]))
    return torch.stack(ys, 1), h


def _run(fn, ins, cot):
    ins = [t.detach().clone().requires_grad_() for t in ins]
    y, h_last = fn(*ins)
    grads = torch.autograd.grad((y, h_last), ins, cot)
    return (y.detach(), h_last.detach(), *grads)


def _cot(y_shape, h_shape, seed=9, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(y_shape, generator=g, dtype=torch.float64).to(dtype),
            torch.randn(h_shape, generator=g, dtype=torch.float64).to(dtype))  # fmt: skip


def _assert_close(ref, got, tol):
    for name, r, x in zip(NAMES, ref, got):
        assert err_ratio(x, r) <= tol, (name, err_ratio(x, r))


@pytest.mark.parametrize("negative", [False, True])
@pytest.mark.parametrize("chunk", [None, 1, 4, 7, 100])
@pytest.mark.parametrize("hard", [False, True])
def test_fused_matches_the_definition_and_the_reference(negative, chunk, hard):
    ins = _case(hard=hard, seed=chunk or 0)
    cot = _cot((2, 23, 3), (2, 3, 4))
    loop = _run(lambda *t: _loop(*t, negative), ins, cot)
    ref = _run(lambda *t: selective_scan(*t, negative=negative, impl="naive"), ins, cot)
    got = _run(lambda *t: selective_scan(*t, negative=negative, impl="torch", chunk=chunk), ins, cot)
    _assert_close(loop, ref, 1e-12)
    _assert_close(loop, got, 1e-12)
    assert not any(torch.isnan(t).any() for t in got)


def test_hard_eigenvalues_exact():
    """Δ·A = 800: a = 0 resets the state (h_t = x_t B_t exactly) and with ``negative`` a = −1 flips it."""
    dt = torch.tensor([[[0.0], [800.0], [0.0]]], dtype=torch.float64)
    x = torch.tensor([[[0.0], [1.0], [0.0]]], dtype=torch.float64)
    A, B = torch.ones(1, 1, dtype=torch.float64), torch.ones(1, 3, 1, dtype=torch.float64)
    h0 = torch.full((1, 1, 1), 3.0, dtype=torch.float64)
    for impl in ("naive", "torch"):
        y, _ = selective_scan(dt, x, A, B, B, h0, impl=impl)  # a = 1, 0, 1
        assert y[0, :, 0].tolist() == [3.0, 1.0, 1.0]
        y, _ = selective_scan(dt, x, A, B, B, h0, negative=True, impl=impl)  # a = 1, −1, 1
        assert y[0, :, 0].tolist() == [3.0, -2.0, -2.0]


def test_gradcheck_chunked():
    ins = tuple(t.requires_grad_() for t in _case(2, 9, 2, 3, seed=4))
    for negative in (False, True):
        fn = lambda *t, negative=negative: selective_scan(*t, negative=negative, impl="torch", chunk=4)  # noqa: E731
        assert torch.autograd.gradcheck(fn, ins)


def test_float32_within_1e5_and_bfloat16_within_1e2():
    ins = _case(2, 300, 8, 4, seed=3)
    cot = _cot((2, 300, 8), (2, 8, 4))
    ref = _run(lambda *t: _loop(*t, True), ins, cot)
    fused = lambda *t: selective_scan(*t, negative=True, impl="torch")  # noqa: E731
    got = _run(fused, [t.float() for t in ins], [c.float() for c in cot])
    _assert_close(ref, got, 1e-5)
    low = [t.bfloat16() for t in ins]
    ref = _run(lambda *t: _loop(*t, True), [t.double() for t in low], cot)  # the reference on the rounded inputs
    _assert_close(ref, _run(fused, low, cot), 1e-2)


def test_inference_path_equals_the_training_path():
    """Without gradients the fused path keeps no chunk states; its outputs are the same numbers."""
    ins = _case(2, 50, 3, 4, seed=6)
    with torch.no_grad():
        y, h_last = selective_scan(*ins, negative=True, impl="torch", chunk=8)
    y2, h2 = selective_scan(*(t.clone().requires_grad_() for t in ins), negative=True, impl="torch", chunk=8)
    assert torch.equal(y, y2.detach()) and torch.equal(h_last, h2.detach()) and not y.requires_grad


def test_empty_sequence():
    dt, x, A, B, C, h0 = (t[:, :0] if t.dim() == 3 and t.shape[1] == 23 else t for t in _case())
    y, h_last = selective_scan(dt, x, A, B, C, h0, impl="torch")
    assert y.shape == (2, 0, 3) and torch.equal(h_last, h0)


@pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") != "1", reason="needs triton under the interpreter")
def test_triton_matches_under_interpreter():
    pytest.importorskip("triton")
    ins = _case(2, 6, 2, 3, hard=True, seed=5)
    cot = _cot((2, 6, 2), (2, 2, 3))
    ref = _run(lambda *t: _loop(*t, True), ins, cot)
    _assert_close(ref, _run(lambda *t: selective_scan(*t, negative=True, impl="triton"), ins, cot), 1e-10)


@pytest.mark.parametrize("eig_range", [(0, 1), (-1, 1)])
def test_layer_fused_path_equals_its_naive_path(eig_range):
    """SelectiveDiagonal with the fused scan (impl torch) against the same weights with impl naive: outputs, the
    carried state, the input's and every parameter's gradient, in float64; a non-zero learned h_0."""
    torch.manual_seed(0)
    layers = {}
    for impl in ("naive", "torch"):
        torch.manual_seed(0)
        layers[impl] = SelectiveDiagonal(6, 4, eig_range=eig_range, impl=impl).double().train()
        with torch.no_grad():
            layers[impl].h0.copy_(torch.randn(6, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64))
    x0 = torch.randn(2, 37, 6, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    out = {}
    for impl, layer in layers.items():
        x = x0.clone().requires_grad_()
        y, state = layer(x, return_state=True)
        (y.sin().sum() + state["h"].square().sum()).backward()
        out[impl] = [y, state["h"], x.grad] + [p.grad for _, p in sorted(layer.named_parameters())]
    for r, g in zip(out["naive"], out["torch"]):
        assert err_ratio(g, r) <= 1e-12


@pytest.mark.parametrize(
    "change,match",
    [
        (dict(dt=torch.zeros(2, 3)), r"dt has shape \(2, 3\), expected 3 dimensions"),
        (dict(x=torch.zeros(2, 5, 3, dtype=torch.float64)), r"x has shape \(2, 5, 3\), expected \(2, 23, 3\)"),
        (dict(A=torch.zeros(4, 4, dtype=torch.float64)), r"A has shape \(4, 4\), expected \(3, 4\)"),
        (dict(C=torch.zeros(2, 23, 5, dtype=torch.float64)), r"C has shape \(2, 23, 5\), expected \(2, 23, 4\)"),
        (dict(h0=torch.zeros(2, 3, 4)), r"h0 has dtype float32, expected float64"),
        (dict(dt=torch.zeros(2, 23, 3, dtype=torch.long)), r"dt has dtype int64"),
    ],
)
def test_bad_input(change, match):
    args = dict(zip(("dt", "x", "A", "B", "C", "h0"), _case()))
    args.update(change)
    with pytest.raises(ValueError, match=match) as err:
        selective_scan(*args.values())
    assert isinstance(err.value, FsaError) and err.value.args[0].startswith("selective_scan: ")
    with pytest.raises(ValueError, match="unknown impl 'magic'"):
        selective_scan(*_case(), impl="magic")
