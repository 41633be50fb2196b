"""The papers' tasks, each under a prefix (``grazzi:``, ``brandoit:``, ``dlr:``) so that none shadows a builtin.

Sources: Grazzi et al., "Unlocking state-tracking in linear RNNs through negative eigenvalues" (§5, App. E);
Brandoit et al., "Length-independent state tracking" (§7, Table 1, App. H); Gupta et al., "Diagonal linear RNNs" (§4).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from ...fsa import resolve_spec
from ...fsa.automaton import Automaton
from ...fsa.errors import SpecError
from ...fsa.library.tasks import flipflop_monoid, modular_value
from ...fsa.library.word_problems import word_problem
from .automaton_task import AutomatonTask
from .base import Batch, LengthSpec, Task, answer_mask, draw_lengths, length_mask
from .dlr import DLR_TASKS, DLRTask
from .family import TaskFamily
from .generators import ModArithBrackets, TrackingShuffledObjects
from .tso import TsoQuestion

GRAZZI = "Grazzi et al. (negative eigenvalues)"
BRANDOIT = "Brandoit et al. (length-independent state tracking)"


def _grazzi(spec: str, name: str, where: str, **kw) -> Callable[[], Task]:
    return lambda: AutomatonTask(resolve_spec(spec), name=name, source=f"{GRAZZI}, {where}", **kw)


class ModArithWords(AutomatonTask):
    """``grazzi:modarith``: well-formed words of the ``modarith:5`` automaton — an operand at even positions, an
    operator (``+ - *``) at odd ones (the paper's ``2 - 3 - 3 * 2 = 3``; ``*`` binds tighter, ``+ -`` associate to
    the left).

    Supervision ``answer`` (the default, the authors' harness): a word is ``d op d … d =`` and only the value after
    ``=`` is judged; a length counts the answer as the authors' do, so the total length is odd (3, 5, …) and the
    word read is one token shorter (a length range draws the odd totals in it uniformly; an even length means the
    odd one below it). Supervision ``dense``: every position of a word of the given length is judged by the running
    value of the expression read so far (for a prefix that ends in an operator, the value before it), ``=`` last
    when the length is even."""

    def __init__(self, supervision: str = "answer") -> None:
        a = resolve_spec("modarith:5")
        super().__init__(
            a,
            name="grazzi:modarith",
            source=f"{GRAZZI}, §5.1 and App. E.1 (Delétang et al. 2023), m = 5, without brackets",
            description="value mod 5 of well-formed words d op d op … d =, judged after '='",
            readout="classes",
            classes=[str(v) for v in range(5)],
            state_class=np.array([_running_value(s) for s in a.states]),
            supervision=supervision,
        )
        self.equals = a.symbols.index("=")

    @property
    def prefixes_judged(self) -> bool:
        return self.supervision == "dense"  # answer-only words end in '=': their prefixes are not words

    def _symbols(self, batch, length, gen, train, carry):
        digits = torch.randint(0, 5, (batch, length), generator=gen)
        ops = torch.randint(5, 8, (batch, length), generator=gen)  # + - *
        pos = torch.arange(length) + carry.offset
        return torch.where((pos % 2 == 0)[None, :], digits, ops)

    def sample(self, batch: int, length: LengthSpec, generator: torch.Generator, *, train: bool = True) -> Batch:
        answer = self.supervision == "answer"
        lengths = odd_totals(batch, length, generator) - 1 if answer else draw_lengths(batch, length, generator)
        t = int(lengths.max())
        carry = self._start(batch)
        tokens = self._tokens(batch, t, generator, train, carry)
        rows = torch.nonzero(lengths % 2 == 0).squeeze(1)
        tokens[rows, lengths[rows] - 1] = self.equals
        targets = self._targets(tokens, carry)
        mask = length_mask(lengths, t)
        judged = answer_mask(lengths, t) if answer else mask
        return Batch(torch.where(mask, tokens, torch.full_like(tokens, self.pad_id)), targets, judged, lengths)


def odd_totals(batch: int, length: LengthSpec, generator: torch.Generator) -> torch.Tensor:
    """Odd total lengths ≥ 3 (expression, ``=``, answer), uniform over the odd values of a range (the authors'
    ``2·randint(⌈(lo+1)/2⌉, ⌊(hi+1)/2⌋) − 1``); an int length: the largest odd one ≤ it."""
    lo, hi = (length, length) if isinstance(length, int) else length
    k_lo, k_hi = max(2, (lo + 2) // 2), (hi + 1) // 2
    if isinstance(length, int):
        k_lo = k_hi
    if k_hi < 2 or k_lo > k_hi:
        raise SpecError(f"grazzi:modarith judges the answer after '=': a length needs an odd total ≥ 3, got {length}")
    return 2 * torch.randint(k_lo, k_hi + 1, (batch,), generator=generator) - 1


def _running_value(state: str) -> int:
    """The value a modarith:5 state reports; after an operator the value before it; 0 for start and err."""
    v = modular_value(state, 5)
    if v is not None:
        return v
    if state.startswith("s") and state.endswith(("+", "-")):
        return int(state[1:-1])
    if state.endswith("*"):
        s, p = state[1:-1].split("p")
        return (int(s) + int(p)) % 5
    return 0


def _brandoit(automaton_fn: Callable[[], object], name: str, what: str, **kw) -> Callable[[], Task]:
    return lambda: AutomatonTask(
        automaton_fn(), name=name, source=f"{BRANDOIT}, §7 and Table 1 ({what})", default_train_length=(64, 64), **kw
    )


def _adjacent_transpositions(n: int):
    gens = [np.array([*range(i), i + 1, i, *range(i + 2, n)]) for i in range(n - 1)]
    return word_problem(gens, symbol_names=[f"({i} {i + 1})" for i in range(n - 1)], name=f"S{n}")


def _adjacent_3cycles(n: int):
    gens = []
    for i in range(n - 2):
        p = list(range(n))
        p[i], p[i + 1], p[i + 2] = i + 1, i + 2, i
        gens.append(np.array(p))
    return word_problem(gens, symbol_names=[f"({i} {i + 1} {i + 2})" for i in range(n - 2)], name=f"A{n}")


def _m11_with_inverses():
    g = resolve_spec("M11").action
    inv = [np.argsort(x) for x in g]
    names = ["a", "b", "a^-1", "b^-1"]
    return word_problem([*g, *inv], symbol_names=names, name="M11")


#: the authors' flip-flop draws (their ``ff`` and ``ff01``): a non-identity letter (reset or set, equally likely) with
#: probability 0.1 in training and 0.01 in evaluation; symbols in the order read (the identity), reset, set
FLIPFLOP_TRAIN = np.array([0.90, 0.05, 0.05])
FLIPFLOP_EVAL = np.array([0.99, 0.005, 0.005])

GRAZZI_TASKS: dict[str, Callable[[], Task]] = {
    "grazzi:parity": _grazzi("parity", "grazzi:parity", "§5.1, Table 3 (parity)", supervision="answer"),
    "grazzi:modarith": ModArithWords,
    "grazzi:modarith_brackets": ModArithBrackets,
    "grazzi:modarith_brackets:nomult": lambda: ModArithBrackets(mult=False),
    "grazzi:S5": _grazzi("S5", "grazzi:S5", "§5.2, Fig. 4 (S5, all 120 elements)"),
    "grazzi:S5:swaps": _grazzi("S5:swaps", "grazzi:S5:swaps", "§5.2, Fig. 4 (S5 only swaps)"),
    "grazzi:S5:s3": _grazzi("S5:s3", "grazzi:S5:s3", "§5.2, Fig. 4 (S5 swaps, 3-permutations)"),
    "grazzi:S5:tokens4": _grazzi(
        "S5", "grazzi:S5:tokens4", "App. E.2.1 (S5, 4 tokens per transition)", tokens_per_step=4
    ),
    "grazzi:Z60": _grazzi("Z60", "grazzi:Z60", "App. E.2.2, Fig. 8 (Z60)"),
    "grazzi:A5": _grazzi("A5", "grazzi:A5", "App. E.2 (A5)"),
}
BRANDOIT_TASKS: dict[str, Callable[[], Task]] = {
    "brandoit:Z2": _brandoit(lambda: resolve_spec("Z2"), "brandoit:Z2", "Z2; letters 0 and 1"),
    "brandoit:Z16": _brandoit(lambda: resolve_spec("Z16"), "brandoit:Z16", "Z16; the 16 letters 0..15"),
    "brandoit:Z16:gen": _brandoit(
        lambda: _cyclic_with_identity(16), "brandoit:Z16:gen", "not the authors' task: Z16 on the letters 0 and +1"
    ),
    "brandoit:S3": _brandoit(lambda: _adjacent_transpositions(3), "brandoit:S3", "S3, adjacent transpositions"),
    "brandoit:S4": _brandoit(lambda: _adjacent_transpositions(4), "brandoit:S4", "S4, adjacent transpositions"),
    "brandoit:A5": _brandoit(lambda: _adjacent_3cycles(5), "brandoit:A5", "A5, adjacent 3-cycles"),
    "brandoit:M11": _brandoit(_m11_with_inverses, "brandoit:M11", "M11, two generators and their inverses"),
    "brandoit:FF": _brandoit(
        flipflop_monoid,
        "brandoit:FF",
        "flip-flop monoid, 3 classes; 10 % writes in training, 1 % in evaluation",
        probs=FLIPFLOP_TRAIN,
        eval_probs=FLIPFLOP_EVAL,
    ),
    "brandoit:DFF5": _brandoit(
        flipflop_monoid,
        "brandoit:DFF5",
        "flip-flop monoid, 3 classes; uniform letters, at most 4 reads in a row",
        max_identity_run=4,
    ),
    **{f"brandoit:TSO{n}": (lambda n=n: TsoQuestion(n)) for n in (3, 4, 5)},
    **{f"brandoit:shuffled:{n}": (lambda n=n: TrackingShuffledObjects(n)) for n in (3, 4, 5)},
}
DLR_PAPER_TASKS: dict[str, Callable[[], Task]] = {f"dlr:{t}": (lambda t=t: DLRTask(t)) for t in DLR_TASKS}

#: the families of the task registry (fsa2rnn's ``fsa2rnn.tasks`` entry points, pyproject.toml)
GRAZZI_FAMILY = TaskFamily("grazzi", GRAZZI_TASKS, GRAZZI)
BRANDOIT_FAMILY = TaskFamily("brandoit", BRANDOIT_TASKS, BRANDOIT)
DLR_FAMILY = TaskFamily("dlr", DLR_PAPER_TASKS, "Gupta et al. (diagonal linear RNNs)")
#: every paper task, by name (the three families in order)
PAPER_TASKS: dict[str, Callable[[], Task]] = {**GRAZZI_TASKS, **BRANDOIT_TASKS, **DLR_PAPER_TASKS}


def _cyclic_with_identity(m: int) -> Automaton:
    """Z_m on the symbols "0" (the identity) and "+1": a random word of generators with rests."""
    step = resolve_spec(f"Z{m}:gen").transitions[0]
    return Automaton(
        np.stack([np.arange(m), step]), states=[str(i) for i in range(m)], symbols=["0", "+1"], initial=0, name=f"Z{m}"
    )
