"""The DeltaNet/DeltaProduct layer as fla and the negative-eigenvalues authors define it (``form="fla"``, the
default): a per-head output RMSNorm checked against a float64 step-by-step recurrence, Xavier-uniform weights of
gain 2^−2.5, no β bias; ``form="plain"`` and ``output_norm`` switch the pieces off; the train option that selects
the form is validated."""

from __future__ import annotations

import math

import pytest
import torch

from fsa2rnn.fsa.errors import SpecError
from fsa2rnn.nn.layers import ConfigError, DeltaNet, DeltaProduct
from fsa2rnn.nn.layers.delta_product import FLA_INIT_GAIN, OUTPUT_NORM_EPS

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _reference(layer: DeltaProduct, x: torch.Tensor) -> torch.Tensor:
    """The layer's output by the recurrence written out step by step in float64 (no short convolution):
    S ← (I − β k kᵀ) S + β k vᵀ per delta step, o = Sᵀ q, o ← g ⊙ o / √(mean(o²) + ε) per head, y = W_o o."""
    H, dk, dv, n_h = layer.heads, layer.head_dim, layer.value_dim, layer.n_h
    W = {n: p.detach().double() for n, p in layer.named_parameters()}
    bias = W.get("b_proj.bias", torch.zeros(n_h * H, dtype=torch.float64))
    out = []
    for b in range(x.shape[0]):
        S = [W["h0"][h].clone() for h in range(H)]
        ys = []
        for t in range(x.shape[1]):
            xt = x[b, t]
            q = (W["q_proj.weight"] @ xt).view(H, dk)
            k = (W["k_proj.weight"] @ xt).view(n_h, H, dk)
            v = (W["v_proj.weight"] @ xt).view(n_h, H, dv)
            beta = layer.beta_max / (1 + torch.exp(-(W["b_proj.weight"] @ xt + bias))).view(n_h, H)
            heads = []
            for h in range(H):
                for j in range(n_h):
                    kj = k[j, h] / k[j, h].norm()
                    S[h] = S[h] - beta[j, h] * torch.outer(kj, kj @ S[h]) + beta[j, h] * torch.outer(kj, v[j, h])
                o = S[h].T @ (q[h] / q[h].norm())
                if layer.o_norm is not None:
                    o = W["o_norm.weight"] * o / math.sqrt(float((o * o).mean()) + OUTPUT_NORM_EPS)
                heads.append(o)
            ys.append(W["o_proj.weight"] @ torch.cat(heads))
        out.append(torch.stack(ys))
    return torch.stack(out)


@pytest.mark.parametrize("n_h", [1, 2])
def test_output_norm_matches_a_float64_recurrence(n_h):
    torch.manual_seed(0)
    layer = DeltaProduct(6, heads=2, head_dim=3, n_h=n_h, value_dim=4, short_conv=False).double()
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.randn(p.shape, dtype=p.dtype))  # a gain that is not 1, a non-zero S_0
    x = torch.randn(2, 7, 6, dtype=torch.float64)
    y = layer(x)
    assert torch.allclose(y, _reference(layer, x), atol=1e-10)
    # chunked reading carries the state through the norm
    y1, st = layer(x[:, :3], return_state=True)
    assert torch.allclose(torch.cat([y1, layer(x[:, 3:], st)], 1), y, atol=1e-10)
    # the norm is on: scaling every value by 10 leaves the output unchanged up to ε (S_0 = 0: S is linear in v)
    with torch.no_grad():
        layer.h0.zero_()
        y0 = layer(x)
        layer.v_proj.weight.mul_(10)
    assert torch.allclose(layer(x), y0, rtol=1e-3, atol=1e-3) and not torch.allclose(10 * y0, y0, atol=1e-3)


def test_plain_form_and_output_norm_switch():
    torch.manual_seed(0)
    plain = DeltaNet(6, heads=2, head_dim=3, short_conv=False, form="plain").double()
    assert plain.o_norm is None and plain.b_proj.bias is not None
    x = torch.randn(1, 5, 6, dtype=torch.float64)
    with torch.no_grad():
        plain.h0.normal_()
    assert torch.allclose(plain(x), _reference(plain, x), atol=1e-10)
    no_norm = DeltaNet(6, heads=2, head_dim=3, output_norm=False)
    assert no_norm.o_norm is None and no_norm.b_proj.bias is None
    assert DeltaNet(6, form="plain", output_norm=True).o_norm is not None


