"""A tour of the trainable layers: build each in a SequenceModel, look at its transitions, and load compiled weights
(S5 by Theorem 3, M11 as an NFSM) into the same layers with SequenceModel.from_compiled.

Run: python examples/layers.py   (a few seconds, CPU)
"""

from __future__ import annotations

import numpy as np
import torch

from fsa2rnn.compiler import compile_householder, compile_nfsm
from fsa2rnn.fsa import resolve_spec
from fsa2rnn.nn import WRAPPERS, ModelConfig, SequenceModel
from fsa2rnn.nn.layers import LAYERS

torch.manual_seed(0)
rng = np.random.default_rng(0)

# 1. Every layer behind one interface: ids (B, T) → logits (B, T, n_classes); a config that round-trips as JSON.
args = {"deltaproduct": {"n_h": 2, "beta_range": (0, 2)}, "mamba": {"eig_range": (-1, 1)}, "nfsm": {"heads": [5, 5]}}
ids = torch.from_numpy(rng.integers(0, 4, (2, 32)))
for name in LAYERS:
    net = SequenceModel(4, 3, name, n_layers=2, d_model=32, layer_args=args.get(name, {}))
    assert ModelConfig.from_json(net.config.to_json()) == net.config
    n_params = sum(p.numel() for p in net.parameters())
    print(f"{name:13s} logits {tuple(net(ids).shape)}  parameters {n_params:6d}")

# 1b. The model around the layers: fsa2rnn's block (GELU MLP, PyTorch's init) or fla's DeltaNetForCausalLM, the model
# the Grazzi et al. runs train (gated MLP, N(0, 0.02²) init, no classifier bias; `fsa2rnn train --wrapper fla`).
for wrapper in WRAPPERS:
    net = SequenceModel(
        3, 2, "deltanet", n_layers=2, d_model=128, layer_args={"heads": 4, "head_dim": 32}, wrapper=wrapper
    )
    mlp = net.blocks[0].mlp
    kind = (
        f"gated MLP of width {mlp.down.in_features}" if wrapper == "fla" else f"GELU MLP of width {mlp[0].out_features}"
    )
    print(
        f"wrapper {wrapper}: {kind}, embedding std {net.embedding.weight.std():.3f}, "
        f"classifier bias {net.classifier.bias is not None}, parameters {sum(p.numel() for p in net.parameters())}"
    )

# 2. Transitions per symbol: DeltaProduct with β ∈ [0, 2] reaches negative eigenvalues, β ∈ [0, 1] (n_h = 2) does not.
for beta_range in ((0, 1), (0, 2)):
    net = SequenceModel(4, 3, "deltaproduct", d_model=32, layer_args={"n_h": 2, "beta_range": beta_range})
    with torch.no_grad():
        net.blocks[0].layer.b_proj.weight.mul_(20)  # push β towards the ends of its range
        ev = torch.linalg.eigvals(net.symbol_transitions())
    print(
        f"DeltaProduct beta_range={beta_range}: eigenvalues in [{ev.real.min():+.3f}, {ev.real.max():+.3f}], "
        f"max |imag| {ev.imag.abs().max():.1e}"
    )

# 3. Compiled weights in the trainable layers: S5 (Theorem 3 permutations) → DeltaProduct, float64.
a = resolve_spec("S5")
net = SequenceModel.from_compiled(compile_householder(a))
layer = net.blocks[0].layer
word = torch.from_numpy(rng.integers(0, a.n_symbols, (1, 10_000)))
right = np.array_equal(net.predict_states(word).numpy(), a.run(word.numpy()))
print(
    f"S5 → DeltaProduct (heads {layer.heads}, n_h {layer.n_h}, d_model {net.config.d_model}): "
    f"states right on a word of length 10^4: {right}"
)

# 4. M11 as 4 NFSM heads of 11 indices → the NFSM layer, float32, read in chunks that carry the state.
a = resolve_spec("M11")
net = SequenceModel.from_compiled(compile_nfsm(a)).float()
word = torch.from_numpy(rng.integers(0, a.n_symbols, (1, 10_000)))
pred = net.predict_states(word, chunk=1024)
print(
    f"M11 → NFSM (heads {net.blocks[0].layer.heads}): states right at length 10^4 in chunks of 1024: "
    f"{np.array_equal(pred.numpy(), a.run(word.numpy()))}"
)
