"""The model around the layers (nn/wrapper.py): fla's DeltaNetForCausalLM wrapper — the gated MLP checked against
its formula in float64, its width rule, fla's N(0, 0.02²) initialisation with the down-projection rescaled by
√(2 · n_layers), the layer's own initialisation left alone, no classifier bias, RMSNorm ε = 1e−6 — and the option
through the config, the JSON round trip and the CLI."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.nn.layers import ConfigError
from fsa2rnn.nn.limits import estimated_parameters
from fsa2rnn.nn.model import ModelConfig, SequenceModel
from fsa2rnn.nn.wrapper import FLA_INIT_STD, FLA_NORM_EPS, GatedMLP, gated_width

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _std(t: torch.Tensor) -> float:
    return float(t.detach().std())


def _net(wrapper: str, n_layers: int = 2, d: int = 128, seed: int = 0) -> SequenceModel:
    torch.manual_seed(seed)
    layer_args = {"heads": 4, "head_dim": d // 4, "short_conv": True}
    return SequenceModel(64, 3, "deltanet", n_layers, d, layer_args=layer_args, wrapper=wrapper)


@pytest.mark.parametrize(
    ("d", "ratio", "width"), [(128, 4, 512), (16, 4, 256), (384, 4, 1024), (385, 4, 1280), (64, 0, 0)]
)
def test_gated_width_is_fla_rounding(d, ratio, width):
    # fla: int(d · ratio · 2/3) rounded up to a multiple of 256
    assert gated_width(d, ratio) == width


def test_gated_mlp_is_silu_gate_times_value():
    torch.manual_seed(1)
    mlp = GatedMLP(6, 5).double()
    x = torch.randn(3, 4, 6, dtype=torch.float64)
    w = mlp.gate.weight
    g, y = x @ w[:5].T, x @ w[5:].T
    ref = (g / (1 + torch.exp(-g)) * y) @ mlp.down.weight.T
    assert torch.allclose(mlp(x), ref, atol=1e-12)
    assert mlp.gate.bias is None and mlp.down.bias is None


def test_fla_wrapper_parts_and_initialisation():
    net = _net("fla", n_layers=2)
    assert net.classifier.bias is None
    for block in net.blocks:
        assert isinstance(block.mlp, GatedMLP) and block.mlp.down.in_features == 512
        assert block.norm1.eps == FLA_NORM_EPS and block.norm2.eps == FLA_NORM_EPS
        assert abs(_std(block.mlp.gate.weight) - FLA_INIT_STD) < 1e-3
        # GPT-2's rescaling of the residual branches: ÷ √(2 · 2)
        assert abs(_std(block.mlp.down.weight) - FLA_INIT_STD / 2) < 5e-4
    assert abs(_std(net.embedding.weight) - FLA_INIT_STD) < 2e-3
    assert abs(_std(net.classifier.weight) - FLA_INIT_STD) < 5e-3
    assert net.norm.eps == FLA_NORM_EPS
    deep = _net("fla", n_layers=8, d=64)
    assert abs(_std(deep.blocks[0].mlp.down.weight) - FLA_INIT_STD / 4) < 5e-4  # ÷ √16


def test_the_layer_keeps_its_own_initialisation():
    # the same draws reach the first layer under either wrapper (the embedding is drawn first, re-drawn later)
    fla, ours = _net("fla"), _net("fsa2rnn")
    for (name, p), (_, q) in zip(fla.blocks[0].layer.named_parameters(), ours.blocks[0].layer.named_parameters()):
        assert torch.equal(p, q), name
    # and it is fla's layer initialisation (Xavier, gain 2^−2.5), not the wrapper's N(0, 0.02²)
    q_proj = fla.blocks[0].layer.q_proj.weight
    bound = 2**-2.5 * math.sqrt(6 / sum(q_proj.shape))
    assert float(q_proj.detach().abs().max()) <= bound and _std(q_proj) > 0.5 * bound / math.sqrt(3)


def test_fsa2rnn_wrapper_is_unchanged():
    net = _net("fsa2rnn")
    mlp = net.blocks[0].mlp
    assert isinstance(mlp, torch.nn.Sequential) and mlp[0].out_features == 512 and mlp[0].bias is not None
    assert net.classifier.bias is not None
    x = torch.randn(2, 5, 128)
    assert torch.allclose(mlp(x), mlp[2](F.gelu(mlp[0](x))))


def test_config_round_trip_and_refusals():
    net = _net("fla", n_layers=1, d=32)
    cfg = ModelConfig.from_json(net.config.to_json())
    assert cfg.wrapper == "fla"
    again = SequenceModel.from_config(cfg)
    again.load_state_dict(net.state_dict())
    ids = torch.randint(0, 64, (2, 9))
    assert torch.equal(again(ids), net(ids))
    old = {k: v for k, v in net.config.to_dict().items() if k != "wrapper"}  # a config written before the option
    assert ModelConfig.from_dict(old).wrapper == "fsa2rnn"
    with pytest.raises(ConfigError, match="wrapper 'hf' is not one of fsa2rnn, fla"):
        ModelConfig(4, 2, "deltanet", wrapper="hf")


def test_cli_refuses_an_unknown_wrapper(tmp_path):
    res = CliRunner().invoke(main, ["train", "grazzi:parity", "--wrapper", "hf", "--out", str(tmp_path / "r")])
    assert res.exit_code == 2
    assert res.output.strip().splitlines()[-1] == "error: --wrapper must be one of fsa2rnn, fla, got 'hf'"
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("d", [16, 128])
def test_the_parameter_limit_estimate_bounds_the_fla_model(d):
    net = _net("fla", d=d)
    flags = {"model": "deltanet", "d_model": d, "layers": 2, "heads": 4, "head_dim": d // 4, "mlp_ratio": 4.0}
    assert estimated_parameters({**flags, "wrapper": "fla"}) >= sum(p.numel() for p in net.parameters())
