"""SequenceModel.from_compiled: compiled Householder (S5 permutation, Z60 rotation, parity, a one-level cascade)
and NFSM (M11 multihead) weights in the trainable layers give the automaton's states at length 10^4, the compiled
hidden states, ≈ 0 cross-entropy; what does not map raises."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
import torch

from fsa2rnn.compiler import compile_diagonal, compile_householder, compile_nfsm
from fsa2rnn.fsa import Automaton, ConstructionError, resolve_spec
from fsa2rnn.nn import load_model
from fsa2rnn.nn.from_compiled import CE_BOUND
from fsa2rnn.nn.layers import NFSM as NFSMLayer
from fsa2rnn.nn.layers import DeltaProduct
from fsa2rnn.nn.lmax import automaton_words, failing_length
from fsa2rnn.nn.model import ModelConfig, SequenceModel

pytestmark = pytest.mark.usefixtures("one_torch_thread")

LONG = 10_000


@cache
def _householder(spec: str):
    return compile_householder(resolve_spec(spec))


def _words(a: Automaton, b: int, t: int, seed: int = 0) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(seed).integers(0, a.n_symbols, size=(b, t)))


def _cross_entropy(net: SequenceModel, ids: torch.Tensor, states: np.ndarray) -> float:
    with torch.no_grad():
        logits = net(ids)
    return float(torch.nn.functional.cross_entropy(logits.flatten(0, 1), torch.from_numpy(states).flatten()))


@pytest.mark.parametrize(
    "spec, construction", [("S5", "permutation"), ("Z60", "rotation"), ("parity", "rotation"), ("flipflop", "cascade")]
)
def test_householder_models_load_into_deltaproduct(spec, construction):
    a = resolve_spec(spec)
    compiled = _householder(spec)
    assert compiled.construction == construction and len(compiled.layers) == 1
    net = SequenceModel.from_compiled(compiled)  # float64
    layer = net.blocks[0].layer
    assert isinstance(layer, DeltaProduct) and net.dtype == torch.float64 and not net.training
    assert layer.n_h == compiled.tensors["L0.beta"].shape[1]
    ids = _words(a, 1, LONG, seed=1)
    states = a.run(ids.numpy())  # the automaton: an independent oracle
    assert np.array_equal(net.predict_states(ids).numpy(), states)
    # the hidden state H_t read out of S equals the compiled model's (exact fused products), and decodes alike
    ref = load_model(compiled)
    hiddens, layer_states, _ = ref.layer_states(ids)
    h = net.features(ids)[..., a.n_symbols :]
    assert torch.allclose(h, hiddens[0], atol=1e-9, rtol=0)
    assert torch.equal(ref.layers[0].decode(h), layer_states[0])
    short = _words(a, 4, 64, seed=2)
    assert _cross_entropy(net, short, a.run(short.numpy())) <= 2 * CE_BOUND


def test_compiled_betas_go_through_the_layers_parameterization():
    compiled = _householder("S5")
    net = SequenceModel.from_compiled(compiled)
    layer = net.blocks[0].layer
    beta = layer.beta(net.embedding.weight).view(-1, layer.n_h, layer.heads)  # (symbol, step, head)
    rows = compiled.tensors["L0.keys"][:, 0]
    want = torch.zeros(beta.shape[:2], dtype=torch.float64)
    want[torch.from_numpy(rows)] = torch.from_numpy(compiled.tensors["L0.beta"])
    assert torch.equal(beta, want[..., None].expand_as(beta))  # exactly 0 and 2
    # the layer's own transitions are the compiled permutation matrices
    a = net.symbol_transitions()[:, 0]
    fused = torch.zeros_like(a)
    fused[torch.from_numpy(rows)] = torch.from_numpy(compiled.tensors["L0.A"])
    assert torch.allclose(a, fused, atol=1e-15)


def test_nfsm_model_loads_into_the_nfsm_layer():
    a = resolve_spec("M11")
    compiled = compile_nfsm(a)
    assert compiled.construction == "multihead"
    net = SequenceModel.from_compiled(compiled).float()
    layer = net.blocks[0].layer
    assert isinstance(layer, NFSMLayer) and layer.heads == [11, 11, 11, 11]
    ids = _words(a, 1, LONG, seed=3)
    states = a.run(ids.numpy())
    assert np.array_equal(net.predict_states(ids).numpy(), states)
    # head indices equal the compiled model's (float32 logits in both)
    ref = load_model(compiled).to(torch.float32)
    x = net.embedding(ids)
    assert torch.equal(layer.indices(x), ref.head_indices(ids))
    assert layer.start_indices().tolist() == compiled.layers[0]["initial"]
    short = _words(a, 4, 64, seed=4)
    assert _cross_entropy(net, short, a.run(short.numpy())) <= 2 * CE_BOUND
    # the bridge's output is an ordinary SequenceModel: its config round-trips and rebuilds it
    again = SequenceModel.from_config(ModelConfig.from_json(net.config.to_json())).float().eval()
    again.load_state_dict(net.state_dict())
    assert torch.equal(again.predict_states(short), net.predict_states(short))


def test_single_head_nfsm_from_a_file_and_the_failing_length_protocol(tmp_path):
    a = resolve_spec("T3")
    compile_nfsm(a, heads="single", layers="single").save(tmp_path / "t3.safetensors")
    net = SequenceModel.from_compiled(tmp_path / "t3.safetensors")
    l_max, capped = failing_length(net.predictor(), automaton_words(a), start=64, cap=4096, n_words=16, chunk=1000)
    assert (l_max, capped) == (None, True)


def test_compiled_weights_are_a_trainable_initialization():
    a = resolve_spec("Z60")
    net = SequenceModel.from_compiled(_householder("Z60")).train()
    ids = _words(a, 2, 50)
    loss = torch.nn.functional.cross_entropy(net(ids).flatten(0, 1), torch.from_numpy(a.run(ids.numpy())).flatten())
    loss.backward()
    assert all(torch.isfinite(p.grad).all() for p in net.parameters() if p.grad is not None)


def test_what_does_not_map_raises():
    with pytest.raises(ConstructionError, match="cascade wiring"):
        SequenceModel.from_compiled(compile_householder(resolve_spec("T3")))  # two holonomy levels
    with pytest.raises(ConstructionError, match="cascade wiring"):
        SequenceModel.from_compiled(compile_householder(resolve_spec("Z6"), construction="reflections2"))
    with pytest.raises(ConstructionError, match="cascade wiring"):
        SequenceModel.from_compiled(compile_nfsm(resolve_spec("T3"), layers="stacked"))
    with pytest.raises(ConstructionError, match="diagonal"):
        SequenceModel.from_compiled(compile_diagonal(resolve_spec("Z6")))
    # S3 acting on 3 points: 6 code points, 3 states
    s3 = Automaton(np.array([[1, 0, 2], [1, 2, 0]]), initial=0)
    with pytest.raises(ConstructionError, match="several code points"):
        SequenceModel.from_compiled(compile_householder(s3, construction="permutation"))
