"""fla's layers (flash-linear-attention, the optional extra ``fla``) as plug-in layers: ``--model fla:DeltaNet``
(also ``fla:GatedDeltaNet``, ``fla:GatedDeltaProduct``, ``fla:RWKV7``, ``fla:Mamba2``, any ``fla.layers`` class).

fla's layers take ``hidden_size`` and return a tuple ``(output, attentions, cache)``; :class:`FlaLayer` keeps the
output, so the layer sits in the block like any forward-only plug-in (nn/layers/plugin.py carries the prefix
between chunks). The eigenvalue range passes through: ``--eig -1,1`` is ``allow_neg_eigval=True`` and ``--eig 0,1``
``False`` (Grazzi et al.'s switch), refused for a layer without that switch. fla's kernels are Triton kernels for
CUDA: a run on the CPU is refused in one line (nn/train/config.py). The adapter is tested on the CPU against a
stand-in module with fla's forward signature (tests/plugins/fsa2rnn_toys/fla_standin.py); benchmarks/gpu_fla.py is
the GPU comparison.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from torch import nn

from ...fsa.errors import PluginError, SpecError

#: the switch of fla's layers that extends the eigenvalue range to [−1, 1]
NEG_EIGVAL = "allow_neg_eigval"


class FlaLayer(nn.Module):
    """An fla layer with the plug-in forward: x (B, T, d_model) → its output (the first element of fla's tuple)."""

    def __init__(self, layer: nn.Module) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, x: Any) -> Any:
        out = self.layer(x)
        return out[0] if isinstance(out, tuple) else out


def _fla_layers(module: Any = None) -> Any:
    if module is not None:
        return getattr(module, "layers", module)
    try:
        return importlib.import_module("fla.layers")
    except ModuleNotFoundError:
        why = "fla's layers need flash-linear-attention: pip install 'fsa2rnn[fla]' (a CUDA machine)"
        raise SpecError(why) from None


def fla_factory(name: str, module: Any = None) -> Any:
    """The plug-in callable ``(d_model, eig=None, **args)`` → :class:`FlaLayer` of ``fla.layers.<name>`` (of
    ``module``'s ``layers`` for a stand-in); ``eig`` "0,1" | "-1,1" sets ``allow_neg_eigval``."""

    def make(d_model: int, eig: str | None = None, **args: Any) -> FlaLayer:
        layers = _fla_layers(module)
        cls = getattr(layers, name, None)
        if cls is None or not callable(cls):
            raise PluginError(f"plug-in 'fla:{name}': fla.layers has no layer {name!r}")
        if eig is not None:
            try:
                takes = NEG_EIGVAL in inspect.signature(cls).parameters
            except (TypeError, ValueError):
                takes = False
            if not takes:
                raise SpecError(f"--eig: fla's {name} has no {NEG_EIGVAL} switch (no eigenvalue range to set)")
            if eig not in ("0,1", "-1,1"):
                raise SpecError(f"--eig must be 0,1 or -1,1, got {eig!r}")
            args[NEG_EIGVAL] = eig == "-1,1"
        return FlaLayer(cls(hidden_size=d_model, **args))

    make.__name__ = make.__qualname__ = f"fla_{name}"
    return make


__all__ = ["FlaLayer", "NEG_EIGVAL", "fla_factory"]
