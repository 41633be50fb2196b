"""The trainable layers of nn/layers: parameterized eigenvalue ranges (reflections reachable exactly, [0, 1] vs
[−1, 1]), shapes, gradients, carried state (chunked = whole), the DLR initialization (K = DFT·w) and its two forms,
the NFSM's exact and straight-through paths, causality, and configuration errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fsa2rnn.nn.layers import (
    DLR,
    LAYERS,
    LSTM,
    NFSM,
    SATURATED_LOGIT,
    ConfigError,
    DeltaNet,
    DeltaProduct,
    SelectiveDiagonal,
    Transformer,
    build_layer,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")

D = 12
SMALL = {
    "deltaproduct": dict(heads=2, head_dim=4, n_h=2),
    "deltanet": dict(heads=2, head_dim=4),
    "mamba": dict(state_size=4),
    "mamba-minus": dict(state_size=4),
    "aussm": dict(state_size=3),
    "pdssm": dict(state_size=5),
    "dlr": dict(state_size=6),
    "dlr-prod": dict(state_size=3),
    "dss-exp": dict(state_size=6),
    "nfsm": dict(heads=[3, 5]),
    "lstm": {},
    "transformer": dict(heads=2),
    "attention": dict(heads=2),
}


def _layer(name: str, seed: int = 0, **kw):
    torch.manual_seed(seed)
    return build_layer(name, D, **{**SMALL[name], **kw}).double()


def _x(b: int = 2, t: int = 23, seed: int = 1) -> torch.Tensor:
    return torch.randn(b, t, D, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _randomize(layer: torch.nn.Module, scale: float, seed: int = 0) -> None:
    """Large random weights push sigmoids and exponentials to their extremes (the ranges' edges)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(scale * torch.randn(p.shape, generator=g, dtype=p.dtype))


# ---------------------------------------------------------------------------------------------------- DeltaProduct
def _one_key_layer(beta_range, key, logit) -> DeltaProduct:
    """d_model = 3, one head, one step: k(x) = key for every x, β logit ``logit``."""
    layer = DeltaProduct(3, heads=1, head_dim=3, n_h=1, beta_range=beta_range, short_conv=False, form="plain").double()
    with torch.no_grad():
        layer.k_proj.weight.copy_(torch.tensor(key, dtype=torch.float64)[:, None].expand(3, 3))
        layer.b_proj.weight.zero_()
        layer.b_proj.bias.fill_(logit)
    return layer


def test_deltaproduct_beta_two_is_an_exact_reflection():
    x = torch.ones(1, 3, dtype=torch.float64)
    axis = _one_key_layer((0, 2), [1.0, 0.0, 0.0], SATURATED_LOGIT)
    assert torch.equal(axis.beta(x), torch.full((1, 1), 2.0, dtype=torch.float64))
    assert torch.equal(axis.transition(x)[0, 0], torch.diag(torch.tensor([-1.0, 1.0, 1.0], dtype=torch.float64)))
    # a generic key: β = 2 exactly, A = I − 2kkᵀ is an involution with eigenvalues {−1, 1, 1}
    gen = _one_key_layer((0, 2), [1.0, -2.0, 2.0], SATURATED_LOGIT)
    a = gen.transition(x)[0, 0]
    k = torch.tensor([1.0, -2.0, 2.0], dtype=torch.float64) / 3
    assert torch.equal(gen.beta(x), torch.full((1, 1), 2.0, dtype=torch.float64))
    assert torch.allclose(a, torch.eye(3, dtype=torch.float64) - 2 * torch.outer(k, k), atol=1e-15)
    assert torch.allclose(a @ a, torch.eye(3, dtype=torch.float64), atol=1e-15)
    ev = torch.linalg.eigvalsh(a)
    assert torch.allclose(ev, torch.tensor([-1.0, 1.0, 1.0], dtype=torch.float64), atol=1e-14)
    # saturation is exact in float32 as well, and β = 0 is reachable; (0, 1) saturates at 1
    for dt in (torch.float32, torch.float64):
        z = torch.tensor([SATURATED_LOGIT, -SATURATED_LOGIT], dtype=dt)
        assert (2 * torch.sigmoid(z)).tolist() == [2.0, 0.0]
    assert torch.equal(_one_key_layer((0, 1), [1.0, 0.0, 0.0], SATURATED_LOGIT).beta(x), torch.ones(1, 1).double())
    # the layer's forward applies the reflection: S_0 = e_0 flips at every token
    with torch.no_grad():
        axis.h0.zero_()
        axis.h0[0, 0, :] = 1.0
        axis.v_proj.weight.zero_()
    for length, sign in ((3, -1.0), (4, 1.0)):
        s = axis(torch.ones(1, length, 3, dtype=torch.float64) / 3, return_state=True)[1]["S"]
        assert torch.equal(s[0, 0, :, 0], torch.tensor([sign, 0.0, 0.0], dtype=torch.float64))


@pytest.mark.parametrize("n_h", [1, 2, 3])
def test_deltaproduct_eigenvalue_ranges_on_random_weights(n_h):
    x = _x(4, 16).reshape(-1, D)
    for beta_range in ((0, 1), (0, 2)):
        layer = DeltaProduct(D, heads=2, head_dim=4, n_h=n_h, beta_range=beta_range, short_conv=False).double()
        for seed in range(3):
            _randomize(layer, 2.0, seed)
            ev = torch.linalg.eigvals(layer.transition(x))
            assert (ev.abs() <= 1 + 1e-12).all()  # ‖A(x)‖ ≤ 1 (Proposition 1)
            if beta_range == (0, 1) and n_h <= 2:  # products of ≤ 2 PSD factors: real spectrum in [0, 1]
                assert (ev.imag.abs() < 1e-9).all() and (ev.real >= -1e-12).all()
            if beta_range == (0, 2):
                assert (ev.real < -0.5).any()  # negative eigenvalues are reached
        assert (layer.beta(x) <= layer.beta_max).all() and (layer.beta(x) >= 0).all()


def test_deltaproduct_transition_is_what_forward_applies():
    layer = _layer("deltaproduct", n_h=3, short_conv=False)
    x = _x(1, 1)
    with torch.no_grad():
        layer.v_proj.weight.zero_()  # no writes: S_1 = A(x_1) S_0
        layer.h0.normal_()
        s1 = layer(x, return_state=True)[1]["S"][0]
    assert torch.allclose(s1, layer.transition(x[0, 0]) @ layer.h0, atol=1e-12)


def test_deltanet_is_one_step():
    assert DeltaNet(D).n_h == 1
    with pytest.raises(ConfigError, match="n_h must be 1"):
        DeltaNet(D, n_h=2)


# ---------------------------------------------------------------------------------------------------- SelectiveDiagonal
def test_selective_diagonal_eigenvalue_ranges():
    x = _x(4, 16)
    for eig, lo in (((0, 1), 0.0), ((-1, 1), -1.0)):
        layer = SelectiveDiagonal(D, 4, eig_range=eig).double()
        for seed in range(3):
            _randomize(layer, 3.0, seed)
            a = layer.transition(x)
            assert a.shape == (4, 16, D, 4)
            assert (a >= lo).all() and (a <= 1).all()
            if lo < 0:
                assert (a < -0.5).any()
            else:
                assert (a < 0.5).any()
    # transition is the diagonal the forward pass uses: one token from h_0 = 0 then a second, y from both
    layer = SelectiveDiagonal(D, 4, short_conv=False).double()
    with torch.no_grad():
        layer.h0.normal_()
    xs = _x(1, 1)
    u, _, dt, b, c, _ = layer._branch(xs, None)
    h = layer.transition(xs[:, 0])[0] * layer.h0 + (dt * u)[0, 0, :, None] * b[0, 0][None]
    want = layer.out_proj(((h * c[0, 0]).sum(-1) + layer.D * u[0, 0]) * torch.nn.functional.silu(_z(layer, xs)))
    assert torch.allclose(layer(xs)[0, 0], want, atol=1e-12)


def _z(layer, xs):
    return layer.in_proj(xs).chunk(2, dim=-1)[1][0, 0]


# ---------------------------------------------------------------------------------------------------- shapes, gradients
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_shapes_and_gradients(name):
    layer = _layer(name).train()
    x = _x().requires_grad_(True)
    y = layer(x)
    assert y.shape == x.shape and torch.isfinite(y).all()
    (y**2).mean().backward()
    assert torch.isfinite(x.grad).all() and x.grad.abs().sum() > 0
    grads = {n: p.grad for n, p in layer.named_parameters()}
    assert all(g is not None and torch.isfinite(g).all() for g in grads.values()), [
        n for n, g in grads.items() if g is None
    ]
    nonzero = sum(bool(g.abs().sum() > 0) for g in grads.values())
    assert nonzero >= len(grads) - 1  # everything learns (DeltaProduct's S_0 can have zero gradient at S_0 = 0)


def test_transition_shapes():
    x = _x(2, 5)
    assert _layer("deltaproduct").transition(x).shape == (2, 5, 2, 4, 4)
    assert _layer("mamba").transition(x).shape == (2, 5, D, 4)
    lam = _layer("dlr").transition(x)
    assert lam.shape == (2, 5, D, 6) and lam.is_complex() and (lam.abs() <= 1).all()
    tables = _layer("nfsm").transition(x)
    assert tables.shape == (2, 5, 2, 5) and tables.dtype == torch.int64
    assert (tables[..., 0, :3] < 3).all() and torch.equal(tables[..., 0, 3:], torch.tensor([3, 4]).expand(2, 5, 2))
    for name in ("lstm", "transformer", "attention"):
        with pytest.raises(NotImplementedError):
            _layer(name).transition(x)


# ---------------------------------------------------------------------------------------------------- carried state
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_chunked_state_equals_whole_sequence(name):
    extra = dict(kernel="prod") if name == "dlr" else {}
    layer = _layer(name, **extra).eval()
    with torch.no_grad():
        if hasattr(layer, "h0"):
            layer.h0.normal_()  # a non-zero learnable initial state
        x = _x(2, 29)
        whole = layer(x)
        y1, s = layer(x[:, :11], return_state=True)
        y2, s = layer(x[:, 11:20], s, True)
        y3 = layer(x[:, 20:], s)
    assert torch.allclose(torch.cat([y1, y2, y3], 1), whole, atol=1e-10, rtol=0)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_set_state_vector_inverts_state_vector(name):
    """set_state_vector(s, v) has vector v, leaves s alone, and continues a word as the state it encodes: from
    state_vector(s) as from s, and from another word's vector (its convolution window grafted) as from that word."""
    layer = _layer(name).eval()
    with torch.no_grad():
        if hasattr(layer, "h0"):
            layer.h0.normal_()
        x, other, rest = _x(3, 11, seed=1), _x(3, 7, seed=2), _x(3, 9, seed=3)
        _, s = layer(x, return_state=True)
        _, t = layer(other, return_state=True)
        v, w = layer.state_vector(s), layer.state_vector(t)
        if v is None:  # no fixed-size state (Transformer) or none exposed
            with pytest.raises(NotImplementedError):
                layer.set_state_vector(s, torch.zeros(3, 1))
            return
        assert not torch.equal(v, w)  # the two words end in different states: setting w changes something
        same, moved = layer.set_state_vector(s, v), layer.set_state_vector(s, w)
        assert torch.equal(layer.state_vector(same), v) and torch.equal(layer.state_vector(moved), w)
        assert torch.equal(layer.state_vector(s), v)  # s itself untouched
        assert torch.equal(layer(rest, same), layer(rest, s))
        grafted = {**t, **{k: s[k] for k in ("conv",) if k in s}}  # moved keeps s's convolution window
        assert torch.equal(layer(rest, moved), layer(rest, grafted))


def test_nfsm_set_state_vector_rounds_to_the_nearest_valid_attractor():
    layer = _layer("nfsm").eval()  # heads [3, 5]: head 0's entries 3, 4 are padding
    idx = torch.tensor([[2, 4], [0, 1]])
    v = layer.state_vector({"indices": idx}).double()
    noisy = v + 0.3 * torch.randn(v.shape, generator=torch.Generator().manual_seed(0), dtype=v.dtype).clamp(-1, 1)
    assert torch.equal(layer.set_state_vector({"indices": idx}, noisy)["indices"], idx)
    pad = torch.zeros(1, 2 * layer.d_max, dtype=torch.float64)
    pad[0, [1, 4, layer.d_max + 3]] = torch.tensor([0.5, 9.0, 1.0], dtype=torch.float64)  # head 0's largest: padding
    assert layer.set_state_vector({"indices": idx[:1]}, pad)["indices"].tolist() == [[1, 3]]


@pytest.mark.parametrize("kernel", ["re", "prod"])
def test_dlr_modal_form_equals_the_convolution(kernel):
    layer = _layer("dlr", kernel=kernel)
    x = _x(2, 40)
    conv = layer(x)  # FFT convolution
    modal, state = layer(x, return_state=True)  # diagonal recurrence over diag_scan
    assert torch.allclose(conv, modal, atol=1e-10, rtol=0)
    m = 6 if kernel == "re" else 36
    assert state["x"].shape == (2, D, m)


def test_dlr_initialization_is_the_dft_of_w():
    n = 8
    layer = DLR(2, n, decay_init="zero").double()
    log_lambda, w = layer.params(torch.float64)
    impulse = torch.zeros(1, n, 2, dtype=torch.float64)
    impulse[0, 0] = 1
    from fsa2rnn.nn.ops import dlr_kernel_conv

    kernel = dlr_kernel_conv(log_lambda, w, impulse)[0].T  # (H, L): Re K_k
    dft = n * np.fft.ifft(w.detach().numpy(), axis=-1)  # K_k = Σ_n w_n e^{2πi nk/N}
    assert np.allclose(kernel.detach().numpy(), dft.real, atol=1e-6)  # θ is stored in float32, then cast
    assert np.allclose(layer.theta.detach().numpy(), 2 * np.pi * np.arange(n) / n, atol=1e-6)
    local = DLR(2, n)
    lam = local.transition(torch.zeros(2)).abs()
    assert (lam < 1).all() and (lam > np.exp(-0.25) - 1e-6).all()  # |λ| = exp(−a²), a² = e^r/2 ≤ 1/4


def test_bidirectional_dlr_sees_the_future_and_has_no_state():
    layer = _layer("dlr", bidirectional=True)
    assert not layer.recurrent
    x = _x(1, 20)
    x2 = x.clone()
    x2[:, -1] += 1
    assert not torch.allclose(layer(x)[:, 0], layer(x2)[:, 0])
    with pytest.raises(ConfigError, match="bidirectional"):
        layer(x, return_state=True)


def test_causal_layers_ignore_the_future():
    x = _x(1, 20)
    x2 = x.clone()
    x2[:, 12:] = torch.randn(1, 8, D, dtype=torch.float64)
    for name in sorted(SMALL):  # the built-in layers (a docs block may have registered its own meanwhile)
        layer = _layer(name).eval()
        with torch.no_grad():
            assert torch.allclose(layer(x)[:, :12], layer(x2)[:, :12], atol=1e-12), name


# ---------------------------------------------------------------------------------------------------- NFSM
def _tables_scan(tables: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """Sequential reference: h_t = σ_t(h_{t−1}) per batch element and head."""
    bsz, length, heads, _ = tables.shape
    out = torch.empty(bsz, length, heads, dtype=torch.int64)
    h = h0.clone()
    for t in range(length):
        h = tables[:, t].gather(-1, h[..., None])[..., 0]
        out[:, t] = h
    return out


def test_nfsm_exact_scan_relaxed_forward_and_start():
    layer = _layer("nfsm")
    _randomize(layer, 1.0)
    x = _x(3, 17)
    with torch.no_grad():
        layer.start_logits[0, 2] = 5.0
        layer.start_logits[1, 4] = 5.0
        layer.start_logits[1, 0] = 9.0
    assert layer.start_indices().tolist() == [2, 0]
    want = _tables_scan(layer.transition(x), layer.start_indices().expand(3, 2))
    assert torch.equal(layer.eval().indices(x), want)
    # heads never leave their d_i indices
    assert (want[..., 0] < 3).all() and (want[..., 1] < 5).all()
    # training without noise: the same hard states in value; gradients reach the logits and the start
    layer.train()
    layer.gumbel = False
    states, idx = layer._relaxed(x, None)
    assert torch.equal(idx, want)
    y = layer(x)
    assert torch.allclose(y, layer.eval()(x), atol=1e-12)
    layer.train()
    layer(x).pow(2).sum().backward()
    assert layer.start_logits.grad.abs().sum() > 0 and layer.logits.weight.grad.abs().sum() > 0
    # with noise (seeded), the forward follows the noisy tables: still valid indices
    layer.gumbel = True
    torch.manual_seed(0)
    _, idx = layer._relaxed(x, None)
    assert (idx[..., 0] < 3).all() and (idx[..., 1] < 5).all()
    # the noise scale: a vanishing scale follows the noiseless tables, a large one departs from them
    runs = {}
    for scale in (1e-9, 50.0):
        torch.manual_seed(0)
        runs[scale] = NFSM(layer.logits.in_features, layer.heads, gumbel=scale).to(x.dtype)
        runs[scale].load_state_dict(layer.state_dict())
        torch.manual_seed(1)
        runs[scale] = runs[scale]._relaxed(x, None)[1]
    assert torch.equal(runs[1e-9], want) and not torch.equal(runs[50.0], want)


# ---------------------------------------------------------------------------------------------------- baselines, errors
def test_lstm_and_transformer_states():
    lstm = LSTM(D, hidden=7).double()
    _, s = lstm(_x(2, 5), return_state=True)
    assert s["h"].shape == (1, 2, 7) and s["c"].shape == (1, 2, 7)
    tr = Transformer(D, 3, depth=2).double().eval()
    assert not tr.recurrent
    _, s = tr(_x(2, 5), return_state=True)
    assert s["x"].shape == (2, 5, D)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: DeltaProduct(D, beta_range=(0, 3)), "beta_range"),
        (lambda: DeltaProduct(D, heads=0), "heads"),
        (lambda: SelectiveDiagonal(D, eig_range=(-2, 1)), "eig_range"),
        (lambda: DLR(D, kernel="im"), "kernel"),
        (lambda: DLR(D, decay_init="big"), "decay_init"),
        (lambda: NFSM(D, heads=[]), "heads"),
        (lambda: NFSM(D, heads=[3], tau=0), "tau"),
        (lambda: Transformer(D, positional="rope"), "positional"),
        (lambda: build_layer("gru", D), "unknown layer"),
        (lambda: build_layer("lstm", D, heads=2), "lstm"),
    ],
)
def test_bad_configuration(make, match):
    with pytest.raises(ConfigError, match=match):
        make()


def test_nfsm_exact_tables_in_position_blocks(monkeypatch):
    """The exact forward computes θ for LOGIT_BLOCK entries at a time; any block size gives the tables of the
    whole batch at once (argmax θ per position, identity past each head's size)."""
    from fsa2rnn.nn.layers import nfsm as nfsm_module

    torch.manual_seed(3)
    layer = nfsm_module.NFSM(16, [5, 3]).eval()
    x = torch.randn(3, 11, 16)
    theta = layer.head_logits(x)
    want = torch.where(layer.valid, theta.argmax(-1), torch.arange(5))
    for block in (1, 50, 7 * 2 * 25, 1 << 24):  # one position's entries are 2 · 5² = 50
        monkeypatch.setattr(nfsm_module, "LOGIT_BLOCK", block)
        assert torch.equal(layer.transition(x), want)
    assert layer.transition(x[:, :0]).shape == (3, 0, 2, 5)
