"""The bridge from a compiled "pdssm" model (compiler/targets/pdssm/) to a trainable SequenceModel with one
:class:`~fsa2rnn.nn.layers.PDSSM` layer computing the same states (:meth:`SequenceModel.from_compiled`):

- one-hot embedding, d_model = |Σ| + N (the symbol in the first |Σ| coordinates, the state in the last N), no norm,
  no MLP;
- a dictionary of K = |Σ| matrices, M^{(x)} = s·P(x) (column q: s in row δ_x(q)), and a selector whose softmax puts
  weight 1 − O(e^{−30}) on the symbol's own matrix, so the column hardmax of the mixture is P(x) exactly;
- D(x) = 1: the magnitude MLP's output bias +40 (σ(40) = 1 in float32 and float64), the phase's −40 (a phase of
  about 3·10⁻¹⁷ rad); the drive B x = 0 and h_0 = the compiled code point e_{q0};
- the state read out whole: C copies Re h into the last N coordinates, D_skip = 0, out_proj the identity, and the
  classifier scores state q by α h_i for the coordinate i that reads as q (α: cross-entropy ≤ 1e−9 at the code
  points).

The dense dictionary holds |Σ|·N² numbers, so the bridge stops at :data:`MAX_DICTIONARY` (M11's 7,920 states compile
and run as index arrays, but do not fit here).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..compiler.model import CompiledModel
from ..compiler.registry import program_of
from ..compiler.targets.pdssm.program import PDSSMProgram
from ..fsa.errors import ConstructionError, LimitExceededError

if TYPE_CHECKING:  # SequenceModel.from_compiled passes its class: no import cycle
    from .model import SequenceModel

#: dictionary entries |Σ|·N² the bridge builds
MAX_DICTIONARY = 1 << 24
#: the cross-entropy at the compiled code points is at most this
CE_BOUND = 1e-9
_SELECT = 30.0  # selector logit of the symbol's own dictionary matrix
_SCALE = 10.0  # the dictionary's entries: a margin for the column hardmax of the mixture
_SATURATE = 40.0  # σ(±40) rounds to 1 and 0 in float32 and float64


def pdssm_sequence_model(
    cls: type[SequenceModel], model: CompiledModel, dtype: torch.dtype = torch.float64
) -> SequenceModel:
    """The ``cls`` (SequenceModel) of a one-layer compiled PD-SSM (module docstring), in eval mode."""
    p = program_of(model, expect=PDSSMProgram)
    P, D, h0, states = p.P, p.D, p.h0, p.readout
    n_sym, n = P.shape
    if n_sym * n * n > MAX_DICTIONARY:
        raise LimitExceededError(
            f"the PD-SSM layer's dense dictionary would hold |Σ|·N² = {n_sym}·{n}² = {n_sym * n * n} entries, over "
            f"the bridge's limit of {MAX_DICTIONARY} (the compiled model itself stores P as index arrays)"
        )
    if not (D == 1).all():
        raise ConstructionError("the bridge maps D(x) = I only; this model has other diagonal entries")
    if len(np.unique(states)) != len(states):
        raise ConstructionError("two code points read as one state: no linear classifier separates them")
    d_model = n_sym + n
    n_states = p.n_states
    net = cls(
        n_sym,
        n_states,
        "pdssm",
        1,
        d_model,
        layer_args=dict(state_size=n, n_dict=n_sym),
        mlp_ratio=0,
        norm="none",
    ).to(dtype)
    pd = net.blocks[0].layer
    f = dict(dtype=dtype)
    alpha = math.log(max(n_states - 1, 1)) - math.log(CE_BOUND)
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()
        net.embedding.weight[:, :n_sym] = torch.eye(n_sym, **f)
        pd.selector.weight[:, :n_sym] = _SELECT * torch.eye(n_sym, **f)
        cols = torch.arange(n)
        for x in range(n_sym):
            pd.dictionary[x, torch.tensor(P[x]), cols] = _SCALE
        pd.mag_out.bias.fill_(_SATURATE)
        pd.phase_out.bias.fill_(-_SATURATE)
        pd.h0.zero_()
        pd.h0[:, 0] = torch.tensor(h0, **f)
        pd.C.weight[n_sym + cols, cols] = 1
        pd.out_proj.weight.copy_(torch.eye(d_model, **f))
        net.classifier.weight[torch.tensor(states), n_sym + cols] = alpha
        net.classifier.bias.fill_(-1e3 * alpha)  # states no code point reads as
        net.classifier.bias[torch.tensor(states)] = 0
    return net.eval()
