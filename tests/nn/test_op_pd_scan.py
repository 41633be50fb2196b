"""pd_scan / pd_st_scan / pd_dict_st_scan (the PD-SSM recurrence h_t = P_t D_t h_{t−1} + b_t): the torch path
against the sequential reference, odd shapes, float64 gradcheck with P given, the surrogate gradient of the column
hardmax against the dense straight-through recurrence (logits given, or a dictionary mixture in time blocks), the
PD-SSM layer's gradients on both paths, and bad input."""

from __future__ import annotations

import pytest
import torch

from fsa2rnn.fsa.errors import FsaError
from fsa2rnn.nn.layers import PDSSM
from fsa2rnn.nn.ops import pd_dict_st_scan, pd_scan, pd_st_scan
from fsa2rnn.nn.ops.pd_scan import torch_pd_dict_st_scan

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _case(bsz, length, n, dtype=torch.complex128, seed=0):
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, n, (bsz, length, n), generator=g)
    diag = torch.randn(bsz, length, n, generator=g, dtype=dtype)
    diag = diag / diag.abs().clamp(min=1)  # |D| ≤ 1, as the layer's
    b = torch.randn(bsz, length, n, generator=g, dtype=dtype)
    h0 = torch.randn(bsz, n, generator=g, dtype=dtype)
    return idx, diag, b, h0


def _dense_reference(idx, diag, b, h0):
    """h_t = A_t h_{t−1} + b_t with A_t the dense matrix: A_t[i, j] = diag_t[j] if idx_t[j] = i."""
    bsz, length, n = b.shape
    a = torch.zeros(bsz, length, n, n, dtype=diag.dtype)
    for bi in range(bsz):
        for t in range(length):
            for j in range(n):
                a[bi, t, idx[bi, t, j], j] = diag[bi, t, j]
    h, out = h0.clone(), []
    for t in range(length):
        h = torch.einsum("bij,bj->bi", a[:, t], h) + b[:, t]
        out.append(h)
    return torch.stack(out, 1)


@pytest.mark.parametrize("shape", [(1, 1, 1), (2, 7, 3), (3, 37, 5), (1, 64, 1), (2, 33, 8)])
@pytest.mark.parametrize("dtype", [torch.complex128, torch.float64])
def test_torch_path_equals_the_references(shape, dtype):
    idx, diag, b, h0 = _case(*shape, dtype=dtype)
    want = _dense_reference(idx, diag, b, h0)
    for impl in ("naive", "torch"):
        assert torch.allclose(pd_scan(idx, diag, b, h0, impl=impl), want, atol=1e-12), impl
    zero = torch.zeros_like(h0)
    assert torch.allclose(pd_scan(idx, diag, b, impl="torch"), _dense_reference(idx, diag, b, zero), atol=1e-12)


def test_empty_sequence_and_float32():
    idx, diag, b, h0 = _case(2, 0, 4)
    assert pd_scan(idx, diag, b, h0, impl="torch").shape == (2, 0, 4)
    idx, diag, b, h0 = _case(2, 50, 6, dtype=torch.complex64)
    fast = pd_scan(idx, diag, b, h0, impl="torch")
    ref = pd_scan(idx, diag.to(torch.complex128), b.to(torch.complex128), h0.to(torch.complex128), impl="naive")
    assert fast.dtype == torch.complex64 and torch.allclose(fast.to(torch.complex128), ref, atol=1e-4)


@pytest.mark.parametrize("impl", ["naive", "torch"])
def test_gradcheck_with_p_given(impl):
    idx, diag, b, h0 = _case(2, 9, 3)
    args = [t.clone().requires_grad_(True) for t in (diag, b, h0)]
    assert torch.autograd.gradcheck(lambda d, bb, h: pd_scan(idx, d, bb, h, impl=impl), args)


def test_torch_gradients_equal_the_naive_ones():
    idx, diag, b, h0 = _case(3, 41, 5)
    weight = torch.randn(3, 41, 5, dtype=torch.complex128, generator=torch.Generator().manual_seed(9))
    grads = {}
    for impl in ("naive", "torch"):
        args = [t.clone().requires_grad_(True) for t in (diag, b, h0)]
        loss = (pd_scan(idx, *args, impl=impl) * weight).real.sum()
        grads[impl] = torch.autograd.grad(loss, args)
    for g1, g2 in zip(grads["naive"], grads["torch"]):
        assert torch.allclose(g1, g2, atol=1e-11)


