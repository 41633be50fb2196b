"""delta_product: every path against the sequential reference, and the reference against explicit matrices.

Oracles: ``_matrix_oracle`` builds each factor I − β k kᵀ as a dense float64 numpy matrix (independent of every
path's algebra); the naive path is checked against it, every other path against naive — float64 to 1e-10 (outputs,
final state, every input's gradient including h0), float32 to a relative RMSE of 1e-5, bfloat16 to 1e-2 against
float64 on the same rounded inputs. β samples 0, 1 and 2 exactly and (1, 2); keys repeat on purpose.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import err_ratio

from fsa2rnn.nn.ops import delta_product
from fsa2rnn.nn.ops.checks import OpInputError
from fsa2rnn.nn.ops.delta_product import triton as dp_triton

pytestmark = pytest.mark.usefixtures("one_torch_thread")
needs_triton = pytest.mark.skipif(not dp_triton.HAS_TRITON, reason="triton is not installed")


def _inputs(bsz, length, heads, dk, dv, n_h, *, dtype=torch.float64, seed=0, h0=True, unit_keys=True):
    """Random inputs whose β hits the hard values on purpose (0, 1, 2 exactly, (1, 2), (0, 2)) and whose keys
    repeat: every fifth step reuses the previous step's key (across tokens and inside a token)."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(bsz, length, heads, dk, generator=g, dtype=torch.float64)
    k = torch.randn(bsz, length * n_h, heads, dk, generator=g, dtype=torch.float64)
    for r in range(1, length * n_h, 5):
        k[:, r] = k[:, r - 1]
    k = k.view(bsz, length, n_h, heads, dk)
    if unit_keys:
        k = torch.nn.functional.normalize(k, dim=-1)
    else:  # used as given: norms in [0.5, 1]
        k = torch.nn.functional.normalize(k, dim=-1) * (0.5 + 0.5 * torch.rand(k.shape[:-1], generator=g))[..., None]
    v = torch.randn(bsz, length, n_h, heads, dv, generator=g, dtype=torch.float64)
    kind = torch.randint(0, 5, (bsz, length, n_h, heads), generator=g)
    u = torch.rand(kind.shape, generator=g, dtype=torch.float64)
    beta = torch.stack([torch.zeros_like(u), torch.ones_like(u), 2 * torch.ones_like(u), 1 + u, 2 * u])
    beta = beta.gather(0, kind[None]).squeeze(0)
    s0 = torch.randn(bsz, heads, dk, dv, generator=g, dtype=torch.float64) if h0 else None
    return [x.to(dtype) if x is not None else None for x in (q, k, v, beta, s0)]


def _run(impl, xs, lengths=None, seed=1):
    """(o, S_T, and the gradients of every input) under fixed random cotangents of o and S_T."""
    xs = [x.detach().clone().requires_grad_() if x is not None else None for x in xs]
    o, s = delta_product(*xs, lengths=lengths, impl=impl)
    g = torch.Generator().manual_seed(seed)
    do = torch.randn(o.shape, generator=g, dtype=torch.float64).to(o.dtype)
    ds = torch.randn(s.shape, generator=g, dtype=torch.float64).to(s.dtype)
    wrt = [x for x in xs if x is not None]
    grads = torch.autograd.grad((o, s), wrt, (do, ds))
    return [o.detach(), s.detach(), *grads]


def _assert_close(got, ref, tol=1e-10):
    names = ["o", "S_T", "dq", "dk", "dv", "dbeta", "dh0"]
    for name, a, b in zip(names, got, ref):
        assert a.shape == b.shape and a.dtype == b.dtype, name
        scale = max(1.0, float(b.abs().max())) if b.numel() else 1.0
        err = float((a - b).abs().max()) if b.numel() else 0.0
        assert err <= tol * scale, f"{name}: max error {err:.3g} (scale {scale:.3g})"


def _matrix_oracle(q, k, v, beta, h0, lengths=None):
    """The contract with dense matrices, in numpy float64: S ← (I − β k kᵀ) S + β k vᵀ, o = Sᵀ q."""
    q, k, v, beta = (x.double().numpy() for x in (q, k, v, beta))
    bsz, length, heads, dk = q.shape
    n_h, dv = k.shape[2], v.shape[-1]
    o = np.zeros((bsz, length, heads, dv))
    s_t = np.zeros((bsz, heads, dk, dv))
    for b in range(bsz):
        n = length if lengths is None else int(lengths[b])
        for h in range(heads):
            S = np.zeros((dk, dv)) if h0 is None else h0[b, h].double().numpy().copy()
            for t in range(n):
                for j in range(n_h):
                    kk, bb = k[b, t, j, h], beta[b, t, j, h]
                    S = (np.eye(dk) - bb * np.outer(kk, kk)) @ S + bb * np.outer(kk, v[b, t, j, h])
                o[b, t, h] = S.T @ q[b, t, h]
            s_t[b, h] = S
    return o, s_t


# ------------------------------------------------------------------------------------------------------------------
# the reference against explicit matrices


