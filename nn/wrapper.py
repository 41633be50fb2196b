"""The model around the layer: fsa2rnn's block or fla's causal-LM wrapper (``ModelConfig.wrapper``).

- ``fsa2rnn`` (the default): the block's MLP is Linear → GELU → Linear with biases, of width ``mlp_ratio · d``;
  embedding, MLP, norms and classifier keep PyTorch's initialisation; RMSNorm with PyTorch's default ε.
- ``fla``: the wrapper of fla's ``DeltaNetForCausalLM``, which the Grazzi et al. runs train (their
  ``DeltaNetForCausalLMMod`` subclasses it): a gated (SwiGLU) MLP without biases, ``down(silu(g) ⊙ y)`` with
  ``[g, y] = gate(x)``, of width the multiple of 256 at or above ``⌊(2/3) · mlp_ratio · d⌋``; every Linear of the
  wrapper, the embedding and the classifier drawn from N(0, 0.02²) (``initializer_range``), biases zero, and each
  MLP's down-projection divided by √(2 · n_layers) (GPT-2's pre-norm residual rescaling; fla's ``_init_weights``);
  RMSNorm ε = 1e−6; the classifier without bias. The layer keeps its own initialisation: fla marks its layers as
  initialised, so the wrapper's N(0, 0.02²) does not reach them (``delta_form="fla"``: Xavier with gain 2^−2.5).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

WRAPPERS = ("fsa2rnn", "fla")
#: fla's ``initializer_range``: the std of the wrapper's Linear and Embedding weights
FLA_INIT_STD = 0.02
#: fla's ``norm_eps`` of the model's RMSNorms
FLA_NORM_EPS = 1e-6


def gated_width(d: int, ratio: float) -> int:
    """fla's ``DeltaNetMLP`` width: the multiple of 256 at or above ⌊(2/3) · ratio · d⌋ (0 for ratio 0)."""
    if ratio <= 0:
        return 0
    return 256 * math.ceil(int(d * ratio * 2 / 3) / 256)


class GatedMLP(nn.Module):
    """fla's gated MLP: ``down(silu(g) ⊙ y)``, ``[g, y] = gate(x)``, no biases."""

    def __init__(self, d: int, hidden: int) -> None:
        super().__init__()
        self.gate = nn.Linear(d, 2 * hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g, y = self.gate(x).chunk(2, dim=-1)
        return self.down(F.silu(g) * y)


def make_mlp(wrapper: str, d: int, ratio: float) -> nn.Module | None:
    """The block's MLP of a wrapper (None for ratio 0)."""
    if wrapper == "fla":
        hidden = gated_width(d, ratio)
        return GatedMLP(d, hidden) if hidden else None
    hidden = int(round(ratio * d))
    return nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d)) if hidden else None


def norm_eps(wrapper: str) -> float | None:
    """The ε of the wrapper's norms (None: PyTorch's default)."""
    return FLA_NORM_EPS if wrapper == "fla" else None


@torch.no_grad()
def init_fla(embedding: nn.Module, mlps: list[nn.Module], classifier: nn.Linear, n_layers: int) -> None:
    """fla's ``_init_weights`` on the wrapper's parts (module docstring); the layers are left as they are."""
    modules = [embedding, classifier, *(m for mlp in mlps for m in mlp.modules() if isinstance(m, nn.Linear))]
    for m in modules:
        m.weight.normal_(0.0, FLA_INIT_STD)
        if getattr(m, "bias", None) is not None:
            m.bias.zero_()
    for mlp in mlps:
        if isinstance(mlp, GatedMLP):
            mlp.down.weight.div_(math.sqrt(2 * n_layers))
