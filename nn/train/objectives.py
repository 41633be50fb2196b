"""Brandoit et al.'s training objectives for the NFSM: the free and the anchored arm (their code's
``nfsm/training``; docs/reproductions.md).

- ``balanced`` loss: each word's mean cross-entropy under the weights w_t = exp(−3 (t − t*)₊) × the class balance
  of the batch (class c weighted ∝ count_c^−0.5 over the classes present, normalised to mean 1 over the positions),
  t* the word's first wrong position; the loss is the mean over words.
- exploration penalty: β · c(s) · the layer's exploration excess at each word's first error (words without error
  add nothing), c(s) a cosine from 1 to :data:`EXPLORE_FINAL` over the run; β = 0.03 free, 0.01 anchored (presets).
- anchored arm: every head's index is supervised against its code of the target state (compiler/targets/nfsm/
  families.py):
  Σ_heads balanced CE of :data:`ANCHOR_SCALE` × the one-hot head state + :data:`ANCHOR_WEIGHT` × the model's own
  balanced loss + the penalty, the first error taken on the heads; the NFSM's readout is pinned (out_proj shows
  each head's state, frozen) when the width allows it. Once the heads are exact on :data:`RELEASE_PATIENCE`
  validations in a row (sequence accuracy ≥ :data:`RELEASE_ACCURACY`), the arm is released: the free loss, the
  readout unpinned and a fresh optimizer.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

FIRST_ERROR_RATE = 3.0
CLASS_BALANCE_POWER = 0.5
EXPLORE_FINAL = 0.1
ANCHOR_WEIGHT = 0.1
ANCHOR_SCALE = 4.0
RELEASE_ACCURACY = 0.9999
RELEASE_PATIENCE = 10


def explore_scale(step: int, steps: int) -> float:
    """c(s): a cosine from 1 at step 0 to EXPLORE_FINAL at the last step."""
    t = min(max(step, 0), steps) / max(1, steps)
    return EXPLORE_FINAL + (1.0 - EXPLORE_FINAL) * 0.5 * (1.0 + math.cos(math.pi * t))


def first_error(correct: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(weights exp(−3 (t − t*)₊), frontier: 1 at t* only), both (B, T), from correct (B, T) bool."""
    ok = correct | ~mask
    clean = torch.cumprod(torch.cat([torch.ones_like(ok[:, :1]), ok[:, :-1]], 1).to(torch.float32), 1)
    t_star = clean.sum(1, keepdim=True) - 1.0
    t = torch.arange(ok.shape[1], device=ok.device, dtype=torch.float32)[None, :]
    weights = torch.exp(-FIRST_ERROR_RATE * (t - t_star).clamp(min=0))
    return weights * mask, clean * (~ok).to(torch.float32)


def class_balance(targets: torch.Tensor, mask: torch.Tensor, n_classes: int) -> torch.Tensor:
    """(B, T) weight of each position's class ∝ count^−0.5 over the classes present, mean 1 over the positions."""
    counts = torch.bincount(targets[mask], minlength=n_classes).to(torch.float32)
    raw = torch.where(counts > 0, counts.clamp(min=1.0) ** -CLASS_BALANCE_POWER, torch.zeros_like(counts))
    w = raw * mask.sum() / (counts * raw).sum().clamp(min=1e-12)
    return w[targets.clamp(min=0)] * mask


def word_mean(values: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Σ over words of each word's weighted mean (divide by the global batch for the mean)."""
    return ((values * weights).sum(1) / weights.sum(1).clamp(min=1e-6)).sum()


def balanced_ce(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor, correct: torch.Tensor | None = None):
    """(Σ over words of the balanced first-error CE, frontier (B, T)); ``correct`` defaults to the argmax's."""
    with torch.no_grad():
        if correct is None:
            correct = logits.argmax(-1) == targets
        w, frontier = first_error(correct, mask)
        w = w * class_balance(targets, mask, logits.shape[-1])
    ce = F.cross_entropy(logits.flatten(0, 1), targets.clamp(min=0).flatten(), reduction="none").view(mask.shape)
    return word_mean(ce, w), frontier


def frontier_excess(excess: torch.Tensor, frontier: torch.Tensor) -> torch.Tensor:
    """Σ over words of the excess at the word's first error."""
    return word_mean(excess, frontier)


class Anchor:
    """The anchored arm's codes (|Q|, H) and head sizes, and the pinned readout of the NFSM layer."""

    def __init__(self, codes: np.ndarray, sizes: list[int]) -> None:
        self.codes = torch.as_tensor(np.asarray(codes), dtype=torch.long)
        self.sizes = list(sizes)

    def head_targets(self, targets: torch.Tensor) -> torch.Tensor:
        """(B, T, H): each head's code of the target class (targets are states: readout ``state``; a class whose
        code is −1, e.g. TSO_N's answers, supervises no head)."""
        return self.codes.to(targets.device)[targets.clamp(min=0)]

    def heads_correct(self, indices: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        tgt = self.head_targets(targets)
        return ((indices == tgt) | (tgt < 0)).all(-1)

    def loss(self, states: torch.Tensor, indices: torch.Tensor, batch) -> tuple[torch.Tensor, torch.Tensor]:
        """(Σ over words of Σ_heads balanced CE on ANCHOR_SCALE × one-hot head states, frontier of the heads)."""
        tgt = self.head_targets(batch.targets)
        with torch.no_grad():
            mask = batch.mask & (tgt >= 0).all(-1)
            w, frontier = first_error(self.heads_correct(indices, batch.targets), mask)
            w = w * class_balance(batch.targets, mask, int(self.codes.shape[0]))
        total = states.new_zeros(())
        for h, d in enumerate(self.sizes):
            logits = ANCHOR_SCALE * states[..., h, :d]
            ce = F.cross_entropy(logits.flatten(0, 1), tgt[..., h].clamp(min=0).flatten(), reduction="none")
            ce = ce.view(w.shape)
            total = total + word_mean(ce, w)
        return total, frontier

    @staticmethod
    def can_pin(layer, d_model: int) -> bool:
        return sum(layer.heads) <= d_model

    @staticmethod
    def pin(layer) -> None:
        """out_proj := ANCHOR_SCALE × [I; 0]: output channel Σ_{k<i} d_k + j shows head i on index j."""
        with torch.no_grad():
            w = layer.out_proj.weight
            w.zero_()
            n = sum(layer.heads)
            w[:n, :n] = ANCHOR_SCALE * torch.eye(n, dtype=w.dtype, device=w.device)
        layer.out_proj.weight.requires_grad_(False)

    @staticmethod
    def unpin(layer) -> None:
        layer.out_proj.weight.requires_grad_(True)