@pytest.mark.parametrize("n_h, unit_keys", [(1, True), (2, True), (3, False)])
def test_naive_matches_matrix_oracle(n_h, unit_keys):
    xs = _inputs(2, 9, 2, 3, 2, n_h, unit_keys=unit_keys)
    lengths = torch.tensor([9, 4])
    o, s = delta_product(*xs, lengths=lengths, impl="naive")
    o_ref, s_ref = _matrix_oracle(*xs, lengths)
    np.testing.assert_allclose(o.numpy(), o_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(s.numpy(), s_ref, rtol=0, atol=1e-12)


@needs_triton
def test_hard_beta_semantics():
    """β = 0 is the identity, β = 1 writes v along k exactly (Sᵀk = v after the step, for a unit key), β = 2 with
    v = 0 is a reflection, so the same key twice restores S."""
    g = torch.Generator().manual_seed(3)
    dk, dv = 4, 3
    key = torch.nn.functional.normalize(torch.randn(dk, generator=g, dtype=torch.float64), dim=0)
    h0 = torch.randn(1, 1, dk, dv, generator=g, dtype=torch.float64)
    q = torch.randn(1, 2, 1, dk, generator=g, dtype=torch.float64)
    k = key.expand(1, 2, 1, 1, dk).clone()
    val = torch.randn(1, 2, 1, 1, dv, generator=g, dtype=torch.float64)
    for impl in ("naive", "torch", "triton"):
        _, s = delta_product(q, k, val, torch.zeros(1, 2, 1, 1, dtype=torch.float64), h0, impl=impl)
        torch.testing.assert_close(s, h0, rtol=0, atol=1e-14)
        _, s = delta_product(q, k, val, torch.ones(1, 2, 1, 1, dtype=torch.float64), h0, impl=impl)
        torch.testing.assert_close(s[0, 0].T @ key, val[0, 1, 0, 0], rtol=0, atol=1e-13)
        _, s = delta_product(
            q, k, torch.zeros_like(val), torch.full((1, 2, 1, 1), 2.0, dtype=torch.float64), h0, impl=impl
        )
        torch.testing.assert_close(s, h0, rtol=0, atol=1e-13)


# ------------------------------------------------------------------------------------------------------------------
# every path against naive


@pytest.mark.parametrize(
    "bsz, length, heads, dk, dv, n_h",
    [(2, 1, 2, 4, 3, 2), (2, 63, 2, 5, 3, 2), (1, 100, 3, 4, 6, 3), (2, 1000, 1, 4, 4, 1), (1, 130, 1, 8, 8, 2)],
)
def test_torch_float64(bsz, length, heads, dk, dv, n_h):
    xs = _inputs(bsz, length, heads, dk, dv, n_h, seed=length, h0=length != 63)  # h0 = None: zeros
    _assert_close(_run("torch", xs), _run("naive", xs))


@pytest.mark.parametrize("chunk", [1, 2, 5, 64])
def test_torch_chunk_sizes(chunk):
    from fsa2rnn.nn.ops.delta_product.chunk import chunk_delta_product

    xs = _inputs(2, 11, 1, 3, 2, 2, seed=chunk)
    lengths = torch.tensor([11, 6])
    got = chunk_delta_product(*xs, lengths, chunk=chunk)
    ref = delta_product(*xs, lengths=lengths, impl="naive")
    for a, b in zip(got, ref):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


def test_padded_batch_is_each_sequence_alone():
    """With lengths, each sequence gives what it gives alone (naive on its own prefix), o = 0 past its length, and
    no gradient reaches the padding."""
    lengths = torch.tensor([100, 63, 1, 0])
    xs = _inputs(4, 100, 2, 4, 3, 2, seed=5)
    for impl in ("naive", "torch"):
        res = _run(impl, xs, lengths)
        o, s, grads = res[0], res[1], res[2:]
        for b, n in enumerate(lengths.tolist()):
            alone = delta_product(*(x[b : b + 1, :n] for x in xs[:4]), xs[4][b : b + 1], impl="naive")
            torch.testing.assert_close(o[b : b + 1, :n], alone[0], rtol=0, atol=1e-12)
            torch.testing.assert_close(s[b : b + 1], alone[1], rtol=0, atol=1e-12)
            assert not o[b, n:].any()
            for grad in grads[:4]:
                assert not grad[b, n:].any()
        if impl == "torch":
            _assert_close(res, _run("naive", xs, lengths))


@pytest.mark.parametrize("n_h", [1, 2])
def test_float32_rel_rmse(n_h):
    xs = _inputs(2, 200, 2, 8, 8, n_h, dtype=torch.float32, seed=7)
    ref = _run("naive", [x.double() for x in xs])
    for impl in ("naive", "torch"):
        for got, want in zip(_run(impl, xs), ref):
            assert got.dtype == torch.float32
            assert err_ratio(got, want) <= 1e-5


def test_bfloat16_rel_rmse():
    """Against float64 on the same rounded inputs (the rounding of the inputs is not the op's error)."""
    xs = _inputs(2, 64, 2, 8, 8, 2, dtype=torch.bfloat16, seed=8)
    ref = _run("naive", [x.double() for x in xs])
    for got, want in zip(_run("torch", xs), ref):
        assert got.dtype == torch.bfloat16
        assert err_ratio(got, want) <= 1e-2


def test_gradcheck_naive_and_torch():
    g = torch.Generator().manual_seed(11)
    bsz, length, heads, dk, dv, n_h = 2, 5, 1, 3, 2, 2
    q = torch.randn(bsz, length, heads, dk, generator=g, dtype=torch.float64)
    k = torch.randn(bsz, length, n_h, heads, dk, generator=g, dtype=torch.float64)
    k[:, 2, 1] = k[:, 2, 0]
    v = torch.randn(bsz, length, n_h, heads, dv, generator=g, dtype=torch.float64)
    beta = 0.05 + 1.9 * torch.rand(bsz, length, n_h, heads, generator=g, dtype=torch.float64)  # FD stays in [0, 2]
    h0 = torch.randn(bsz, heads, dk, dv, generator=g, dtype=torch.float64)
    lengths = torch.tensor([5, 3])
    xs = [x.requires_grad_() for x in (q, k, v, beta, h0)]
    for impl in ("naive", "torch"):
        fn = lambda *x, impl=impl: delta_product(*x, lengths=lengths, impl=impl)  # noqa: E731
        assert torch.autograd.gradcheck(fn, xs)


def test_auto_on_cpu_is_torch():
    xs = _inputs(1, 20, 1, 3, 3, 2)
    for a, b in zip(delta_product(*xs), delta_product(*xs, impl="torch")):
        assert torch.equal(a, b)


# ------------------------------------------------------------------------------------------------------------------
# the Triton kernels under the interpreter (tiny sizes)


@needs_triton
@pytest.mark.parametrize(
    "bsz, length, heads, dk, dv, n_h, h0, lengths",
    [(1, 1, 1, 4, 3, 1, True, None), (3, 7, 2, 3, 5, 2, True, (7, 3, 0)), (1, 6, 1, 4, 4, 3, False, None)],
)
def test_triton_float64(monkeypatch, bsz, length, heads, dk, dv, n_h, h0, lengths):
    monkeypatch.setattr(dp_triton, "CHECKPOINT_STEPS", 4)  # several checkpoint chunks and a partial last one
    xs = _inputs(bsz, length, heads, dk, dv, n_h, h0=h0, seed=length)
    lens = torch.tensor(lengths) if lengths is not None else None
    _assert_close(_run("triton", xs, lens), _run("naive", xs, lens))


@needs_triton
def test_triton_value_blocks(monkeypatch):
    """dv wider than one value block: the partial sums of dq, dk and dβ over the blocks."""
    monkeypatch.setattr(dp_triton, "_blocks", lambda dk, dv, n_h: (4, 2, 2))
    xs = _inputs(1, 4, 1, 3, 5, 2, seed=2)
    _assert_close(_run("triton", xs), _run("naive", xs))


@needs_triton
def test_triton_float32_and_bfloat16():
    for dtype, tol in ((torch.float32, 1e-5), (torch.bfloat16, 1e-2)):
        xs = _inputs(1, 6, 1, 4, 4, 2, dtype=dtype, seed=4)
        ref = _run("naive", [x.double() for x in xs])
        for got, want in zip(_run("triton", xs), ref):
            assert got.dtype == dtype
            assert err_ratio(got, want) <= tol


# ------------------------------------------------------------------------------------------------------------------
# bad input


def test_bad_input_names_the_tensor():
    q, k, v, beta, h0 = _inputs(2, 3, 2, 4, 3, 2)
    cases = [
        ((q[0], k, v, beta), "q has shape (3, 2, 4)"),
        ((q, k[:, :, :, :1], v, beta), "k has shape (2, 3, 2, 1, 4)"),
        ((q, k, v[:, :2], beta), "v has shape (2, 2, 2, 2, 3)"),
        ((q, k, v, beta[..., :1]), "beta has shape (2, 3, 2, 1)"),
        ((q, k, v, beta, h0[:, :, :3]), "h0 has shape (2, 2, 3, 3)"),
        ((q, k.float(), v, beta), "k has dtype float32, expected float64"),
        ((q, k, v, beta, h0.float()), "h0 has dtype float32"),
        ((q.long(), k, v, beta), "q has dtype int64"),
        ((q, k, v, beta + 0.5), "beta has shape (2, 3, 2, 2) with values in"),
        ((q, k, v, beta - 0.01), "expected values in [0, 2]"),
        ((q, k, v, beta * float("nan")), "beta has shape"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
            delta_product(*args)
    with pytest.raises(OpInputError, match="lengths"):
        delta_product(q, k, v, beta, lengths=torch.tensor([3, 4]))
    with pytest.raises(OpInputError, match="lengths"):
        delta_product(q, k, v, beta, lengths=torch.tensor([3.0, 1.0]))
    with pytest.raises(OpInputError, match="unknown impl"):
        delta_product(q, k, v, beta, impl="cuda")


def test_fla_needs_fla_on_cuda():
    xs = _inputs(1, 2, 1, 2, 2, 1)
    with pytest.raises(RuntimeError, match="fla"):
        delta_product(*xs, impl="fla")