def test_fla_initialization():
    torch.manual_seed(0)
    layer = DeltaNet(256, heads=4, head_dim=64, short_conv=False)
    assert layer.b_proj.bias is None and layer.o_norm is not None
    assert torch.equal(layer.o_norm.weight, torch.ones(64))
    for proj in (layer.q_proj, layer.k_proj, layer.v_proj, layer.b_proj, layer.o_proj):
        fan_out, fan_in = proj.weight.shape
        bound = FLA_INIT_GAIN * math.sqrt(6 / (fan_in + fan_out))
        w = proj.weight.detach()
        assert float(w.abs().max()) <= bound
        # uniform on [−a, a]: standard deviation a/√3 (within 5 % on ≥ 1024 draws)
        assert abs(float(w.std()) / (bound / math.sqrt(3)) - 1) < 0.05
    plain = DeltaNet(256, heads=4, head_dim=64, short_conv=False, form="plain")
    a = 1 / math.sqrt(256)  # PyTorch's Linear default: U(−1/√fan_in, 1/√fan_in)
    assert float(plain.q_proj.weight.detach().abs().max()) > 0.9 * a > FLA_INIT_GAIN * math.sqrt(6 / 512)


@pytest.mark.parametrize(
    "kw, match", [(dict(form="flax"), "form"), (dict(output_norm="yes"), "output_norm"), (dict(form=None), "form")]
)
def test_bad_form_arguments(kw, match):
    with pytest.raises(ConfigError, match=match):
        DeltaProduct(8, **kw)


def test_train_delta_form_option():
    from fsa2rnn.nn.tasks import get_task
    from fsa2rnn.nn.train.config import TrainConfig, model_config

    task = get_task("grazzi:parity")
    assert model_config(TrainConfig(task="grazzi:parity"), task).layer_args["form"] == "fla"  # recorded in the run
    plain = model_config(TrainConfig(task="grazzi:parity", delta_form="plain"), task)
    assert plain.layer_args["form"] == "plain"
    with pytest.raises(SpecError, match="--delta-form must be one of fla, plain"):
        TrainConfig(task="grazzi:parity", delta_form="fast")
    with pytest.raises(SpecError, match="--delta-form applies to deltanet, deltaproduct"):
        TrainConfig(task="grazzi:parity", model="mamba", delta_form="plain")


def test_runs_record_their_form_and_older_runs_read_as_plain(tmp_path):
    """A run's config.json names the form; one without it (written before the forms) loads as the bare layer."""
    import json

    from fsa2rnn.nn.model import ModelConfig, SequenceModel
    from fsa2rnn.nn.tasks import get_task
    from fsa2rnn.nn.train import read_run_record
    from fsa2rnn.nn.train.config import TrainConfig, model_config, run_record

    cfg, task = TrainConfig(task="grazzi:parity", d_model=8), get_task("grazzi:parity")
    record = run_record(cfg, model_config(cfg, task), task)
    assert read_run_record(json.dumps(record), "r")[1].layer_args["form"] == "fla"
    old = json.loads(json.dumps(record))
    del old["model"]["layer_args"]["form"]
    mcfg = read_run_record(json.dumps(old), "r")[1]
    assert mcfg.layer_args["form"] == "plain"
    layer = SequenceModel.from_config(mcfg).blocks[0].layer
    assert layer.o_norm is None and layer.b_proj.bias is not None
    compiled = SequenceModel.from_compiled(_compiled_parity()).config.to_dict()  # records output_norm: kept as is
    compiled.pop("format")
    again = read_run_record(json.dumps({**record, "model": compiled}), "r")[1]
    assert "form" not in again.layer_args and again.layer_args["output_norm"] is False
    assert isinstance(again, ModelConfig)


def _compiled_parity():
    from fsa2rnn.compiler import compile_householder
    from fsa2rnn.fsa import resolve_spec

    return compile_householder(resolve_spec("parity"))


def test_cli_refuses_bad_form_and_labels(tmp_path):
    from click.testing import CliRunner

    from fsa2rnn.cli.main import main

    for extra, msg in ((["--delta-form", "flax"], "--delta-form must be one of fla, plain"),
                       (["--model", "lstm", "--delta-form", "plain"], "--delta-form applies to"),
                       (["--labels", "all"], "--labels must be one of answer, dense")):  # fmt: skip
        res = CliRunner().invoke(main, ["train", "grazzi:parity", "--out", str(tmp_path / "r"), *extra])
        assert res.exit_code == 2 and msg in res.output and "Traceback" not in res.output, res.output
        assert not (tmp_path / "r").exists()
    bad = ["train", "grazzi:modarith_brackets", "--labels", "dense", "--out", str(tmp_path / "b")]
    res = CliRunner().invoke(main, bad)
    assert res.exit_code == 2 and "does not offer it" in res.output and not (tmp_path / "b").exists()
