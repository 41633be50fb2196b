"""The baselines of Brandoit et al.'s Table 1 as layers: Mamba⁻ (a configuration of SelectiveDiagonal), AUSSM
(eq. 8 of arXiv 2507.05238) and PD-SSM, each against a step-by-step reference of its recurrence written here from
the papers' equations, their transitions' structure (eigenvalue range, unit modulus, column one-hot), their
initialization, and a short training run of each through SequenceModel and `fsa2rnn train`."""

from __future__ import annotations

import json
import math

import pytest
import torch
import torch.nn.functional as F
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.nn.layers import AUSSM, PDSSM, ConfigError, MambaMinus, SelectiveDiagonal, build_layer
from fsa2rnn.nn.model import SequenceModel

pytestmark = pytest.mark.usefixtures("one_torch_thread")

D = 10


def _x(b=2, t=13, seed=1):
    return torch.randn(b, t, D, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


# ---------------------------------------------------------------------------------------------------- Mamba⁻
def test_mamba_minus_is_the_authors_block():
    torch.manual_seed(0)
    layer = build_layer("mamba-minus", D, state_size=4).double()
    assert isinstance(layer, MambaMinus) and isinstance(layer, SelectiveDiagonal)
    assert layer.conv is None and layer.eig_range == (-1, 1) and "h0" not in dict(layer.named_parameters())
    assert layer.dt_proj[0].out_features == math.ceil(D / 16)  # Mamba's dt_rank = ⌈d_model/16⌉
    assert torch.equal(torch.exp(layer.w.float()), torch.arange(1, 5.0).repeat(D, 1))  # S4D-real A = 1..N
    dt = F.softplus(layer.dt_proj[1].bias)
    assert (dt >= 1e-3 - 1e-9).all() and (dt <= 1e-1 + 1e-9).all()
    x = _x()
    with torch.no_grad():
        got = layer(x)
        # the block step by step: u = SiLU(W_u x), Δ = softplus(W_up W_down u + b), a = 2 exp(−Δ A) − 1,
        # h = a h + Δ u B, y = out((C·h + D u) · SiLU(z)), h_0 = 0
        u, z = layer.in_proj(x).chunk(2, -1)
        u = F.silu(u)
        delta = F.softplus(layer.dt_proj[1](layer.dt_proj[0](u)))
        bb, cc = layer.bc_proj(u).chunk(2, -1)
        h = torch.zeros(2, D, 4, dtype=torch.float64)
        want = []
        for t in range(x.shape[1]):
            a = 2 * torch.exp(-delta[:, t, :, None] * torch.exp(layer.w)) - 1
            h = a * h + (delta[:, t] * u[:, t])[..., None] * bb[:, t, None, :]
            y = (h * cc[:, t, None, :]).sum(-1) + layer.D * u[:, t]
            want.append(layer.out_proj(y * F.silu(z[:, t])))
    assert torch.allclose(got, torch.stack(want, 1), atol=1e-12)
    a = layer.transition(x)
    assert (a > -1).all() and (a <= 1).all()


def test_mamba_minus_lecun_initialization():
    torch.manual_seed(0)
    layer = MambaMinus(256, 4)
    w = layer.in_proj.weight
    assert abs(w.std().item() * math.sqrt(256) - 1) < 0.03 and w.abs().max() <= 2 / math.sqrt(256) / 0.8796 + 1e-6
    assert not (layer.dt_proj[1].bias == 0).all()  # Δ's bias set after the zero biases
    plain = SelectiveDiagonal(256, 4)
    assert plain.conv is not None and isinstance(plain.dt_proj, torch.nn.Linear)  # the mamba defaults unchanged
    with pytest.raises(ConfigError, match="init"):
        SelectiveDiagonal(D, init="xavier")
    with pytest.raises(ConfigError, match="dt_rank"):
        MambaMinus(D, dt_rank=0)


# ---------------------------------------------------------------------------------------------------- AUSSM
def _aussm_reference(layer: AUSSM, x: torch.Tensor) -> torch.Tensor:
    """Eq. 8 step by step: h_t = exp(i θ_t) ⊙ h_{t−1} + Δ_t u_t B, y_t = Re(C·h_t) + D u_t, gated and projected."""
    u, z = layer.in_proj(x).chunk(2, -1)
    u = F.silu(u)
    delta = F.softplus(layer.dt_proj(u))
    theta = layer.theta_proj(u).unflatten(-1, (layer.inner, layer.state_size))
    bvec = torch.complex(layer.B[:, 0], layer.B[:, 1])
    cvec = torch.complex(layer.C[:, 0], layer.C[:, 1])
    h = torch.zeros(x.shape[0], layer.inner, layer.state_size, dtype=torch.complex128)
    out = []
    for t in range(x.shape[1]):
        h = torch.exp(1j * theta[:, t]) * h + (delta[:, t] * u[:, t])[..., None] * bvec
        y = (h * cvec).real.sum(-1) + layer.D * u[:, t]
        out.append(layer.out_proj(y * F.silu(z[:, t])))
    return torch.stack(out, 1)


@pytest.mark.parametrize("impl", ["naive", "torch"])
def test_aussm_equals_its_reference(impl):
    torch.manual_seed(0)
    layer = AUSSM(D, 3, impl=impl).double()
    x = _x(2, 17)
    with torch.no_grad():
        assert torch.allclose(layer(x), _aussm_reference(layer, x), atol=1e-12)
    a = layer.transition(x)
    assert a.shape == (2, 17, D, 3) and torch.allclose(a.abs(), torch.ones(()).double())
    b = layer.theta_proj.bias
    assert (b.abs() < math.pi).all() and b.std() > 1  # uniform in (−π, π)


def test_aussm_gradients_on_both_paths_agree():
    x = _x(2, 11)
    grads = []
    for impl in ("naive", "torch"):
        torch.manual_seed(0)
        layer = AUSSM(D, 3, impl=impl).double()
        (layer(x) ** 2).sum().backward()
        grads.append({k: p.grad for k, p in layer.named_parameters()})
    for k, g in grads[0].items():
        assert torch.allclose(g, grads[1][k], atol=1e-10), k
        assert g.abs().sum() > 0, k


# ---------------------------------------------------------------------------------------------------- PD-SSM
def test_pdssm_transition_is_column_one_hot_times_diagonal_and_forward_applies_it():
    torch.manual_seed(0)
    layer = PDSSM(D, 5, n_dict=8).double().eval()
    x = _x(2, 9)
    a = layer.transition(x)  # (2, 9, 5, 5) complex
    assert a.shape == (2, 9, 5, 5) and a.is_complex()
    assert ((a != 0).sum(-2) == 1).all()  # one entry per column
    mod = a.abs().sum(-2)
    assert (mod > 0).all() and (mod < 1).all()  # |D| ∈ (0, 1)
    with torch.no_grad():
        got = layer(x)
        drive = layer.B(x)
        drive = torch.complex(drive[..., :5], drive[..., 5:])
        h = torch.zeros(2, 5, dtype=torch.complex128)
        want = []
        for t in range(9):
            h = torch.einsum("bij,bj->bi", a[:, t], h) + drive[:, t]
            y = layer.C(torch.cat([h.real, h.imag], -1)) + x[:, t] @ layer.D_skip
            want.append(layer.out_proj(y))
    assert torch.allclose(got, torch.stack(want, 1), atol=1e-12)


def test_pdssm_diagonal_phase_is_two_pi_sigma_so_eigenvalues_reach_the_lower_half_plane():
    """D(x) = σ(MLP_r(x)) e^{2πi σ(MLP_φ(x))}: with the phase MLP's output weights zeroed, σ = v from its bias, and
    the eigenvalues (the diagonal entries of A(x) = P(x) D(x)) have angle 2πv — below the real axis for v > 1/2."""
    torch.manual_seed(0)
    layer = PDSSM(D, 4, n_dict=3).double().eval()
    v = torch.tensor([0.1, 0.4, 0.6, 0.85], dtype=torch.float64)
    with torch.no_grad():
        layer.phase_out.weight.zero_()
        layer.phase_out.bias.copy_(torch.log(v / (1 - v)))
        diag = layer.diagonal(_x(2, 3))
    want = torch.polar(torch.ones_like(v), 2 * math.pi * v)
    assert torch.allclose(diag / diag.abs(), want.expand_as(diag), atol=1e-12)
    assert (diag.imag[..., 2:] < 0).all() and (diag.imag[..., :2] > 0).all()


def test_pdssm_initialization_and_bad_settings():
    torch.manual_seed(0)
    layer = PDSSM(64, n_dict=8)
    assert layer.state_size == 64 and layer.dictionary.shape == (8, 64, 64)
    assert abs(layer.dictionary.std().item() * 8 - 1) < 0.05  # N(0, 1/N)
    r = torch.sigmoid(layer.mag_out.bias)
    assert (r >= 0.9 - 1e-6).all() and (r <= 0.999 + 1e-6).all()
    for kw, match in ((dict(r_min=0.5, r_max=1.0), "r_max"), (dict(n_dict=0), "n_dict"), (dict(state_size=0), "state")):
        with pytest.raises(ConfigError, match=match):
            PDSSM(D, **kw)


# ---------------------------------------------------------------------------------------------------- training
def _parity_batch(g: torch.Generator, bsz=32, length=12):
    ids = torch.randint(0, 2, (bsz, length), generator=g)
    return ids, ids.cumsum(1) % 2


@pytest.mark.parametrize("name, args", [("mamba-minus", dict(state_size=4)), ("aussm", dict(state_size=4)),
                                        ("pdssm", dict(state_size=4))])  # fmt: skip
def test_each_baseline_trains_through_sequence_model(name, args):
    torch.manual_seed(0)
    net = SequenceModel(2, 2, name, 1, 16, layer_args=args, mlp_ratio=0)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(0)
    losses = []
    for _ in range(25):
        ids, target = _parity_batch(g)
        loss = F.cross_entropy(net(ids).reshape(-1, 2), target.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(math.isfinite(v) for v in losses)
    assert sum(losses[-5:]) < sum(losses[:5])
    pred = net.predict_states(ids)
    assert torch.equal(net.predict_states(ids, chunk=5), pred)  # chunked with carried state = whole


@pytest.mark.parametrize("model", ["mamba-minus", "aussm", "pdssm"])
def test_fsa2rnn_train_runs_each_baseline(tmp_path, model):
    args = ["train", "parity", "--model", model, "--steps", "3", "--d-model", "8", "--state-size", "4",
            "--mlp-ratio", "0", "--batch", "4", "--samples", "8", "--no-lmax", "--eval-lengths", "8",
            "--out", str(tmp_path / model), "--json"]  # fmt: skip
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["steps"] == 3 and math.isfinite(out["final_loss"])
    cfg = json.loads((tmp_path / model / "config.json").read_text())
    assert cfg["model"]["layer"] == model and cfg["model"]["layer_args"] == {"state_size": 4}


@pytest.mark.parametrize("name", ["mamba-minus", "aussm", "pdssm"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_each_baseline_runs_at_half_precision(name, dtype):
    """Complex recurrences run in complex64 under half inputs (torch has no complex bfloat16)."""
    torch.manual_seed(0)
    net = SequenceModel(3, 2, name, 2, 8, layer_args={"state_size": 4}).to(dtype)
    ids = torch.randint(0, 3, (2, 9))
    out = net(ids)
    assert out.dtype == dtype and torch.isfinite(out).all()
    out.float().sum().backward()
    assert all(p.grad is None or torch.isfinite(p.grad).all() for p in net.parameters())