@pytest.mark.parametrize("shape", [(1, 1, 2), (2, 13, 4), (3, 30, 7)])
@pytest.mark.parametrize("dtype", [torch.complex128, torch.float64])
def test_surrogate_gradient_equals_the_dense_straight_through(shape, dtype):
    """The torch path (hard index scan + zero-valued surrogate drive) has the value of the hard recurrence and the
    gradient of the dense recurrence (P + S − sg S) D h + b: in the logits, diag, b and h0."""
    bsz, length, n = shape
    idx, diag, b, h0 = _case(bsz, length, n, dtype=dtype, seed=1)
    logits = torch.randn(bsz, length, n, n, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    weight = torch.randn(bsz, length, n, dtype=dtype, generator=torch.Generator().manual_seed(3))
    out, grads = {}, {}
    for impl in ("naive", "torch"):
        args = [t.clone().requires_grad_(True) for t in (logits, diag, b, h0)]
        h, got_idx = pd_st_scan(*args, impl=impl)
        assert torch.equal(got_idx, logits.argmax(-2))
        out[impl] = h
        loss = (h * weight).real.sum() + (h.abs() ** 2).sum() * 0.1
        grads[impl] = torch.autograd.grad(loss, args)
    hard = pd_scan(logits.argmax(-2), diag, b, h0, impl="naive")
    assert torch.allclose(out["naive"], hard, atol=1e-12) and torch.allclose(out["torch"], hard, atol=1e-12)
    for name, g1, g2 in zip(("logits", "diag", "b", "h0"), grads["naive"], grads["torch"]):
        assert torch.allclose(g1, g2, atol=1e-10), name
    assert grads["torch"][0].abs().sum() > 0
    # each column's gradient sums to zero (a column softmax's Jacobian)
    assert torch.allclose(grads["torch"][0].sum(-2), torch.zeros(bsz, length, n, dtype=torch.float64), atol=1e-10)


@pytest.mark.parametrize("block", [None, 1, 50])
def test_dictionary_surrogate_gradient_equals_the_naive_one(block):
    """pd_dict_st_scan's torch path (column argmax and surrogate per time block, logits recomputed in the backward
    pass) against the dense straight-through recurrence of the mixture: states, indices, and the gradients in the
    mixture weights, the dictionary, diag, b and h0."""
    bsz, length, n, k = 2, 23, 4, 3
    _, diag, b, h0 = _case(bsz, length, n, seed=4)
    g = torch.Generator().manual_seed(5)
    weights = torch.softmax(torch.randn(bsz, length, k, generator=g, dtype=torch.float64), -1)
    dictionary = torch.randn(k, n, n, generator=g, dtype=torch.float64)
    weight = torch.randn(bsz, length, n, dtype=torch.complex128, generator=g)
    out, grads = {}, {}
    for impl in ("naive", "torch"):
        args = [t.clone().requires_grad_(True) for t in (weights, dictionary, diag, b, h0)]
        if impl == "torch" and block is not None:
            h, idx = torch_pd_dict_st_scan(*args, block=block * n * n * bsz)
        else:
            h, idx = pd_dict_st_scan(*args, impl=impl)
        out[impl] = (h, idx)
        grads[impl] = torch.autograd.grad((h * weight).real.sum(), args)
    assert torch.equal(out["naive"][1], out["torch"][1])
    assert torch.allclose(out["naive"][0], out["torch"][0], atol=1e-12)
    for name, g1, g2 in zip(("weights", "dictionary", "diag", "b", "h0"), grads["naive"], grads["torch"]):
        assert torch.allclose(g1, g2, atol=1e-10), name
    assert grads["torch"][1].abs().sum() > 0 and grads["torch"][0].abs().sum() > 0
    with torch.no_grad():  # no gradient wanted: the hard scan alone, the same states
        h, idx = pd_dict_st_scan(weights, dictionary, diag, b, h0)
    assert torch.equal(idx, out["naive"][1]) and torch.allclose(h, out["naive"][0], atol=1e-12)


def test_layer_dictionary_gradient_on_both_paths():
    torch.manual_seed(0)
    layer = PDSSM(6, 5, n_dict=8, impl="naive").double()
    x = torch.randn(2, 17, 6, dtype=torch.float64)
    grads = {}
    for impl in ("naive", "torch"):
        layer.impl = impl
        layer.zero_grad()
        (layer(x) ** 2).sum().backward()
        grads[impl] = {k: p.grad.clone() for k, p in layer.named_parameters()}
    for k, g in grads["naive"].items():
        assert torch.allclose(g, grads["torch"][k], atol=1e-10), k
    assert grads["torch"]["dictionary"].abs().sum() > 0 and grads["torch"]["selector.weight"].abs().sum() > 0


def _zeros(*shape):
    return torch.zeros(*shape, dtype=torch.float64)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda i, d, b, h: pd_scan(i + 5, d, b, h), "idx must lie"),
        (lambda i, d, b, h: pd_scan(i.double(), d, b, h), "integer"),
        (lambda i, d, b, h: pd_scan(i, d, b.to(torch.complex64), h), "dtype"),
        (lambda i, d, b, h: pd_scan(i, d, b[:, :2], h), "shape"),
        (lambda i, d, b, h: pd_scan(i, d, b, h[:, :1]), "h0"),
        (lambda i, d, b, h: pd_scan(i, d, b, h, impl="cuda"), "impl"),
        (lambda i, d, b, h: pd_st_scan(torch.zeros(2, 3, 4, 4), d, b, h), "logits"),
        (lambda i, d, b, h: pd_dict_st_scan(_zeros(2, 3, 5), _zeros(4, 4, 4), d, b), "weights"),
        (lambda i, d, b, h: pd_dict_st_scan(_zeros(2, 3, 5), _zeros(5, 3, 3), d, b), "dictionary"),
    ],
)
def test_bad_input(call, match):
    idx, diag, b, h0 = _case(2, 3, 4)
    with pytest.raises(FsaError, match=match):
        call(idx, diag, b, h0)
