"""Tasks that no finite automaton generates: modular arithmetic with brackets, and tracking shuffled objects.

- ``grazzi:modarith_brackets`` (negative-eigenvalues paper, App. E.1, after Delétang et al. 2023): a random
  expression over single digits 0..m−1, ``+ - *`` and brackets, then ``=``; the target is the value mod m, judged at
  the ``=`` only (the language is context-free, not regular). ``*`` binds tighter than ``+``/``-``, which associate to
  the left. An expression has an odd number of tokens, so a word of length L holds the longest expression that
  fits before its ``=``; the rest is padding.
- ``brandoit:TSO:N`` (length-independent paper §7, after Srivastava et al. 2023, "tracking shuffled objects"): N people
  each holding one of N items (``alice has the key .`` for each), then swaps (``alice swaps with bob .``), then the
  question ``who has the key ?``; the target, judged at ``?``, is the person holding that item. The *length* of a
  TSO word is its number of swaps (5 tokens each).
"""

from __future__ import annotations

import torch

from .base import Batch, LengthSpec, Task, draw_lengths

PEOPLE = ["alice", "bob", "claire", "dave", "eve"]
ITEMS = ["key", "ball", "book", "hat", "pen"]


class ModArithBrackets(Task):
    def __init__(self, m: int = 5) -> None:
        vocab = [str(d) for d in range(m)] + ["+", "-", "*", "(", ")", "=", "[PAD]"]
        super().__init__(
            name="grazzi:modarith_brackets",
            vocab=vocab,
            classes=[str(v) for v in range(m)],
            chance=1.0 / m,
            source="Grazzi et al. (negative eigenvalues), App. E.1; Delétang et al. 2023",
            description=f"modular arithmetic mod {m} with brackets; the value is judged at '='",
            pad_id=len(vocab) - 1,
        )
        self.m = m

    def _expression(self, length: int, gen: torch.Generator) -> list[str]:
        """A uniformly shaped random expression of exactly ``length`` tokens (odd, ≥ 1)."""
        if length == 1:
            return [str(int(torch.randint(0, self.m, (1,), generator=gen)))]
        # brackets around a shorter expression, or a binary operation splitting the rest
        if length >= 3 and float(torch.rand(1, generator=gen)) < 0.2:
            return ["(", *self._expression(length - 2, gen), ")"]
        left = 2 * int(torch.randint(0, (length - 1) // 2, (1,), generator=gen)) + 1
        op = "+-*"[int(torch.randint(0, 3, (1,), generator=gen))]
        return [*self._expression(left, gen), op, *self._expression(length - 1 - left, gen)]

    def value(self, tokens: list[str]) -> int:
        """The value mod m (Python's integer evaluation: the precedence and associativity of the task)."""
        return eval("".join(tokens), {"__builtins__": {}}) % self.m  # tokens are digits, + - * and brackets only

    def sample(self, batch: int, length: LengthSpec, generator: torch.Generator, *, train: bool = True) -> Batch:
        lengths = draw_lengths(batch, length, generator)
        if int(lengths.min()) < 2:
            raise ValueError("grazzi:modarith_brackets needs words of length ≥ 2 (an operand and '=')")
        t = int(lengths.max())
        index = {s: i for i, s in enumerate(self.vocab)}
        inputs = torch.full((batch, t), self.pad_id, dtype=torch.long)
        targets = torch.zeros((batch, t), dtype=torch.long)
        mask = torch.zeros((batch, t), dtype=torch.bool)
        for b, n in enumerate(lengths.tolist()):
            expr_len = n - 1 if (n - 1) % 2 else n - 2
            expr = self._expression(expr_len, generator)
            inputs[b, : expr_len + 1] = torch.tensor([index[s] for s in [*expr, "="]])
            targets[b, expr_len] = self.value(expr)
            mask[b, expr_len] = True
        return Batch(inputs, targets, mask, lengths)


class TrackingShuffledObjects(Task):
    def __init__(self, n: int) -> None:
        if not 2 <= n <= len(PEOPLE):
            raise ValueError(f"TSO:N needs 2 ≤ N ≤ {len(PEOPLE)}, got {n}")
        people, items = PEOPLE[:n], ITEMS[:n]
        vocab = people + items + ["has", "the", "swaps", "with", "who", ".", "?", "[PAD]"]
        super().__init__(
            name=f"brandoit:TSO:{n}",
            vocab=vocab,
            classes=people,
            chance=1.0 / n,
            source="Brandoit et al. (length-independent state tracking) §7; Srivastava et al. 2023",
            description=f"tracking shuffled objects with {n} people; length = number of swaps; judged at '?'",
            pad_id=len(vocab) - 1,
            default_train_length=(1, 20),
        )
        self.n = n

    def sample(self, batch: int, length: LengthSpec, generator: torch.Generator, *, train: bool = True) -> Batch:
        n, ix = self.n, {s: i for i, s in enumerate(self.vocab)}
        swaps = draw_lengths(batch, length, generator)
        tokens_len = 5 * n + 5 * swaps + 5
        t = int(tokens_len.max())
        inputs = torch.full((batch, t), self.pad_id, dtype=torch.long)
        targets = torch.zeros((batch, t), dtype=torch.long)
        mask = torch.zeros((batch, t), dtype=torch.bool)
        holder_of = torch.argsort(torch.rand(batch, n, generator=generator), dim=1)  # item j held by person
        intro = torch.empty((batch, 5 * n), dtype=torch.long)
        intro[:, 0::5] = holder_of  # "p has the item ." with people listed by item
        intro[:, 1::5], intro[:, 2::5] = ix["has"], ix["the"]
        intro[:, 3::5] = torch.arange(n) + n
        intro[:, 4::5] = ix["."]
        inputs[:, : 5 * n] = intro
        # swaps, vectorized over the batch: a uniform pair of distinct people per swap
        s_max = int(swaps.max())
        a = torch.randint(0, n, (batch, s_max), generator=generator)
        c = (a + torch.randint(1, n, (batch, s_max), generator=generator)) % n
        owner = holder_of.clone()  # owner[b, item] = person
        rows = torch.arange(batch)
        for s in range(s_max):
            active = s < swaps
            pos = 5 * n + 5 * s
            sentence = torch.stack(
                [a[:, s], torch.full_like(a[:, s], ix["swaps"]), torch.full_like(a[:, s], ix["with"]), c[:, s]]
                + [torch.full_like(a[:, s], ix["."])],
                dim=1,
            )
            inputs[active, pos : pos + 5] = sentence[active]
            sa, sc = a[:, s, None], c[:, s, None]
            swapped = torch.where(owner == sa, sc, torch.where(owner == sc, sa, owner))
            owner = torch.where(active[:, None], swapped, owner)
        item = torch.randint(0, n, (batch,), generator=generator)
        q = 5 * n + 5 * swaps  # where each question starts
        cols = q[:, None] + torch.arange(5)[None, :]
        question = torch.stack(
            [torch.full_like(item, ix["who"]), torch.full_like(item, ix["has"]), torch.full_like(item, ix["the"])]
            + [n + item, torch.full_like(item, ix["?"])],
            dim=1,
        )
        inputs[rows[:, None], cols] = question
        targets[rows, q + 4] = owner[rows, item]
        mask[rows, q + 4] = True
        return Batch(inputs, targets, mask, tokens_len)
