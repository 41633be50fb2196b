"""``brandoit:TSO3``, ``brandoit:TSO4``, ``brandoit:TSO5``: Brandoit et al.'s textual task TSO_N (§7, Table 1; after
Srivastava et al. 2023, "tracking shuffled objects"), as the authors' code defines it (their ``question-N`` stream).

A word of length T is English-like text over N people and N items, five tokens per sentence:

    alice has the ring . bob has the key . charlie has the coin . alice swaps with bob . … who has the key ?

- the *preamble*: person k (k = 0, 1, …, N − 1, in order) has the item gift[k], gift a uniform permutation;
- then *swap sentences* ``i swaps with j .``, the ordered pair i ≠ j uniform;
- then the *question* ``who has the q ?`` (the last 5 tokens), q uniform;
- when T − 5 is not a multiple of 5, the (T − 5) mod 5 spare tokens are single extra ``.`` placed after as many
  distinct, uniformly chosen sentences (so every length is built from the same local patterns).

The *machine state* after each token is (parse register, holder of each item): the parse register holds the first
name of the sentence in progress (``idle`` otherwise); the second name swaps the two people's items; an item token
after a name gives the item to that person; every other token leaves the state alone (the question too). The
targets are the states the grammatical streams reach, 44 / 202 / 1132 for N = 3 / 4 / 5 (the paper's counts), at
every position, except the last (``?``), whose target is the answer: the person holding q (one of N further
classes), what evaluation judges there. As in the authors' code, the answer is read from the N extra logits at
``?`` (the model's answer readout, nn/model.py: :attr:`TsoQuestion.answer_readout`) and the state logits stay
supervised there too: training splits the targets (:meth:`TsoQuestion.split_answer`) into the states at every
position (at ``?`` the state it leaves alone) and the answer, whose full-weight cross-entropy is added from step 0
(``--answer-term``, the default; nn/train/trainer.py).

L_max (``--protocol brandoit``) judges the answer only, as the authors' faillen does on this task
(:meth:`TsoQuestion.fresh_words`); training and validation judge every position. The anchored arm's heads are the
task's *registers* (the authors' rung ``exact``): the parse head (N + 1 indices) and one head per item (N + 1
indices: unset, or who holds it), supervised on the top layer of the authors' two-layer NFSM.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch

from ...fsa.errors import SpecError
from ..ops.table_scan import keyed_table_scan
from .base import Batch, LengthSpec, Task, draw_lengths

NAMES = ("alice", "bob", "charlie", "dana", "eve")
ITEMS = ("ring", "key", "coin", "stamp", "card")
FRAME = ("swaps", "with", "has", "the", ".", "who", "?")
SENTENCE = 5
#: the paper's numbers of reachable states (Table 1's brackets)
PAPER_STATES = {3: 44, 4: 202, 5: 1132}


@dataclass
class Registers:
    """The anchored arm's head family of a task with its own registers: ``codes`` (n_classes, H), head i's index in
    each target class (−1: a class that is no state, not supervised), ``sizes`` the heads' numbers of indices."""

    family: str
    sizes: list[int]
    codes: np.ndarray
    source: str


