"""Probing a model for sample-based extraction: its hidden state and predicted output after every prefix of sampled
words, and its predicted outputs on sampled continuations of each prefix.

A :class:`Probe` has one primitive, ``step(state, ids) -> (hidden, labels, state)``: continue the words in
``state`` by the symbols ``ids`` (B, m), returning the hidden vector after the last of them (B, D), the predicted
class after each (B, m) and the continued state. :meth:`Probe.walk` and :meth:`Probe.describe` build everything
extraction needs from it.

- :class:`SequenceProbe` (a :class:`~fsa2rnn.nn.model.SequenceModel`): the state is the model's carried state, so a
  continuation costs its own length. The hidden vector is what carries the state — every recurrent layer's state
  (DeltaNet/DeltaProduct S, the diagonal h, DLR's modal x as (re, im), an NFSM's indices one-hot, the LSTM's h and
  c) but not the short convolutions' caches (the last few inputs, whose effect the continuations see), and for a
  model with a Transformer layer, the features the classifier reads.
- :class:`WordsProbe` (compiled runtime modules, whole words only): the state is the prefix itself, rerun with
  every continuation (quadratic in the length; meant for small checks).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..fsa.errors import ModelFileError, SpecError
from ..nn.compiled import run_options


class Probe:
    """See the module docstring; subclasses implement :meth:`initial` and :meth:`step`."""

    def initial(self, n: int) -> Any:  # pragma: no cover
        raise NotImplementedError

    def step(self, state: Any, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, Any]:  # pragma: no cover
        raise NotImplementedError

    def walk(self, ids: np.ndarray, suffixes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For words ids (N, L) and suffixes (S, l): hidden (N, L, D) and labels (N, L) after each prefix of length
        1..L, and the signatures (N, L + 1, S·l): the labels on every suffix after each prefix of length 0..L."""
        n, length = ids.shape
        n_suf, l_suf = suffixes.shape
        state = self.initial(n)
        sig = np.empty((n, length + 1, n_suf * l_suf), dtype=np.int64)
        hidden, labels = [], np.empty((n, length), dtype=np.int64)
        for t in range(length + 1):
            sig[:, t] = self._signatures(state, n, suffixes)
            if t < length:
                h, lab, state = self.step(state, ids[:, t : t + 1])
                hidden.append(h)
                labels[:, t] = lab[:, 0]
        return np.stack(hidden, axis=1), labels, sig

    def describe(self, words: list[list[int]], suffixes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For nonempty words: hidden (W, D) and label (W,) after each word, and its signature (W, S·l)."""
        by_length: dict[int, list[int]] = {}
        for i, w in enumerate(words):
            by_length.setdefault(len(w), []).append(i)
        out_h: list[Any] = [None] * len(words)
        out_l = np.empty(len(words), dtype=np.int64)
        out_s = np.empty((len(words), suffixes.size), dtype=np.int64)
        for length, rows in by_length.items():
            if length == 0:
                raise ValueError("describe: words must be nonempty")
            ids = np.array([words[i] for i in rows], dtype=np.int64)
            h, lab, state = self.step(self.initial(len(rows)), ids)
            sig = self._signatures(state, len(rows), suffixes)
            for j, i in enumerate(rows):
                out_h[i], out_l[i], out_s[i] = h[j], lab[j, -1], sig[j]
        return np.stack(out_h), out_l, out_s

    def tile(self, state: Any, reps: int) -> Any:  # pragma: no cover
        """The state of ``reps`` copies of the words, copy-major (word i of copy j at row j·B + i)."""
        raise NotImplementedError

    def _signatures(self, state: Any, n: int, suffixes: np.ndarray) -> np.ndarray:
        """Labels (n, S·l) on every suffix after each of the n words: one step over S·n rows."""
        n_suf, l_suf = suffixes.shape
        if n_suf == 0:
            return np.empty((n, 0), dtype=np.int64)
        _, lab, _ = self.step(self.tile(state, n_suf), np.repeat(suffixes, n, axis=0))
        return lab.reshape(n_suf, n, l_suf).transpose(1, 0, 2).reshape(n, n_suf * l_suf)


class SequenceProbe(Probe):
    """A SequenceModel read with its carried state (eval mode, no gradients, the model's dtype)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        for block in model.blocks:
            if getattr(block.layer, "bidirectional", False):
                raise SpecError("a bidirectional DLR reads the future: it realizes no automaton to extract")
        self.device = model.device
        self.use_features = not all(getattr(b.layer, "recurrent", True) for b in model.blocks)

    def initial(self, n: int) -> Any:
        return None

    def tile(self, state: Any, reps: int) -> Any:
        if state is None:
            return None
        return [block.layer.tile_state(st, reps) for block, st in zip(self.model.blocks, state)]

    @torch.no_grad()
    def step(self, state: Any, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, Any]:
        model = self.model
        was = model.training
        model.eval()
        try:
            x = torch.as_tensor(np.ascontiguousarray(ids), device=self.device).long()
            feats, new = model.features(x, state, True)
            labels = model.classifier(feats).argmax(-1)
        finally:
            model.train(was)
        return self._vector(new, feats[:, -1]), labels.cpu().numpy(), new

    def _vector(self, states: list[dict[str, Any]], last_features: torch.Tensor) -> np.ndarray:
        bsz = last_features.shape[0]
        vectors = [block.layer.state_vector(st) for block, st in zip(self.model.blocks, states)]
        parts = [v for v in vectors if v is not None]  # each layer's carried state (nn/layers/base.py)
        if self.use_features or not parts:
            parts.append(last_features)
        flat = [p.reshape(bsz, -1).to(torch.float64) for p in parts]
        return torch.cat(flat, dim=1).cpu().numpy()


class WordsProbe(Probe):
    """A causal module that reads whole words: ``hidden(ids) -> (B, T, D)`` and ``predict(ids) -> (B, T)`` labels.
    Causality lets every continuation of every prefix be one padded row (the symbols after a row's end are never
    read for the positions that count), so a walk takes a few batched runs."""

    #: tokens per run at most
    BATCH_TOKENS = 2**20

    def __init__(self, hidden: Any, predict: Any) -> None:
        self.hidden, self.predict = hidden, predict

    def initial(self, n: int) -> np.ndarray:
        return np.zeros((n, 0), dtype=np.int64)

    def tile(self, state: np.ndarray, reps: int) -> np.ndarray:
        return np.tile(state, (reps, 1))

    def step(self, state: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        full = np.concatenate([state, ids], axis=1)
        h = np.asarray(self.hidden(full))[:, -1]
        lab = np.asarray(self.predict(full))[:, -ids.shape[1] :]
        return h.reshape(len(full), -1).astype(np.float64), lab.astype(np.int64), full

    def walk(self, ids: np.ndarray, suffixes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As :meth:`Probe.walk`, from one run of the words and batched runs of all continuations."""
        n, length = ids.shape
        hidden = np.asarray(self.hidden(ids), dtype=np.float64).reshape(n, length, -1)
        labels = np.asarray(self.predict(ids)).astype(np.int64)
        prefixes = np.repeat(ids, length + 1, axis=0)  # row i·(L + 1) + t: word i cut at t
        cut = np.tile(np.arange(length + 1), n)
        sig = self._continuations(prefixes, cut, suffixes).reshape(n, length + 1, -1)
        return hidden, labels, sig

    def describe(self, words: list[list[int]], suffixes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lengths = np.array([len(w) for w in words], dtype=np.int64)
        if not len(words) or lengths.min() < 1:
            raise ValueError("describe: words must be nonempty")
        padded = np.zeros((len(words), int(lengths.max())), dtype=np.int64)
        for i, w in enumerate(words):
            padded[i, : len(w)] = w
        rows = np.arange(len(words))
        hidden = np.asarray(self.hidden(padded), dtype=np.float64).reshape(len(words), padded.shape[1], -1)
        labels = np.asarray(self.predict(padded)).astype(np.int64)
        sig = self._continuations(padded, lengths, suffixes)
        return hidden[rows, lengths - 1], labels[rows, lengths - 1], sig

    def _continuations(self, prefixes: np.ndarray, cut: np.ndarray, suffixes: np.ndarray) -> np.ndarray:
        """Labels (W, S·l) along every suffix after prefixes[i, :cut[i]]: rows prefix · suffix_j · (leftovers)."""
        w, p = prefixes.shape
        n_suf, l_suf = suffixes.shape
        if n_suf == 0:
            return np.empty((w, 0), dtype=np.int64)
        base = np.zeros((w * n_suf, p + l_suf), dtype=np.int64)
        base[:, :p] = np.repeat(prefixes, n_suf, axis=0)  # row i·S + j
        cols = np.repeat(cut, n_suf)[:, None] + np.arange(l_suf)[None, :]
        rows = np.arange(w * n_suf)[:, None]
        base[rows, cols] = np.tile(suffixes, (w, 1))
        out = np.empty((w * n_suf, l_suf), dtype=np.int64)
        step = max(1, self.BATCH_TOKENS // base.shape[1])
        for s in range(0, len(base), step):
            lab = np.asarray(self.predict(base[s : s + step]))
            out[s : s + step] = lab[np.arange(len(lab))[:, None], cols[s : s + step]]
        return out.reshape(w, n_suf * l_suf)


def compiled_probe(module: Any) -> WordsProbe:
    """A :class:`WordsProbe` of a compiled module with flat hidden states (``hidden(ids, **options)``: linear RNNs,
    shift registers), those states as features; the module runs under the scan policy of `run` (the chunked scans):
    no loop over positions."""
    hidden_states = getattr(module, "hidden", None)
    if hidden_states is None:
        raise ModelFileError(f"cannot probe a {type(module).__name__}")
    options = run_options(module)

    def predict(ids: np.ndarray) -> np.ndarray:
        return module.predict_states(torch.from_numpy(ids), **options).cpu().numpy()

    @torch.no_grad()
    def hidden(ids: np.ndarray) -> np.ndarray:
        return hidden_states(torch.from_numpy(ids), **options).double().cpu().numpy()

    return WordsProbe(hidden, predict)


def predict_words(model: Any, words: list[list[int]]) -> list[np.ndarray]:
    """The model's predicted labels after each position of each word (words of symbol ids, any lengths), by one
    padded ``predict_states`` call; an empty word gives an empty array."""
    if not words:
        return []
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    width = max(int(lengths.max()), 1)
    ids = np.zeros((len(words), width), dtype=np.int64)
    for i, w in enumerate(words):
        ids[i, : len(w)] = w
    pred = model.predict_states(torch.from_numpy(ids), torch.from_numpy(lengths)).cpu().numpy()
    return [pred[i, : lengths[i]].astype(np.int64) for i in range(len(words))]


__all__ = ["Probe", "SequenceProbe", "WordsProbe", "compiled_probe", "predict_words"]
