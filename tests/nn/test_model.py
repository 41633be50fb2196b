"""SequenceModel and ModelConfig: the JSON round trip (config and weights), every layer in a model (shapes,
gradients, chunked prediction = whole), lengths and padding, the failing-length protocol, and bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from fsa2rnn.fsa.errors import FsaError, UnknownSymbolError
from fsa2rnn.nn.layers import LAYERS, ConfigError
from fsa2rnn.nn.model import ModelConfig, SequenceModel

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ARGS = {
    "deltaproduct": dict(heads=2, head_dim=4, n_h=2, beta_range=(0, 1)),
    "deltanet": dict(heads=2, head_dim=4),
    "mamba": dict(state_size=4, eig_range=(-1, 1)),
    "mamba-minus": dict(state_size=4),
    "aussm": dict(state_size=3),
    "pdssm": dict(state_size=5),
    "dlr": dict(state_size=4),
    "dlr-prod": dict(state_size=3),
    "dss-exp": dict(state_size=4),
    "nfsm": dict(heads=[3, 4]),
    "lstm": {},
    "transformer": dict(heads=2),
    "attention": dict(heads=2),
}


def _model(name: str, seed: int = 0, **kw) -> SequenceModel:
    torch.manual_seed(seed)
    return SequenceModel(5, 3, name, 2, 8, layer_args=ARGS[name], **kw).double()


def _ids(b: int = 3, t: int = 19, seed: int = 0) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(seed).integers(0, 5, size=(b, t)))


def test_config_round_trips_through_json():
    cfg = ModelConfig(7, 4, "deltaproduct", 2, 16, layer_args=dict(beta_range=(0, 2), n_h=2), norm="layer")
    text = cfg.to_json()
    assert json.loads(text)["format"] == "fsa2rnn.sequence_model/1"
    back = ModelConfig.from_json(text)
    assert back == cfg and back.to_json() == text
    assert cfg.layer_args["beta_range"] == [0, 2]  # stored JSON-native, so equality survives the trip
    # the weights too: a model rebuilt from the JSON config loads the state dict and computes the same logits
    torch.manual_seed(0)
    net = SequenceModel.from_config(cfg).double().eval()
    again = SequenceModel.from_config(text).double().eval()
    again.load_state_dict(net.state_dict())
    ids = torch.from_numpy(np.random.default_rng(0).integers(0, 7, size=(2, 9)))
    assert torch.equal(net(ids), again(ids))
    assert SequenceModel.from_config(cfg.to_dict()).config == cfg


@pytest.mark.parametrize(
    "data, match",
    [
        ({"vocab": 3}, "missing keys"),
        ({"vocab": 3, "n_classes": 2, "width": 4}, "unknown keys"),
        ({"vocab": 0, "n_classes": 2}, "vocab"),
        ({"vocab": 3, "n_classes": 2, "layer": "gru"}, "layer"),
        ({"vocab": 3, "n_classes": 2, "norm": "batch"}, "norm"),
        ({"vocab": 3, "n_classes": 2, "mlp_ratio": -1}, "mlp_ratio"),
        ({"vocab": 3, "n_classes": 2, "layer_args": {"f": object()}}, "JSON"),
        ({"vocab": 3, "n_classes": 2, "format": "other/1"}, "format"),
    ],
)
def test_bad_config(data, match):
    with pytest.raises(ConfigError, match=match):
        ModelConfig.from_dict(data)


def test_bad_config_json_and_layer_args():
    with pytest.raises(ConfigError, match="not valid JSON"):
        ModelConfig.from_json("{")
    with pytest.raises(ConfigError, match="beta_range"):
        SequenceModel(3, 2, "deltaproduct", layer_args={"beta_range": [0, 3]})
    with pytest.raises(ConfigError, match="unexpected keyword"):
        SequenceModel(3, 2, "lstm", widthh=3)
    assert issubclass(ConfigError, FsaError) and issubclass(ConfigError, ValueError)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_every_layer_in_a_model(name):
    net = _model(name).train()
    ids = _ids()
    logits = net(ids)
    assert logits.shape == (3, 19, 3)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 3), torch.zeros(3 * 19, dtype=torch.long))
    loss.backward()
    grads = [p.grad for p in net.parameters()]
    assert all(g is not None and torch.isfinite(g).all() for g in grads)
    assert net.embedding.weight.grad.abs().sum() > 0
    # prediction: eval mode, chunked with carried state = whole; the mode is restored
    whole = net.predict_states(ids)
    assert net.training
    assert torch.equal(net.predict_states(ids, chunk=4), whole)
    predict = net.predictor()
    p1, state = predict(ids[:, :10].numpy(), None)
    p2, _ = predict(ids[:, 10:].numpy(), state)
    assert np.array_equal(np.concatenate([p1, p2], 1), whole.numpy())


@pytest.mark.parametrize("name", ["dlr", "dlr-prod", "dss-exp"])
def test_stateless_forward_takes_the_whole_sequence_path(name, monkeypatch):
    """Without a state asked for, a block runs its layer's whole-sequence path (the DLR's FFT convolution), which
    computes what the stateful path (the modal recurrence) does."""
    net = _model(name)
    ids = _ids()
    with_state, _ = net(ids, return_state=True)
    import fsa2rnn.nn.layers.dlr as dlr

    monkeypatch.setattr(dlr.DLR, "_recurrent", lambda *a: pytest.fail("the modal recurrence ran"))
    assert torch.allclose(net(ids), with_state, atol=1e-10, rtol=0)


def test_lengths_padding_and_one_dimensional_words():
    net = _model("deltaproduct")
    ids = _ids()
    lengths = torch.tensor([19, 7, 0])
    out = net.predict_states(ids, lengths)
    full = net.predict_states(ids)
    padded = ids.clone()
    padded[1, 7:] = -1  # padding ids outside the alphabet are ignored
    assert torch.equal(net.predict_states(padded, lengths), out)
    for b, n in enumerate(lengths.tolist()):
        assert torch.equal(out[b, :n], full[b, :n]) and (out[b, n:] == -1).all()
    assert torch.equal(net.predict_states(ids[0]), full[0])
    with pytest.raises(UnknownSymbolError, match="out of range"):
        net(padded)
    with pytest.raises(ConfigError, match="integer tensor"):
        net.features(torch.zeros(2, 3, 4))


def test_symbol_transitions():
    assert _model("deltaproduct").symbol_transitions().shape == (5, 2, 4, 4)
    a = _model("mamba").symbol_transitions()
    assert a.shape == (5, 8, 4) and (a >= -1).all() and (a <= 1).all()
    assert _model("nfsm").symbol_transitions().shape == (5, 2, 4)


def test_no_mlp_and_no_norm():
    net = _model("lstm", mlp_ratio=0, norm="none")
    assert net.blocks[0].mlp is None and isinstance(net.norm, torch.nn.Identity)