class TsoQuestion(Task):
    """TSO_N (see the module docstring): dense machine states, the answer at the last position."""

    def __init__(self, n: int) -> None:
        if n not in PAPER_STATES:
            raise ValueError(f"TSO_N needs N in 3..5, got {n}")
        self.n = n
        vocab = [*NAMES[:n], *ITEMS[:n], *FRAME, "[PAD]"]
        self.ids = {w: i for i, w in enumerate(vocab)}
        self._build_machine()
        classes = [self._state_name(s) for s in self.states] + [f"answer: {p}" for p in NAMES[:n]]
        super().__init__(
            name=f"brandoit:TSO{n}",
            vocab=vocab,
            classes=classes,
            chance=1.0 / len(self.states),
            source="Brandoit et al. (length-independent state tracking), §7 and Table 1 (TSO_N, their question-N "
            "stream); Srivastava et al. 2023",
            description=f"tracking shuffled objects, {n} people: {len(self.states)} machine states at every token, "
            "the holder of the asked item at '?'; L_max judges the answer",
            pad_id=len(vocab) - 1,
            default_train_length=(256, 256),
            supervision="dense",
            supervisions=("dense",),
        )
        self.info = {"people": n, "states": len(self.states), "min_length": self.min_length}

    # ------------------------------------------------------------------ the machine
    def _build_machine(self) -> None:
        """The total transition table over every (parse, holders) code, and the states grammatical streams reach."""
        n = self.n
        base = n + 1  # a register's values: parse idle/hold_i, holder person or unset (= n)
        codes = np.arange(base ** (n + 1))
        digits = (codes[:, None] // base ** np.arange(n + 1)[None, :]) % base  # column 0: parse, 1 + q: item q
        parse, holders = digits[:, 0], digits[:, 1:]
        table = np.tile(codes, (len(self.ids), 1))  # (tokens, codes): every other token leaves the state alone
        for x in range(n):  # a name: opens a sentence, or (second name) swaps the two people's items
            opened = x + 1 + 0 * parse
            first = parse - 1
            swapped = np.where(holders == first[:, None], x, np.where(holders == x, first[:, None], holders))
            closed = np.column_stack([0 * parse, swapped])
            nxt = np.where(parse[:, None] == 0, np.column_stack([opened, holders]), closed)
            table[self.ids[NAMES[x]]] = nxt @ base ** np.arange(n + 1)
        for q in range(n):  # an item after a name: the item goes to that person
            given = holders.copy()
            given[:, q] = parse - 1
            nxt = np.column_stack([0 * parse, given]) @ base ** np.arange(n + 1)
            table[self.ids[ITEMS[q]]] = np.where(parse > 0, nxt, codes)
        self.table = torch.as_tensor(table[: len(self.ids) - 1], dtype=torch.long)  # without [PAD]
        self.start_code = n * sum(base**k for k in range(1, n + 1))  # idle, every item unset
        order = self._reachable(table)
        code_class = np.full(len(codes), -1, dtype=np.int64)  # −1: a code no grammatical stream reaches
        code_class[order] = np.arange(len(order))
        self.states = [tuple(int(v) for v in digits[c]) for c in order]
        self.code_class = torch.as_tensor(code_class)
        self.holder_of = torch.as_tensor(holders)  # (codes, items)

    def _reachable(self, table: np.ndarray) -> list[int]:
        """Codes the grammatical streams reach, in breadth-first order of sentences from the start."""
        n, ids = self.n, self.ids
        unset = n

        def sentences(code: int) -> list[list[int]]:
            digits = [(code // (n + 1) ** k) % (n + 1) for k in range(n + 1)]
            free = [q for q in range(n) if digits[1 + q] == unset]
            if free:
                k = n - len(free)
                return [[k, ids["has"], ids["the"], ids[ITEMS[q]], ids["."]] for q in free]
            return [[i, ids["swaps"], ids["with"], j, ids["."]] for i in range(n) for j in range(n) if i != j]

        seen, order = {self.start_code}, [self.start_code]
        ends, frontier = {self.start_code}, [self.start_code]  # the codes at sentence ends, to expand
        while frontier:
            code = frontier.pop(0)
            for sentence in sentences(code):
                c = code
                for x in sentence:
                    c = int(table[x, c])
                    if c not in seen:
                        seen.add(c)
                        order.append(c)
                if c not in ends:
                    ends.add(c)
                    frontier.append(c)
        return order

    def _state_name(self, state: tuple[int, ...]) -> str:
        parse = "idle" if state[0] == 0 else NAMES[state[0] - 1]
        held = ",".join("-" if h == self.n else NAMES[h] for h in state[1:])
        return f"{parse}|{held}"

    @property
    def n_states(self) -> int:
        return len(self.states)

    @property
    def min_length(self) -> int:
        """The shortest word: the preamble, one swap sentence and the question."""
        return SENTENCE * (self.n + 2)

    @cached_property
    def registers(self) -> Registers:
        """The parse head and one head per item; every head on index 0 in the initial state (an item's index: 0
        unset, 1 + k held by person k). Rows of the answer classes are −1."""
        n = self.n
        st = np.array(self.states, dtype=np.int64)
        codes = np.column_stack([st[:, 0], (st[:, 1:] + 1) % (n + 1)])
        codes = np.vstack([codes, np.full((n, n + 1), -1, dtype=np.int64)])
        return Registers("registers", [n + 1] * (n + 1), codes, f"the parse head and {n} item heads of {n + 1}")

    @property
    def answer_readout(self) -> dict[str, int]:
        """The model's answer readout (nn/model.py): the last N classes read at the question mark."""
        return {"token": self.ids["?"], "classes": self.n}

    def split_answer(self, targets: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(state targets (B, T): the answer at each word's '?' replaced by the state there, the state before it,
        which '?' leaves alone; answers (B,) in 0..N − 1), from targets (B, T) and the words' lengths (B,)."""
        rows = torch.arange(len(lengths), device=targets.device)
        last = lengths.to(targets.device).long() - 1
        states = targets.clone()
        states[rows, last] = targets[rows, last - 1]
        return states, targets[rows, last] - self.n_states

    # ------------------------------------------------------------------ words
    def words(self, batch: int, length: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """``batch`` words of exactly ``length`` tokens and their targets (state classes, the answer class last)."""
        n, ids = self.n, self.ids
        if length < self.min_length:
            raise SpecError(f"{self.name}: a word has at least {self.min_length} tokens (the preamble, one swap, the "
                            f"question), got length {length}")  # fmt: skip
        pad = (length - SENTENCE) % SENTENCE
        body = length - SENTENCE - pad
        n_sent = body // SENTENCE
        gift = torch.argsort(torch.rand(batch, n, generator=gen), dim=1)  # person k has item gift[k]
        first = torch.randint(0, n, (batch, n_sent - n), generator=gen)
        second = (first + torch.randint(1, n, (batch, n_sent - n), generator=gen)) % n
        item = torch.randint(0, n, (batch,), generator=gen)
        spare = torch.argsort(torch.rand(batch, n_sent, generator=gen), dim=1) < pad  # sentences followed by '.'
        people = torch.arange(n).expand(batch, n)
        subject = torch.cat([people, first], 1)
        obj = torch.cat([ids[ITEMS[0]] + gift, second], 1)
        verb1 = torch.cat([torch.full((batch, n), ids["has"]), torch.full((batch, n_sent - n), ids["swaps"])], 1)
        verb2 = torch.cat([torch.full((batch, n), ids["the"]), torch.full((batch, n_sent - n), ids["with"])], 1)
        dot = torch.full((batch, n_sent), ids["."])
        sent = torch.stack([subject, verb1, verb2, obj, dot, dot], 2)  # (B, S, 6): the 6th token a spare '.'
        keep = torch.ones_like(sent, dtype=torch.bool)
        keep[:, :, 5] = spare
        stream = sent[keep].view(batch, body + pad)
        question = torch.stack([torch.full_like(item, ids[w]) for w in ("who", "has", "the")] + [ids[ITEMS[0]] + item,
                               torch.full_like(item, ids["?"])], 1)  # fmt: skip
        tokens = torch.cat([stream, question], 1)
        codes = keyed_table_scan(self.table, tokens, torch.full((batch,), self.start_code), impl="chunked")
        targets = self.code_class[codes]
        targets[:, -1] = self.n_states + self.holder_of[codes[:, -1], item]
        return tokens, targets

    def sample(self, batch: int, length: LengthSpec, generator: torch.Generator, *, train: bool = True) -> Batch:
        lengths = draw_lengths(batch, length, generator)
        t = int(lengths.max())
        inputs = torch.full((batch, t), self.pad_id, dtype=torch.long)
        targets = torch.zeros((batch, t), dtype=torch.long)
        for value in torch.unique(lengths).tolist():  # one draw per distinct length (one for a fixed length)
            rows = torch.nonzero(lengths == value).squeeze(1)
            tok, tgt = self.words(len(rows), int(value), generator)
            inputs[rows, :value], targets[rows, :value] = tok, tgt
        mask = torch.arange(t)[None, :] < lengths[:, None]
        return Batch(inputs, targets, mask, lengths)

    def fresh_words(self, rng: np.random.Generator, n_words: int, length: int) -> tuple[np.ndarray, np.ndarray]:
        """Evaluation words of ``length`` for the authors' faillen: (inputs, targets), every target −1 (not judged)
        but the answer's at the last position; drawn from a torch Generator seeded by ``rng``."""
        gen = torch.Generator().manual_seed(int(rng.integers(2**62)))
        tokens, targets = self.words(n_words, length, gen)
        judged = torch.full_like(targets, -1)
        judged[:, -1] = targets[:, -1]
        return tokens.numpy(), judged.numpy()

    @property
    def prefixes_judged(self) -> bool:
        return False  # a prefix of a word has no question
