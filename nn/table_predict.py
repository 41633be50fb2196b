"""A trained one-layer NFSM read through its tables (the ``predict`` protocol of nn/lmax.py).

In eval mode a one-layer NFSM of a SequenceModel reads token x_t through the layer input norm1(embedding(x_t)),
which depends on the token alone: its hard tables σ_x = argmax θ(x) (nn/layers/nfsm.py ``transition``) are one
(vocab, heads, d_max) array, and the head indices h_t = σ_{x_t}(h_{t−1}) are a table scan (compiler/scans/table_scan.py)
rather than per-position logits (heads·d_max² of them a position). The model's output at position t depends only on
(x_t, h_t) — the block adds the layer's output for h_t to the token's embedding, then the MLP, the final norm and
the classifier — and h_t = σ_{x_t}(h_{t−1}), so the predicted class is a function of the pair (x_t, h_{t−1}):
:class:`NFSMTablePredictor` computes it with the model's own forward (words of length 1 started at h_{t−1}), once
for every pair the words visit, in batches, and caches it. The state carried between chunks is the model's own
(``[{"indices": (B, heads)}]``), so the two predictors continue each other's words.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..compiler.scans.table_scan import table_scan
from ..fsa.inputs import check_id_range
from .layers import NFSM

#: most (token, configuration) pairs a predictor caches (a dense int64 array); larger models read per position
MAX_PAIRS = 1 << 22
#: pairs evaluated by one forward call
PAIR_BATCH = 4096


def table_readable(model: Any) -> bool:
    """Whether ``model`` (a SequenceModel) is a one-layer NFSM over tokens with at most :data:`MAX_PAIRS`
    (token, configuration) pairs, without a convolution (which makes a table depend on earlier tokens)."""
    cfg = model.config
    if cfg.layer != "nfsm" or cfg.n_layers != 1 or cfg.input_dim is not None:
        return False
    layer = model.blocks[0].layer
    return isinstance(layer, NFSM) and layer.conv is None and cfg.vocab * layer.d_max ** len(layer.heads) <= MAX_PAIRS


class NFSMTablePredictor:
    """``predict(inputs, state) -> (predictions, state)`` of a one-layer NFSM SequenceModel (module docstring);
    the model must stay unchanged while the predictor is used (its tables and outputs are read once)."""

    @torch.no_grad()
    def __init__(self, model: Any, device: torch.device | str | None = None) -> None:
        if not table_readable(model):
            raise ValueError("NFSMTablePredictor: not a one-layer NFSM over tokens of a manageable size")
        self.model = model
        self.device = torch.device(device) if device is not None else model.device
        layer = model.blocks[0].layer
        was = model.training
        model.eval()
        try:
            self.tables = model.symbol_transitions().cpu().numpy().astype(np.int64)  # (vocab, H, d_max)
            self.start = layer.start_indices().cpu().numpy().astype(np.int64)
        finally:
            model.train(was)
        self.heads, self.d_max = len(layer.heads), layer.d_max
        self.weights = self.d_max ** np.arange(self.heads - 1, -1, -1, dtype=np.int64)  # first head most significant
        self.configs = self.d_max**self.heads
        self.cache = np.full(model.config.vocab * self.configs, -1, dtype=np.int64)

    def outputs(self, tokens: np.ndarray, prev: np.ndarray) -> np.ndarray:
        """The class the model predicts on reading ``tokens`` (…) from the configurations ``prev`` (…, heads)."""
        keys = tokens * self.configs + prev @ self.weights
        self._fill(keys.reshape(-1))
        return self.cache[keys]

    @torch.no_grad()
    def _fill(self, keys: np.ndarray) -> None:
        """Evaluate the model on the (token, previous configuration) pairs ``keys`` not yet cached."""
        keys = np.unique(keys[self.cache[keys] < 0])
        was = self.model.training
        self.model.eval()
        try:
            for i in range(0, len(keys), PAIR_BATCH):
                k = keys[i : i + PAIR_BATCH]
                tokens, code = np.divmod(k, self.configs)
                prev = (code[:, None] // self.weights) % self.d_max
                state = [{"indices": torch.from_numpy(prev).to(self.device)}]
                ids = torch.from_numpy(tokens[:, None]).to(self.device)
                logits, _ = self.model(ids, state, True)
                self.cache[k] = logits[:, -1].argmax(-1).cpu().numpy()
        finally:
            self.model.train(was)

    def __call__(self, inputs: np.ndarray, state: Any) -> tuple[np.ndarray, Any]:
        ids = np.asarray(inputs, dtype=np.int64)
        bsz, length = ids.shape
        self.check_ids(ids)
        if state is None:
            prev = np.broadcast_to(self.start, (bsz, self.heads))
        else:
            prev = state[0]["indices"].cpu().numpy().astype(np.int64)
        if length == 0:
            return np.empty((bsz, 0), dtype=np.int64), state
        idx = np.stack([table_scan(self.tables[:, h, :], ids, prev[:, h]) for h in range(self.heads)], axis=-1)
        before = np.concatenate([prev[:, None, :], idx[:, :-1]], axis=1)  # h_{t−1}, (B, T, heads)
        last = torch.from_numpy(np.ascontiguousarray(idx[:, -1])).to(self.device)
        return self.outputs(ids, before), [{"indices": last}]

    def check_ids(self, ids: np.ndarray) -> None:
        """UnknownSymbolError for a token id outside the vocabulary."""
        check_id_range(ids, self.model.config.vocab)


__all__ = ["MAX_PAIRS", "NFSMTablePredictor", "table_readable"]
