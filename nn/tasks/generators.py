"""Tasks that no finite automaton generates: modular arithmetic with brackets, and tracking shuffled objects.

- ``grazzi:modarith_brackets`` (negative-eigenvalues paper, App. E.1, after Delétang et al. 2023, as the authors'
  harness generates it): a random expression over single digits 0..m−1 in which every operation is bracketed,
  ``( left op right )``, and a terminal may carry a unary minus or brackets (``d``, ``- d``, ``( d )``,
  ``( - d )``), then ``=``; the target is the value mod m, judged at the ``=`` only (the language is context-free,
  not regular). Operations are ``+ - *`` (the authors' ``mult`` flag, Table 3's "w/ brackets") or ``+ -`` only
  (``grazzi:modarith_brackets:nomult``, Table 5's "w/ brackets, no mult"). A length L is the authors' total length
  (expression, ``=``, answer, ``[PAD]``), at least 5: the word read is the expression of L − 3 tokens and ``=``.
- ``brandoit:shuffled:N`` (after Srivastava et al. 2023, "tracking shuffled objects"; *not* the authors' TSO_N, which
  is ``brandoit:TSO3..5``, nn/tasks/tso.py): N people each holding one of N items (``alice has the key .`` for each),
  then swaps (``alice swaps with bob .``), then the question ``who has the key ?``; only the answer is judged, at
  ``?`` (the person holding that item), and the *length* of a word is its number of swaps (5 tokens each).
"""

from __future__ import annotations

import torch

from .base import Batch, LengthSpec, Task, draw_lengths

PEOPLE = ["alice", "bob", "claire", "dave", "eve"]
ITEMS = ["key", "ball", "book", "hat", "pen"]


class ModArithBrackets(Task):
    def __init__(self, m: int = 5, *, mult: bool = True) -> None:
        vocab = [str(d) for d in range(m)] + ["+", "-", "*", "(", ")", "=", "[PAD]"]
        super().__init__(
            name="grazzi:modarith_brackets" + ("" if mult else ":nomult"),
            vocab=vocab,
            classes=[str(v) for v in range(m)],
            chance=1.0 / m,
            source="Grazzi et al. (negative eigenvalues), App. E.1, Tables 3 and 5; Delétang et al. 2023",
            description=f"modular arithmetic mod {m}, every operation bracketed, unary minus"
            + ("" if mult else ", + and − only")
            + "; the value is judged at '='",
            pad_id=len(vocab) - 1,
            supervision="answer",
            supervisions=("answer",),
        )
        self.m, self.mult = m, mult
        self.info = {"mult": mult}

    def _int(self, lo: int, hi: int, gen: torch.Generator) -> int:
        """Uniform in lo..hi − 1."""
        return int(torch.randint(lo, hi, (1,), generator=gen))

    def expression(self, length: int, gen: torch.Generator) -> list[str]:
        """A random expression of exactly ``length`` ≥ 1 tokens: below 5 a terminal ``d``, ``- d``, ``( d )`` or
        ``( - d )``; else ``( left op right )`` with the left length uniform in 1..length − 4."""
        if length < 1:
            raise ValueError(f"an expression has at least 1 token, got {length}")
        if length < 5:
            d = str(self._int(0, self.m, gen))
            return [[d], ["-", d], ["(", d, ")"], ["(", "-", d, ")"]][length - 1]
        left = self._int(1, length - 3, gen)
        op = "+-*"[self._int(0, 3 if self.mult else 2, gen)]
        return ["(", *self.expression(left, gen), op, *self.expression(length - left - 3, gen), ")"]

    def value(self, tokens: list[str]) -> int:
        """The value mod m of an expression in this task's tokens, by recursive descent (every operation is
        bracketed, so no precedence is needed): expr := d | - d | ( expr ) | ( - d ) | ( expr op expr )."""
        pos = 0

        def expr() -> int:
            nonlocal pos
            tok = tokens[pos]
            pos += 1
            if tok == "-":
                return -expr()
            if tok != "(":
                return int(tok)
            left = expr()
            if tokens[pos] == ")":
                pos += 1
                return left
            op = tokens[pos]
            pos += 1
            right = expr()
            pos += 1  # ")"
            return left + right if op == "+" else left - right if op == "-" else left * right

        v = expr()
        if pos != len(tokens):
            raise ValueError(f"trailing tokens after an expression: {tokens[pos:]}")
        return v % self.m

    def sample(self, batch: int, length: LengthSpec, generator: torch.Generator, *, train: bool = True) -> Batch:
        totals = draw_lengths(batch, length, generator).clamp(min=5)  # the authors' max(length, 5)
        lengths = totals - 2  # the expression and '=' (the answer and a [PAD] complete the authors' length)
        t = int(lengths.max())
        index = {s: i for i, s in enumerate(self.vocab)}
        inputs = torch.full((batch, t), self.pad_id, dtype=torch.long)
        targets = torch.zeros((batch, t), dtype=torch.long)
        mask = torch.zeros((batch, t), dtype=torch.bool)
        for b, n in enumerate(lengths.tolist()):
            expr = self.expression(n - 1, generator)
            inputs[b, :n] = torch.tensor([index[s] for s in [*expr, "="]])
            targets[b, n - 1] = self.value(expr)
            mask[b, n - 1] = True
        return Batch(inputs, targets, mask, lengths)


class TrackingShuffledObjects(Task):
    def __init__(self, n: int) -> None:
        if not 2 <= n <= len(PEOPLE):
            raise ValueError(f"shuffled:N needs 2 ≤ N ≤ {len(PEOPLE)}, got {n}")
        people, items = PEOPLE[:n], ITEMS[:n]
        vocab = people + items + ["has", "the", "swaps", "with", "who", ".", "?", "[PAD]"]
        super().__init__(
            name=f"brandoit:shuffled:{n}",
            vocab=vocab,
            classes=people,
            chance=1.0 / n,
            source="Srivastava et al. 2023 (tracking shuffled objects); not Brandoit et al.'s TSO_N (brandoit:TSO3..5)",
            description=f"not the authors' task: tracking shuffled objects with {n} people; length = number of "
            "swaps; only the answer at '?' is judged",
            pad_id=len(vocab) - 1,
            default_train_length=(1, 20),
            supervision="answer",
            supervisions=("answer",),
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
