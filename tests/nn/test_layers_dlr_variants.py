"""The DLR paper's comparison layers against naive references: rotary embeddings (explicit 2×2 rotations), the
attention block (softmax attention written per query), DSS_exp (the zero-order-hold discretization of the
continuous diagonal state space run as a recurrence, its input matrix by quadrature) and its initialization (the
HiPPO-LegS matrix built from its definition), and DLR-prod as the layer with the prod kernel."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from fsa2rnn.nn.layers import DLR, Attention, DLRProd, DSSExp, build_layer
from fsa2rnn.nn.layers.attention import ROTARY_BASE, rotary
from fsa2rnn.nn.layers.base import ConfigError
from fsa2rnn.nn.layers.dlr import hippo_skew_frequencies
from fsa2rnn.nn.ops import dlr_kernel_conv

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_rotary_is_the_block_rotation_of_roformer():
    d, t = 6, 9
    x = _rand(2, t, d)
    got = rotary(x, torch.arange(t))
    for i in range(t):
        rot = np.zeros((d, d))
        for m in range(d // 2):
            a = i * ROTARY_BASE ** (-2 * m / d)
            rot[2 * m : 2 * m + 2, 2 * m : 2 * m + 2] = [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]
        want = x[:, i].numpy() @ rot.T
        assert np.allclose(got[:, i].numpy(), want, atol=1e-12)
    # ⟨R_i q, R_j k⟩ depends on i − j only
    q, k = _rand(1, 1, d, seed=1).expand(1, 5, d), _rand(1, 1, d, seed=2).expand(1, 5, d)
    rq, rk = rotary(q, torch.arange(5)), rotary(k, torch.arange(5) + 7)
    assert torch.allclose((rq[0, 1] * rk[0, 0]).sum(), (rq[0, 4] * rk[0, 3]).sum(), atol=1e-12)


def test_attention_equals_causal_softmax_attention_written_per_query():
    d, heads, t = 8, 4, 7
    torch.manual_seed(0)
    layer = Attention(d, heads).double()
    x = _rand(2, t, d)
    hd = d // heads
    q, k, v = layer.qkv(x).detach().view(2, t, 3, heads, hd).unbind(2)
    want = torch.zeros(2, t, heads, hd, dtype=torch.float64)
    for b in range(2):
        for h in range(heads):
            rq = rotary(q[b, :, h], torch.arange(t))
            rk = rotary(k[b, :, h], torch.arange(t))
            for i in range(t):
                scores = torch.stack([(rq[i] * rk[j]).sum() / math.sqrt(hd) for j in range(i + 1)])
                want[b, i, h] = (scores.softmax(0)[:, None] * v[b, : i + 1, h]).sum(0)
    ref = layer.out_proj(F.gelu(want.reshape(2, t, d)))
    assert torch.allclose(layer(x), ref, atol=1e-12)
    # no positions: a permutation of the earlier inputs leaves the last output unchanged
    plain = Attention(d, heads, positional="none").double()
    perm = torch.cat([x[:, torch.tensor([2, 0, 1, 4, 3, 5])], x[:, 6:]], 1)
    assert torch.allclose(plain(x)[:, -1], plain(perm)[:, -1], atol=1e-12)
    assert not torch.allclose(layer(x)[:, -1], layer(perm)[:, -1], atol=1e-6)
    with pytest.raises(ConfigError, match="even width"):
        Attention(6, 2)


def test_hippo_skew_frequencies_from_the_hippo_legs_matrix():
    """DSS's initialization: the eigenvalues of the normal part A + PPᵀ of HiPPO-LegS (size 2N) are −1/2 ± iω."""
    n = 6
    size = 2 * n
    a = np.zeros((size, size))
    for i in range(size):
        for j in range(size):
            if i > j:
                a[i, j] = -math.sqrt(2 * i + 1) * math.sqrt(2 * j + 1)
            elif i == j:
                a[i, j] = -(i + 1)
    p = np.sqrt(np.arange(size) + 0.5)
    ev = np.linalg.eigvals(a + np.outer(p, p))
    assert np.allclose(ev.real, -0.5, atol=1e-8)
    want = np.sort(ev.imag[ev.imag > 0])
    assert np.allclose(hippo_skew_frequencies(n).numpy(), want, rtol=1e-5)
    layer = DSSExp(3, n)
    assert torch.allclose(layer.theta[0], hippo_skew_frequencies(n)) and torch.allclose(
        -torch.exp(layer.a), torch.full((3, n), -0.5)
    )
    dt = torch.exp(layer.log_dt)
    assert ((dt >= 1e-3 - 1e-9) & (dt <= 1e-1 + 1e-9)).all()


def test_dss_exp_is_the_zoh_discretization_run_as_a_recurrence():
    """x_k = e^{λΔ} x_{k−1} + B̄ u_k, B̄ = ∫_0^Δ e^{λs} ds (by quadrature), y_k = Re⟨w, x_k⟩ (DSS Prop. 1(a))."""
    h, n, t = 2, 5, 30
    torch.manual_seed(1)
    layer = DSSExp(h, n).double()
    with torch.no_grad():
        layer.log_dt.copy_(torch.log(torch.tensor([0.05, 0.3])))
        layer.a.copy_(_rand(h, n, seed=3) * 0.5)
    lam = (-torch.exp(layer.a) + 1j * layer.theta).detach().numpy()
    dt = torch.exp(layer.log_dt).detach().numpy()[:, None]
    w = (layer.w_re + 1j * layer.w_im).detach().numpy()
    s = np.linspace(0, 1, 20001)[None, None, :] * dt[..., None]  # Simpson's rule on [0, Δ]
    f = np.exp(lam[..., None] * s)
    weights = np.ones(20001)
    weights[1:-1:2], weights[2:-1:2] = 4, 2
    b_bar = (f * weights).sum(-1) * dt / 20000 / 3
    u = _rand(1, t, h, seed=4)
    x = np.zeros((h, n), dtype=complex)
    want = np.zeros((t, h))
    for k in range(t):
        x = np.exp(lam * dt) * x + b_bar * u[0, k].numpy()[:, None]
        want[k] = (w * x).sum(-1).real
    log_lambda, w_bar = layer.params(torch.float64)
    got = dlr_kernel_conv(log_lambda, w_bar, u)[0].detach().numpy()
    assert np.allclose(got, want, atol=1e-10)
    # the layer's two forms agree (convolution and modal recurrence)
    z = _rand(2, 17, h, seed=5)
    assert torch.allclose(layer(z), layer(z, return_state=True)[0], atol=1e-10)


def test_dlr_prod_and_dss_exp_are_the_dlr_layer_configured():
    torch.manual_seed(0)
    prod = DLRProd(4, 5)
    torch.manual_seed(0)
    plain = DLR(4, 5, kernel="prod")
    x = _rand(2, 11, 4).float()
    assert prod.kernel == "prod" and torch.equal(prod(x), plain(x))
    assert build_layer("dss-exp", 4, state_size=3).param == "dss_exp"
    with pytest.raises(ConfigError, match="param"):
        DLR(4, param="dss")
