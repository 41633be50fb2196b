"""The task interface: a task turns an automaton (or a generator) into batches of inputs, targets and masks.

A :class:`Batch` holds, for B words padded to the longest length T in the batch:

- ``inputs``: (B, T) token ids (classification tasks), or (B, T, F) floats (the DLR regression tasks);
- ``targets``: (B, T) class ids, or (B, T, C) floats;
- ``mask``: (B, T) bool, the positions that are judged (and enter the loss): the task's *supervision*, ``answer``
  (each word's answer only, as the negative-eigenvalues paper trains its Chomsky tasks) or ``dense`` (every
  position, as word problems are trained); :meth:`Task.with_labels` switches a task that offers both;
- ``lengths``: (B,) the length of each word (positions ≥ length are padding, never judged).

Every random draw comes from the ``torch.Generator`` passed in, so the same seed gives the same batches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from ...fsa.errors import SpecError

LengthSpec = int | tuple[int, int]
#: which positions a task judges: each word's answer only, or every position
SUPERVISIONS = ("answer", "dense")


@dataclass(frozen=True)
class Batch:
    inputs: torch.Tensor
    targets: torch.Tensor
    mask: torch.Tensor
    lengths: torch.Tensor

    def to(self, device: torch.device | str) -> Batch:
        return Batch(*(t.to(device) for t in (self.inputs, self.targets, self.mask, self.lengths)))

    def slice(self, start: int, stop: int) -> Batch:
        """Rows start..stop−1 (a rank's share of a global batch in data-parallel training)."""
        return Batch(self.inputs[start:stop], self.targets[start:stop], self.mask[start:stop], self.lengths[start:stop])


@dataclass
class Task:
    """A named task. Subclasses implement :meth:`sample`; the fields describe it for ``fsa2rnn tasks``.

    ``vocab``: the input token names (the model's embedding size; for regression tasks, the input features);
    ``classes``: the target class names (regression: the output features); ``chance``: the accuracy of guessing
    (for the scaled accuracy (acc − chance)/(1 − chance)); ``automaton``: the automaton whose states the targets
    name, when there is one (extraction and comparison read it); ``supervision``: the positions judged (one of
    :data:`SUPERVISIONS`, None for a task whose mask is its own, e.g. the DLR regression tasks) and
    ``supervisions`` the ones it offers.
    """

    name: str
    vocab: list[str]
    classes: list[str]
    chance: float
    source: str
    description: str
    kind: str = "classification"  # or "regression"
    automaton: Any = None
    pad_id: int | None = None
    default_train_length: tuple[int, int] = (3, 40)
    info: dict[str, Any] = field(default_factory=dict)
    supervision: str | None = None
    supervisions: tuple[str, ...] = ()

    def with_labels(self, kind: str | None) -> Task:
        """The task judging ``kind`` positions (None: its declared supervision); SpecError if it does not offer it."""
        if kind is None:
            return self
        if kind not in SUPERVISIONS:
            raise SpecError(f"--labels must be one of {', '.join(SUPERVISIONS)}, got {kind!r}")
        if kind not in self.supervisions:
            offered = ", ".join(self.supervisions) or "none: its judged positions are fixed"
            raise SpecError(f"--labels {kind}: task {self.name!r} does not offer it (offers {offered})")
        self.supervision = kind
        return self

    @property
    def prefixes_judged(self) -> bool:
        """Whether the target at each position is the answer of the prefix ending there, so that prefixes of one
        long word may be judged as words (the L_max prefix search and chunked accuracy read whole words)."""
        return self.supervision == "dense" or (self.supervision == "answer" and self.automaton is not None)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def sample(self, batch: int, length: LengthSpec, generator: torch.Generator, *, train: bool = True) -> Batch:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """The row of ``fsa2rnn tasks``."""
        return {
            "name": self.name,
            "kind": self.kind,
            "alphabet": self.vocab,
            "n_classes": self.n_classes,
            "chance": self.chance,
            "source": self.source,
            "description": self.description,
            "supervision": self.supervision,
        }


def draw_lengths(batch: int, length: LengthSpec, generator: torch.Generator) -> torch.Tensor:
    """Word lengths: a fixed int, or uniform in [min, max] (inclusive) per word."""
    if isinstance(length, int):
        if length < 1:
            raise SpecError(f"a length must be ≥ 1, got {length}")
        return torch.full((batch,), length, dtype=torch.long)
    lo, hi = length
    if lo < 1 or hi < lo:
        raise SpecError(f"empty length range {lo}..{hi} (need 1 ≤ min ≤ max)")
    return torch.randint(lo, hi + 1, (batch,), generator=generator)


def length_mask(lengths: torch.Tensor, t: int) -> torch.Tensor:
    """(B, T) bool: position < length."""
    return torch.arange(t)[None, :] < lengths[:, None]


def answer_mask(lengths: torch.Tensor, t: int) -> torch.Tensor:
    """(B, T) bool: position = length − 1, each word's answer only."""
    return torch.arange(t)[None, :] == (lengths[:, None] - 1)


def parse_length_range(text: str) -> tuple[int, int]:
    """``"3..40"`` → (3, 40); ``"64"`` → (64, 64). SpecError for an empty or malformed range."""
    parts = text.split("..")
    try:
        lo, hi = (int(parts[0]), int(parts[-1])) if len(parts) in (1, 2) else (None, None)
    except ValueError:
        lo = hi = None
    if lo is None or hi is None:
        raise SpecError(f"bad length range {text!r} (write MIN..MAX, e.g. 3..40)")
    if lo < 1 or hi < lo:
        raise SpecError(f"empty length range {text!r} (need 1 ≤ MIN ≤ MAX)")
    return lo, hi
