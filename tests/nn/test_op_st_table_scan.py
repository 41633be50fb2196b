"""st_table_scan: exact hard-table forward (against brute force and the table scan) and the straight-through backward
(against autograd through the sequential recurrence and NFSMLayer.relaxed_forward, and finite differences of the
relaxed recurrence), for the naive, torch and Triton (interpreter) paths."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fsa2rnn.nn.nfsm import NFSMLayer
from fsa2rnn.nn.ops import st_table_scan
from fsa2rnn.nn.ops.checks import OpInputError
from fsa2rnn.nn.ops.st_table_scan import gumbel_noise
from fsa2rnn.nn.ops.st_table_scan.torch_scan import adjoint_scan
from fsa2rnn.nn.ops.table_scan import table_scan, triton_available

pytestmark = pytest.mark.usefixtures("one_torch_thread")
needs_triton = pytest.mark.skipif(not triton_available("cpu"), reason="triton interpreter not available")


def _problem(seed, bsz, length, heads, d, dtype=torch.float64, ties=False):
    g = torch.Generator().manual_seed(seed)
    if ties:  # small integers: many rows with several maxima
        logits = torch.randint(0, 3, (bsz, length, heads, d, d), generator=g).to(dtype)
    else:
        logits = torch.randn(bsz, length, heads, d, d, generator=g, dtype=dtype)
    gumbel = gumbel_noise(logits.shape, generator=g, dtype=dtype)
    h0 = torch.randint(0, d, (bsz, heads), generator=g)
    cot = torch.randn(bsz, length, heads, d, generator=g, dtype=dtype)
    return logits, gumbel, h0, cot


def _brute_indices(z: np.ndarray, h0: np.ndarray, lengths) -> np.ndarray:
    """Plain loops: h_t = first argmax of the row z_t[h_{t−1}, ·]; −1 past each length."""
    bsz, length, heads, d, _ = z.shape
    out = np.full((bsz, length, heads), -1, dtype=np.int64)
    for b in range(bsz):
        for h in range(heads):
            k = int(h0[b, h])
            for t in range(int(lengths[b]) if lengths is not None else length):
                row = [float(x) for x in z[b, t, h, k]]
                k = max(range(d), key=lambda j: (row[j], -j))
                out[b, t, h] = k
    return out


def _grads(impl, logits, gumbel, h0, cot, *, tau=0.5, lengths=None, **kw):
    lg = logits.detach().clone().requires_grad_()
    gm = None if gumbel is None else gumbel.detach().clone().requires_grad_()
    states, idx = st_table_scan(lg, h0, tau=tau, gumbel=gm, lengths=lengths, impl=impl, **kw)
    wrt = [lg] if gm is None else [lg, gm]
    return states, idx, torch.autograd.grad((states * cot).sum(), wrt)


def _rel_rmse(a: torch.Tensor, ref: torch.Tensor) -> float:
    a, ref = a.double(), ref.double()
    return float((a - ref).pow(2).mean().sqrt() / ref.pow(2).mean().sqrt().clamp_min(1e-300))


# ---------------------------------------------------------------------------------------------------- forward


@given(seed=st.integers(0, 10**6), bsz=st.integers(1, 3), length=st.integers(1, 40), heads=st.integers(1, 3),
       d=st.integers(1, 7), ties=st.booleans(), noise=st.booleans())  # fmt: skip
@settings(max_examples=25)
def test_forward_is_the_composition_of_hard_tables(seed, bsz, length, heads, d, ties, noise):
    logits, gumbel, h0, _ = _problem(seed, bsz, length, heads, d, ties=ties)
    gumbel = gumbel if noise else None
    lengths = torch.randint(0, length + 1, (bsz,), generator=torch.Generator().manual_seed(seed))
    z = logits if gumbel is None else logits + gumbel
    ref = _brute_indices(z.numpy(), h0.numpy(), lengths.numpy())
    # the existing exact table scan, one sequence per (batch row, head)
    tables = z.argmax(-1).transpose(1, 2).reshape(bsz * heads, length, d)
    scan = table_scan(tables, h0.reshape(-1), lengths.repeat_interleave(heads), impl="naive")
    assert np.array_equal(scan.view(bsz, heads, length).transpose(1, 2).numpy(), ref)
    for impl in ("naive", "torch"):
        states, idx = st_table_scan(logits, h0, gumbel=gumbel, lengths=lengths, impl=impl)
        assert idx.dtype == torch.long and np.array_equal(idx.numpy(), ref)
        onehot = torch.nn.functional.one_hot(idx.clamp(min=0), d).double() * (idx >= 0)[..., None]
        assert torch.equal(states, onehot)  # exactly one-hot, zero past the lengths


def test_auto_is_torch_on_cpu_and_no_grad_forward():
    logits, gumbel, h0, _ = _problem(1, 2, 30, 2, 4)
    with torch.no_grad():
        a = st_table_scan(logits, h0, gumbel=gumbel)
    b = st_table_scan(logits, h0, gumbel=gumbel, impl="torch")
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


# ---------------------------------------------------------------------------------------------------- backward


@pytest.mark.parametrize("length", [1, 63, 100, 1000])
def test_backward_equals_autograd_through_the_recurrence_float64(length):
    logits, gumbel, h0, cot = _problem(length, 3, length, 2, 4)
    lengths = torch.tensor([length, max(1, length // 2), 0])
    for lens in (None, lengths):
        ref_s, ref_i, ref_g = _grads("naive", logits, gumbel, h0, cot, lengths=lens)
        s, i, g = _grads("torch", logits, gumbel, h0, cot, lengths=lens)
        assert torch.equal(i, ref_i) and torch.equal(s, ref_s)
        for a, r in zip(g, ref_g):
            assert (a - r).abs().max() <= 1e-10 * max(1.0, float(r.abs().max()))
        assert ref_g[0].abs().sum() > 0
        if lens is not None:  # nothing past a length reaches the logits
            assert g[0][1, max(1, length // 2) :].abs().sum() == 0 and g[0][2].abs().sum() == 0


def test_gradient_reaches_only_the_realized_rows():
    logits, gumbel, h0, cot = _problem(5, 2, 50, 3, 6)
    _, idx, (grad, _) = _grads("torch", logits, gumbel, h0, cot)
    prev = torch.cat([h0[:, None], idx[:, :-1]], dim=1)
    rows = torch.nn.functional.one_hot(prev, 6).bool()  # (B, T, H, k)
    assert grad.abs().amax(-1)[~rows].max() == 0
    assert grad.abs().amax(-1)[rows].min() > 0
    assert grad.sum(-1).abs().max() <= 1e-12  # softmax Jacobian rows sum to zero


def test_backward_equals_autograd_through_relaxed_forward():
    """NFSMLayer.relaxed_forward with a seeded generator draws, head by head, the noise gumbel_noise draws."""
    torch.manual_seed(0)
    d, heads, bsz, length = 5, 3, 2, 40
    layer = NFSMLayer(4, [d] * heads, embed_dim=6).double()
    keys = torch.randint(0, 4, (bsz, length), generator=torch.Generator().manual_seed(1))
    h0 = torch.tensor([1, 4, 0])
    cot = torch.randn(bsz, length, heads * d, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    params = [layer.embedding.weight, layer.logits.weight, layer.logits.bias, layer.out_proj.weight]
    out, idx = layer.relaxed_forward(keys, h0, tau=0.5, generator=torch.Generator().manual_seed(3))
    ref = torch.autograd.grad((out * cot).sum(), params)
    gen = torch.Generator().manual_seed(3)
    gumbel = torch.stack(
        [gumbel_noise((bsz, length, d, d), generator=gen, dtype=torch.float64) for _ in range(heads)], 2
    )
    for impl in ("naive", "torch"):
        logits = torch.stack(layer.head_logits(layer.key_logits(keys)), dim=2)  # (B, T, H, d, d)
        states, ours = st_table_scan(logits, h0.expand(bsz, heads), gumbel=gumbel, tau=0.5, impl=impl)
        mine = layer.out_proj(states.reshape(bsz, length, heads * d))
        assert torch.equal(ours, idx) and torch.allclose(mine, out, rtol=0, atol=1e-12)
        got = torch.autograd.grad((mine * cot).sum(), params)
        for a, r in zip(got, ref):
            assert (a - r).abs().max() <= 1e-10 * max(1.0, float(r.abs().max()))
        assert got[1].abs().sum() > 0


class _Probe(torch.autograd.Function):
    """Forward: the relaxed recurrence at θ with the stop-gradient parts frozen at θ0 (a smooth function of θ whose
    value at θ0 is the hard one-hot scan). Backward: the op's straight-through backward at θ0. gradcheck compares
    this backward with finite differences of that recurrence."""

    @staticmethod
    def forward(ctx, theta, theta0, gumbel, h0, lengths, tau, impl):
        ctx.args = (theta0, gumbel, h0, lengths, tau, impl)
        z0, z = theta0 + gumbel, theta + gumbel
        d = z.shape[-1]
        frozen = torch.nn.functional.one_hot(z0.argmax(-1), d).to(z.dtype) - torch.softmax(z0 / tau, -1)
        tables = frozen + torch.softmax(z / tau, -1)
        a = torch.nn.functional.one_hot(h0, d).to(z.dtype)
        out = []
        for t in range(z.shape[1]):
            a = (a.unsqueeze(-1) * tables[:, t]).sum(-2)
            out.append(a)
        states = torch.stack(out, 1)
        if lengths is not None:
            states = states * (torch.arange(z.shape[1])[None, :] < lengths[:, None])[:, :, None, None]
        return states

    @staticmethod
    def backward(ctx, grad_out):
        theta0, gumbel, h0, lengths, tau, impl = ctx.args
        with torch.enable_grad():
            th = theta0.detach().clone().requires_grad_()
            states, _ = st_table_scan(th, h0, tau=tau, gumbel=gumbel, lengths=lengths, impl=impl)
            (grad,) = torch.autograd.grad(states, th, grad_out)
        return grad, None, None, None, None, None, None


@pytest.mark.parametrize("impl", ["naive", "torch"])
@pytest.mark.parametrize("padded", [False, True])
def test_gradcheck_of_the_relaxed_recurrence(impl, padded):
    logits, gumbel, h0, _ = _problem(7, 2, 6, 2, 3)
    lengths = torch.tensor([6, 3]) if padded else None
    theta = logits.clone().requires_grad_()
    assert torch.autograd.gradcheck(
        lambda th: _Probe.apply(th, logits, gumbel, h0, lengths, 0.7, impl), (theta,), eps=1e-6, atol=1e-8
    )


def test_adjoint_scan_against_its_recurrence():
    g = torch.Generator().manual_seed(9)
    n, length, d = 3, 77, 5
    gbar = torch.randn(n, length, d, generator=g, dtype=torch.float64)
    sigma = torch.randint(0, d, (n, length, d), generator=g)
    ref = torch.empty_like(gbar)
    lam = torch.zeros(n, d, dtype=torch.float64)
    for t in range(length - 1, -1, -1):  # λ_t[k] = ḡ_t[k] + λ_{t+1}[σ_{t+1}[k]]
        nxt = sigma[:, t + 1] if t + 1 < length else torch.zeros_like(sigma[:, 0])
        lam = gbar[:, t] + torch.gather(lam, 1, nxt)
        ref[:, t] = lam
    for chunk in (None, 1, 4, 10, 77, 200):
        assert torch.allclose(adjoint_scan(gbar, sigma, chunk), ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.bfloat16, 1e-2), (torch.float16, 1e-2)])
def test_low_precision_against_float64_on_the_rounded_inputs(dtype, tol):
    logits, gumbel, h0, cot = _problem(11, 2, 300, 2, 6, dtype=dtype)
    lengths = torch.tensor([300, 171])
    s, i, (grad, _) = _grads("torch", logits, gumbel, h0, cot, lengths=lengths)
    z = (logits + gumbel).double()  # the op adds in the input dtype: the reference starts from the same values
    ref_s, ref_i, (ref_g,) = _grads("naive", z, None, h0, cot.double(), lengths=lengths)
    assert s.dtype == dtype and grad.dtype == dtype
    assert torch.equal(i, ref_i) and torch.equal(s.double(), ref_s)
    assert _rel_rmse(grad, ref_g) <= tol


def test_heads_of_different_sizes_by_padding():
    """A head of d_i < d: columns j ≥ d_i at −inf are never chosen and get no gradient; rows k ≥ d_i are never read."""
    logits, gumbel, h0, cot = _problem(13, 2, 30, 2, 5)
    logits[:, :, 1, :, 3:] = float("-inf")
    logits[:, :, 1, 3:, :] = 0.0
    h0[:, 1] = h0[:, 1] % 3
    ref_s, ref_i, ref_g = _grads("naive", logits, gumbel, h0, cot)
    s, i, g = _grads("torch", logits, gumbel, h0, cot)
    assert i[:, :, 1].max() < 3 and torch.equal(i, ref_i)
    assert torch.isfinite(g[0]).all() and torch.allclose(g[0], ref_g[0], rtol=0, atol=1e-12)
    assert g[0][:, :, 1, :, 3:].abs().max() == 0


# ---------------------------------------------------------------------------------------------------- Triton


@needs_triton
@pytest.mark.parametrize("bsz,length,heads,d,chunk,noise", [(2, 13, 2, 5, 4, True), (1, 9, 1, 3, 64, False)])
def test_triton_forward_backward_interpreter(bsz, length, heads, d, chunk, noise):
    logits, gumbel, h0, cot = _problem(17, bsz, length, heads, d, ties=not noise)
    gumbel = gumbel if noise else None
    lengths = torch.tensor([length, 6][:bsz])
    ref_s, ref_i, ref_g = _grads("naive", logits, gumbel, h0, cot, lengths=lengths)
    from fsa2rnn.nn.ops.st_table_scan.triton import triton_st_table_scan

    lg = logits.clone().requires_grad_()
    gm = None if gumbel is None else gumbel.clone().requires_grad_()
    s, i = triton_st_table_scan(lg, h0, tau=0.5, gumbel=gm, lengths=lengths, chunk=chunk)
    g = torch.autograd.grad((s * cot).sum(), [lg] if gm is None else [lg, gm])
    assert torch.equal(i, ref_i) and torch.equal(s, ref_s)
    for a, r in zip(g, ref_g):
        assert (a - r).abs().max() <= 1e-10 * max(1.0, float(r.abs().max()))


@needs_triton
@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.bfloat16, 1e-2)])
def test_triton_low_precision(dtype, tol):
    logits, gumbel, h0, cot = _problem(19, 1, 11, 2, 5, dtype=dtype)
    s, i, (grad, _) = _grads("triton", logits, gumbel, h0, cot)
    ref_s, ref_i, (ref_g,) = _grads("naive", (logits + gumbel).double(), None, h0, cot.double())
    assert torch.equal(i, ref_i) and torch.equal(s.double(), ref_s)
    assert _rel_rmse(grad, ref_g) <= tol


# ---------------------------------------------------------------------------------------------------- bad input


def test_bad_inputs_name_the_tensor():
    logits, gumbel, h0, _ = _problem(0, 2, 5, 3, 4)
    cases = [
        (dict(logits=logits[..., :3]), r"logits has shape \(2, 5, 3, 4, 3\)"),
        (dict(logits=logits[0]), r"logits has shape \(5, 3, 4, 4\), expected 5 dimensions"),
        (dict(logits=logits.long()), "logits has dtype int64"),
        (dict(h0=h0[:, :2]), r"h0 has shape \(2, 2\), expected \(2, 3\)"),
        (dict(h0=h0.double()), "h0 has dtype float64"),
        (dict(h0=h0 + 4), r"h0 must lie in \[0, 4\)"),
        (dict(gumbel=gumbel[:, :4]), r"gumbel has shape \(2, 4, 3, 4, 4\), expected \(2, 5, 3, 4, 4\)"),
        (dict(gumbel=gumbel.float()), "gumbel has dtype float32"),
        (dict(lengths=torch.tensor([5, 6])), r"lengths must lie in \[0, 5\]"),
        (dict(lengths=torch.tensor([5])), r"lengths has shape \(1,\)"),
        (dict(tau=0.0), "tau must be"),
        (dict(impl="cuda"), "unknown impl"),
    ]
    base = dict(logits=logits, h0=h0, gumbel=gumbel, lengths=None, tau=0.5, impl="torch")
    for change, message in cases:
        kw = {**base, **change}
        with pytest.raises(OpInputError, match=message):
            st_table_scan(kw.pop("logits"), kw.pop("h0"), **kw)
    big = torch.zeros(1, 1, 1, 257, 257)
    with pytest.raises(ValueError, match=r"logits has shape \(1, 1, 1, 257, 257\).*d ≤ 256"):
        st_table_scan(big, torch.zeros(1, 1, dtype=torch.long), impl="triton")
