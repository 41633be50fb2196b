"""The short convolution as the authors' layers have it (issue 32): no bias in DeltaNet/DeltaProduct (fla's
``ShortConvolution``), a bias in Mamba's (mamba_ssm's ``conv_bias=True``); runs written while the DeltaNet
convolution had a bias reload with it; and ``--dlr-init atomic``, the DLR authors' initialisation for the atomic
tasks."""

from __future__ import annotations

import json
import math

import pytest
import torch

from fsa2rnn.nn.layers import build_layer
from fsa2rnn.nn.layers.conv import ShortConv
from fsa2rnn.nn.train.config import TrainConfig, load_run, model_config, read_run_record, task_of


def test_short_conv_has_a_bias_only_when_asked():
    assert ShortConv(8).conv.bias is None
    assert ShortConv(8, bias=True).conv.bias is not None


@pytest.mark.parametrize("name", ["deltanet", "deltaproduct"])
def test_delta_layers_convolve_without_a_bias(name):
    layer = build_layer(name, 16)
    assert layer.conv is not None and layer.conv.conv.bias is None
    assert not any(k.endswith("conv.bias") for k in layer.state_dict())
    assert build_layer(name, 16, conv_bias=True).conv.conv.bias is not None


def test_mamba_keeps_the_bias_of_its_block():
    assert build_layer("mamba", 16).conv.conv.bias is not None


def test_the_run_records_the_convolution_without_bias():
    cfg = TrainConfig(task="grazzi:parity", model="deltanet", d_model=16)
    mcfg = model_config(cfg, task_of(cfg))
    assert mcfg.layer_args["conv_bias"] is False


def test_a_run_written_with_the_biased_convolution_reloads_with_it():
    """tests/fixtures/runs/parity-deltanet was trained while the convolution had a bias: its record names no
    conv_bias, its weights hold the bias, and it loads (and predicts) as trained."""
    from pathlib import Path

    run = Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "parity-deltanet"
    _, mcfg = read_run_record((run / "config.json").read_text(), "config.json")
    assert mcfg.layer_args["conv_bias"] is True
    model, _, _ = load_run(run)
    assert model.blocks[0].layer.conv.conv.bias is not None
    # a record that states conv_bias is taken as it is
    data = json.loads((run / "config.json").read_text())
    data["model"]["layer_args"]["conv_bias"] = False
    _, mcfg = read_run_record(json.dumps(data), "config.json")
    assert mcfg.layer_args["conv_bias"] is False


def test_dlr_unit_init_is_near_unit_modulus():
    layer = build_layer("dlr", 4, state_size=8, decay_init="unit")
    log_lambda, _ = layer.params(torch.float64)
    assert torch.allclose(log_lambda.real, torch.full_like(log_lambda.real, -5e-6))
    assert torch.allclose(log_lambda.imag, (2 * math.pi * torch.arange(8) / 8).double().expand(4, 8))


def test_dss_exp_linear_init_and_its_step_range():
    layer = build_layer("dss-exp", 64, state_size=8, lambda_init="lin", dt_min=1e-4, dt_max=1e-2)
    assert torch.allclose(layer.theta[0], math.pi * torch.arange(8, dtype=torch.float32))
    dt = layer.log_dt.detach().exp()
    assert float(dt.min()) >= 1e-4 * (1 - 1e-6) and float(dt.max()) <= 1e-2 * (1 + 1e-6)
    with pytest.raises(Exception, match="lambda_init"):
        build_layer("dss-exp", 4, lambda_init="nope")
    with pytest.raises(Exception, match="dt_min"):
        build_layer("dss-exp", 4, dt_min=0.1, dt_max=0.01)


@pytest.mark.parametrize(
    "model, args",
    [
        ("dlr", {"decay_init": "unit"}),
        ("dlr-prod", {"decay_init": "unit"}),
        ("dss-exp", {"lambda_init": "lin", "dt_min": 1e-4, "dt_max": 1e-2}),
    ],
)
def test_dlr_init_atomic_sets_the_authors_initialisation(model, args):
    cfg = TrainConfig(task="dlr:shift", model=model, d_model=8, state_size=4, dlr_init="atomic")
    mcfg = model_config(cfg, task_of(cfg))
    assert {k: mcfg.layer_args[k] for k in args} == args
    plain = TrainConfig(task="dlr:shift", model=model, d_model=8, state_size=4)
    assert not set(args) & set(model_config(plain, task_of(plain)).layer_args)


def test_dlr_init_refuses_an_unknown_value():
    from fsa2rnn.fsa.errors import SpecError

    with pytest.raises(SpecError, match="--dlr-init"):
        TrainConfig(task="dlr:shift", model="dlr", dlr_init="nope")
