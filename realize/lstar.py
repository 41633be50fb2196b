"""Black-box extraction: the Moore machine a model implements, learned with AALpy's L* or KV (the optional extra
``fsa2rnn[lstar]``), beside the white-box extraction of realize/extract.py.

The model is the system under learning (Angluin's minimally adequate teacher, as in Weiss et al.'s L* extraction
from RNNs):

- **Membership query** — a word: run the model on it and read the class it predicts after each symbol. The model
  predicts nothing before the first symbol, so the empty word answers :data:`START` (the learned machine's start
  state then carries no class, realize/moore.py ``UNOBSERVED``). Queries go through :class:`ModelTeacher`: a cache
  of every prefix ever run, and a missed word runs in one batch with all its continuations of length d
  (k^d ≤ :data:`LOOKAHEAD_WORDS` for k symbols), since the learner asks for extensions of the words it has asked.
- **Equivalence query** — :class:`ModelEquivalenceOracle` tests a hypothesis on three sets of words, each run through
  the model in batches: the target's W-method words (its transition cover times its characterization set, when a
  target is given), the hypothesis's W-method words with up to ``depth`` extra symbols (Chow's W-method, AALpy's
  ``compute_characterization_set``), and ``random_words`` random words of uniform length 1..length (a random walk
  with resets). The first disagreement is the counterexample.
- **Limits** — ``max_queries`` words run through the model (membership, lookahead and equivalence words together;
  never more) and ``max_seconds`` wall-clock seconds (checked before each model batch). The equivalence oracle stops
  testing when either is spent (the hypothesis stands, ``stopped_by`` says which); a membership query past the
  limit ends learning with the last hypothesis.

A learned machine is what the model does on the words the oracle tried, not a proof about every word: the report
gives its agreement with the model on held-out words at the training length and at 10 times it
(realize/extract.py ``held_out_agreement``).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..fsa.aalpy_interop import from_aalpy_moore, require_aalpy, to_aalpy_moore
from ..fsa.errors import LimitExceededError, SpecError
from ..nn.capabilities import missing
from ..nn.limits import LIMITS
from .moore import UNOBSERVED, MooreMachine, PredictWords, relate, state_machine

if TYPE_CHECKING:
    from .extract import Extraction

#: the output of the empty word (the model predicts after each symbol, not before the first)
START = "(start)"
#: learning algorithms (AALpy's ``run_Lstar`` and ``run_KV``)
ALGORITHMS = ("lstar", "kv")
#: default limits: words run through the model, wall-clock seconds, W-method depth, random test words per
#: equivalence query
MAX_QUERIES = 100_000
MAX_SECONDS = 120.0
DEPTH = 2
RANDOM_WORDS = 500
#: limits on the limits (checked before any work)
MAX_QUERIES_LIMIT = int(LIMITS["max_queries"].hi)  # the rows of nn/limits.py, which the CLI checks
MAX_SECONDS_LIMIT = float(LIMITS["max_seconds"].hi)
MAX_DEPTH = int(LIMITS["depth"].hi)
#: a missed membership query runs with its continuations of length d, k^d ≤ this
LOOKAHEAD_WORDS = 64
#: test words per model batch in the equivalence oracle
ORACLE_BATCH = 512


class _Spent(Exception):
    """The query or time limit is spent (inside a membership query)."""


@dataclass
class Limits:
    """The limits of one learning run (module docstring), validated by :meth:`check`."""

    max_queries: int = MAX_QUERIES
    max_seconds: float = MAX_SECONDS
    depth: int = DEPTH
    random_words: int = RANDOM_WORDS

    def check(self) -> None:
        if not 1 <= self.max_queries <= MAX_QUERIES_LIMIT:
            raise SpecError(f"max_queries must be in 1..{MAX_QUERIES_LIMIT}, got {self.max_queries}")
        if not 0 < self.max_seconds <= MAX_SECONDS_LIMIT:
            raise SpecError(f"max_seconds must be in (0, {MAX_SECONDS_LIMIT:g}], got {self.max_seconds}")
        if not 0 <= self.depth <= MAX_DEPTH:
            raise SpecError(f"the W-method depth must be in 0..{MAX_DEPTH}, got {self.depth}")
        if not 0 <= self.random_words <= MAX_QUERIES_LIMIT:
            raise SpecError(f"random_words must be in 0..{MAX_QUERIES_LIMIT}, got {self.random_words}")

    def as_dict(self) -> dict[str, Any]:
        return {"max_queries": self.max_queries, "max_seconds": self.max_seconds, "depth": self.depth,
                "random_words": self.random_words}  # fmt: skip


class ModelTeacher:
    """The model as a function from words (symbol ids) to its predicted class after each symbol: cached per prefix,
    batched, counted, and bounded by :class:`Limits`."""

    def __init__(self, predict: PredictWords, n_symbols: int, limits: Limits) -> None:
        self.predict, self.k, self.limits = predict, n_symbols, limits
        self.cache: dict[tuple[int, ...], int] = {}
        self.model_words = 0
        self.model_batches = 0
        self.membership_queries = 0
        self.start = time.perf_counter()
        depth = 0
        while self.k ** (depth + 1) <= LOOKAHEAD_WORDS:
            depth += 1
        self.lookahead = [list(u) for u in itertools.product(range(self.k), repeat=depth)]

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def spent(self) -> str | None:
        """The limit that is spent, "queries" or "time" (None if neither)."""
        if self.model_words >= self.limits.max_queries:
            return "queries"
        if self.elapsed() >= self.limits.max_seconds:
            return "time"
        return None

    def run(self, words: Sequence[Sequence[int]]) -> None:
        """Run the words through the model in one batch and cache the class after every prefix."""
        words = [list(w) for w in words if w]
        if not words:
            return
        for w, out in zip(words, self.predict(words)):
            for i in range(len(w)):
                self.cache[tuple(w[: i + 1])] = int(out[i])
        self.model_words += len(words)
        self.model_batches += 1

    def outputs(self, word: Sequence[int]) -> list[int]:
        """The class after each symbol of one word (a membership query): a miss runs the word with its
        continuations; past a limit, :class:`_Spent`."""
        self.membership_queries += 1
        w = tuple(word)
        if w and w not in self.cache:
            if self.spent():
                raise _Spent
            room = self.limits.max_queries - self.model_words
            self.run([list(w) + u for u in self.lookahead] if room >= len(self.lookahead) else [list(w)])
        return [self.cache[w[: i + 1]] for i in range(len(w))]

    def known(self, words: list[list[int]]) -> list[list[int]]:
        """The classes along each word, running the uncached ones in one batch (the caller keeps batches within
        the query limit: :meth:`room`)."""
        self.run([w for w in words if w and tuple(w) not in self.cache])
        return [[self.cache[tuple(w[: i + 1])] for i in range(len(w))] for w in words]

    def room(self) -> int:
        """Words the model may still run under the query limit."""
        return max(self.limits.max_queries - self.model_words, 0)


def _sul(teacher: ModelTeacher, symbols: tuple[str, ...], classes: tuple[str, ...]) -> Any:
    """An AALpy SUL over symbol names whose outputs are class names (:data:`START` for the empty word)."""
    from aalpy.base import SUL

    index = {s: i for i, s in enumerate(symbols)}

    class ModelSUL(SUL):
        def __init__(self) -> None:
            super().__init__()
            self.word: list[int] = []

        def query(self, word: tuple) -> list:
            self.num_queries += 1
            self.num_steps += len(word)
            if not word:
                return [START]
            return [classes[c] for c in teacher.outputs([index[x] for x in word])]

        def pre(self) -> None:
            self.word = []

        def post(self) -> None:
            self.word = []

        def step(self, letter: Any) -> Any:
            if letter is None:
                return START if not self.word else classes[teacher.outputs(self.word)[-1]]
            self.word.append(index[letter])
            return classes[teacher.outputs(self.word)[-1]]

    return ModelSUL()


def machine_to_aalpy(machine: MooreMachine) -> Any:
    """A realize Moore machine as an AALpy ``MooreMachine`` whose outputs are class names (:data:`START` at an
    unobserved start state, ``(no state)`` for −1)."""
    return to_aalpy_moore(machine.automaton, [_output_name(machine, int(v)) for v in machine.labels])


def machine_from_aalpy(moore: Any, classes: Sequence[str], symbols: Sequence[str] | None = None) -> MooreMachine:
    """An AALpy ``MooreMachine`` whose outputs are class names (or :data:`START`) as a realize Moore machine
    (symbols in the order ``symbols`` when given)."""
    a, outs = _from_aalpy(moore, symbols)
    index = {c: i for i, c in enumerate(classes)}
    index[START] = UNOBSERVED
    index["(no state)"] = -1
    unknown = sorted({str(o) for o in outs if o not in index})
    if unknown:
        raise SpecError(f"the Moore machine outputs {unknown}, which are not classes {list(classes)}")
    return MooreMachine(a, np.array([index[o] for o in outs]), tuple(classes))


def _output_name(machine: MooreMachine, label: int) -> str:
    return START if label == UNOBSERVED else machine.label_name(label)


def _eq_oracle(teacher: ModelTeacher, symbols: tuple[str, ...], classes: tuple[str, ...], length: int,
               target: MooreMachine | None, seed: int, state: dict[str, Any]) -> Any:  # fmt: skip
    """The equivalence oracle (module docstring); ``state`` receives the hypotheses, the counts and ``stopped_by``."""
    from aalpy.base import Oracle

    index = {s: i for i, s in enumerate(symbols)}
    rng = np.random.default_rng([seed, 7])
    limits = teacher.limits
    seeds = _w_parts(machine_to_aalpy(target), symbols) if target is not None else None

    class ModelEquivalenceOracle(Oracle):
        def find_cex(self, hypothesis: Any) -> tuple | None:
            hyp = _outputs_table(hypothesis, classes, symbols)
            state["hypotheses"].append(hypothesis)
            state["equivalence_queries"] += 1
            suites = [
                _w_method_words(seeds, symbols, 1) if seeds is not None else iter(()),
                _w_method_words(_w_parts(hypothesis, symbols), symbols, limits.depth),
                _random_words(),
            ]
            for suite in suites:
                words = ([index[x] for x in w] for w in suite)
                while True:
                    why = teacher.spent()
                    if why:
                        state["stopped_by"] = why
                        return None
                    batch = [w for w in itertools.islice(words, min(ORACLE_BATCH, teacher.room())) if w]
                    if not batch:
                        break
                    state["test_words"] += len(batch)
                    cex = _first_disagreement(hyp, batch, teacher.known(batch))
                    if cex is not None:
                        return tuple(symbols[x] for x in cex)
            return None

    def _random_words() -> Iterator[list[str]]:
        """The random walk with resets: words of uniform length 1..length, drawn fresh for each hypothesis."""
        for n in rng.integers(1, length + 1, limits.random_words):
            yield [symbols[x] for x in rng.integers(0, len(symbols), n)]

    return ModelEquivalenceOracle(list(symbols), None)


def _w_parts(moore: Any, symbols: tuple[str, ...]) -> tuple[list[tuple], list[tuple]]:
    """(transition cover, characterization set) of an AALpy machine, for :func:`_w_method_words`."""
    moore.compute_prefixes()
    char_set = moore.compute_characterization_set(raise_warning=False) or [()]
    return [s.prefix + (x,) for s in moore.states for x in symbols], char_set


def _w_method_words(parts: tuple[list[tuple], list[tuple]], symbols: tuple[str, ...], depth: int) -> Iterator[tuple]:
    """Chow's W-method test words, shortest middles first (generated lazily: the oracle takes what the query limit
    allows): transition cover · Σ^{≤depth} · characterization set."""
    cover, char_set = parts
    for d in range(depth + 1):
        for m in itertools.product(symbols, repeat=d):
            for c in cover:
                for e in char_set:
                    yield c + m + e


def _from_aalpy(moore: Any, symbols: Sequence[str] | None) -> tuple[Any, list[Any]]:
    """from_aalpy_moore, with the rows in the order of ``symbols`` (the learner's alphabet) when given."""
    a, outs = from_aalpy_moore(moore)
    if symbols is not None and tuple(symbols) != a.symbols:
        if set(symbols) != set(a.symbols):
            raise SpecError(f"the Moore machine reads {list(a.symbols)}, expected {list(symbols)}")
        a = a.replace(transitions=a.transitions[[a.symbol_index(x) for x in symbols]], symbols=list(symbols))
    return a, outs


def _outputs_table(moore: Any, classes: tuple[str, ...], symbols: tuple[str, ...]) -> tuple[Any, np.ndarray]:
    """(automaton, label per state) of a hypothesis (:data:`START` as ``UNOBSERVED``): intermediate hypotheses
    (KV's) need not be Moore machines of realize/moore.py, so they are run as plain tables."""
    a, outs = _from_aalpy(moore, symbols)
    index = {c: i for i, c in enumerate(classes)}
    return a, np.array([index.get(o, UNOBSERVED) for o in outs], dtype=np.int64)


def _first_disagreement(
    hyp: tuple[Any, np.ndarray], words: list[list[int]], model: list[list[int]]
) -> list[int] | None:
    """The shortest prefix of a word on which the hypothesis's output differs from the model's (shortest first)."""
    a, labels = hyp
    best = None
    for w, got in zip(words, model):
        want = labels[a.run(np.asarray(w, dtype=np.int64))]
        bad = np.flatnonzero(want != np.asarray(got))
        if len(bad) and (best is None or bad[0] + 1 < len(best)):
            best = w[: int(bad[0]) + 1]
    return best


def lstar_extract(
    model: Any,
    *,
    symbols: Sequence[str],
    classes: Sequence[str],
    length: int,
    predict: PredictWords | None = None,
    target: MooreMachine | None = None,
    algorithm: str = "lstar",
    limits: Limits | None = None,
    words: int = 256,
    seed: int = 0,
) -> Extraction:
    """Learn the Moore machine ``model`` implements (module docstring). ``model``: anything with
    ``predict_states`` (a SequenceModel or a compiled module), run by ``predict`` (default: realize/probe.py
    ``predict_words``); ``symbols`` and ``classes`` name its token ids and outputs; ``length``: the training length
    (random test words are 1..length long, held-out words length and 10·length); ``target`` seeds test words;
    ``algorithm``: "lstar" or "kv". ``details`` of the result: the queries, the time, the limits and
    ``stopped_by``."""
    require_aalpy()
    from aalpy.learning_algs import run_KV, run_Lstar

    from .extract import Extraction, held_out_agreement
    from .probe import predict_words

    limits = limits or Limits()
    limits.check()
    if algorithm not in ALGORITHMS:
        raise SpecError(f"unknown learning algorithm {algorithm!r} (choose from {', '.join(ALGORITHMS)})")
    if length < 1 or words < 1:
        raise SpecError(f"L* extraction needs a length and a number of words ≥ 1, got {length} and {words}")
    symbols, classes = tuple(symbols), tuple(classes)
    if START in classes:
        raise SpecError(f"a class may not be called {START!r}")
    if predict is None:
        def predict(ws: list[list[int]]) -> list[np.ndarray]:
            return predict_words(model, ws)

    teacher = ModelTeacher(predict, len(symbols), limits)
    state: dict[str, Any] = {"hypotheses": [], "equivalence_queries": 0, "test_words": 0, "stopped_by": None}
    oracle = _eq_oracle(teacher, symbols, classes, length, target, seed, state)
    sul = _sul(teacher, symbols, classes)
    run = run_Lstar if algorithm == "lstar" else run_KV
    name = "L*" if algorithm == "lstar" else "KV"
    try:
        learned = run(list(symbols), sul, oracle, automaton_type="moore", print_level=0)
        machine = machine_from_aalpy(learned, classes, symbols)
    except _Spent:
        if not state["hypotheses"]:
            raise LimitExceededError(_budget_spent(name, teacher, limits, "before its first hypothesis")) from None
        state["stopped_by"] = teacher.spent()
        try:
            machine = machine_from_aalpy(state["hypotheses"][-1], classes, symbols)
        except SpecError:  # a hypothesis cut short: states whose output the model was never asked
            raise LimitExceededError(
                _budget_spent(name, teacher, limits, "while its last hypothesis still had unobserved states")
            ) from None
    seconds = teacher.elapsed()
    minimal = machine.minimal()
    agreement = held_out_agreement(model, minimal, length=length, words=words, seed=seed)
    details = {
        "algorithm": algorithm,
        "membership_queries": teacher.membership_queries,
        "equivalence_queries": state["equivalence_queries"],
        "test_words": state["test_words"],
        "model_words": teacher.model_words,
        "model_batches": teacher.model_batches,
        "seconds": round(seconds, 3),
        "limits": limits.as_dict(),
        "stopped_by": state["stopped_by"],
    }
    method = (
        f"black-box {name} (AALpy): membership queries run the model; equivalence by the "
        f"{'target-seeded, ' if target is not None else ''}W-method (depth {limits.depth}) and {limits.random_words} "
        f"random words of length 1..{length}"
    )
    return Extraction(method, True, machine, minimal, agreement, details, predict)


def _budget_spent(name: str, teacher: ModelTeacher, limits: Limits, when: str) -> str:
    """The one line of an extraction stopped by its budget, naming the option that sets it."""
    if teacher.spent() == "time":
        spent = f"--max-seconds {limits.max_seconds:g} (its wall-clock budget)"
    else:
        spent = f"--max-queries {limits.max_queries} (words run through the model: {teacher.model_words})"
    return f"{name} reached {spent} {when}; raise it"


def compare_lstar(
    model: Any,
    task: Any,
    *,
    target: tuple[MooreMachine, bool] | None = None,
    length: int,
    words: int = 256,
    seed: int = 0,
    algorithm: str = "lstar",
    limits: Limits | None = None,
) -> dict[str, Any]:
    """``compare --method lstar``: the machine L* (or KV) learns from a trained model on ``task``, related to the
    target (default: the task's automaton; else ``(MooreMachine, labels_compared)``) and to the white-box extraction
    (realize/extract.py): ``{learned, white_box, target}``; ``learned`` has the extraction report, the queries and
    limits, ``relation`` (to the target) and ``relation_to_white_box``."""
    from .compare import check_inputs
    from .extract import extract

    (limits or Limits()).check()
    goal, labelled = check_inputs(task, target, None)
    symbols, classes = tuple(task.automaton.symbols), tuple(task.classes)
    learned = lstar_extract(model, symbols=symbols, classes=classes, length=length, target=goal if labelled else None,
                            algorithm=algorithm, limits=limits, words=words, seed=seed)  # fmt: skip
    from .compare import long_agreement

    to_target = relate(learned.machine, goal, labels_compared=labelled, predict=learned.predict, seed=seed)
    why = missing(model, "carry") if hasattr(model, "blocks") else None
    if why is not None:  # a forward-only plug-in: no white-box extraction to relate to (nn/capabilities.py)
        white_report: dict[str, Any] = {"method": None, "n_states": None, "relation": None, "note": why}
        to_white: dict[str, Any] = {"relation": None, "witness": None}
    else:
        white = extract(model, symbols=symbols, classes=classes, length=length, words=words, seed=seed)
        to_white = relate(learned.machine, white.minimal, predict=learned.predict, seed=seed)
        white_to_target = relate(white.machine, goal, labels_compared=labelled, seed=seed)
        white_report = {"method": white.method, "n_states": white.minimal.n_states,
                        "relation": white_to_target["relation"]}  # fmt: skip

    report = learned.report()
    return {
        "learned": {
            **report,
            **to_target,
            "checked_at": long_agreement(report["agreement"], length),
            "relation_to_white_box": to_white["relation"],
            "white_box_witness": to_white["witness"],
        },  # fmt: skip
        "white_box": white_report,
        "target": {
            "name": goal.automaton.name,
            "minimal_states": (goal.minimal() if labelled else state_machine(goal)).n_states,
            "labels_compared": labelled,
        },
    }


def lstar_lines(r: dict[str, Any]) -> list[str]:
    """The text report of :func:`compare_lstar`."""
    le, wb, tg = r["learned"], r["white_box"], r["target"]
    lim = le["limits"]
    stop = f"; stopped by the {le['stopped_by']} limit" if le["stopped_by"] else ""
    ag = le["agreement"]
    parts = [
        f"length {n}: token {t:.4f}, sequence {s:.4f}" for n, t, s in zip(ag["lengths"], ag["token"], ag["sequence"])
    ]
    what = "" if tg["labels_compared"] else " (structure only)"
    at = le["checked_at"]
    lines = [
        f"learned: {le['n_states']} states ({le['algorithm']}, black-box)",
        f"  method: {le['method']}",
        f"  queries: {le['membership_queries']} membership, {le['equivalence_queries']} equivalence "
        f"({le['test_words']} test words); {le['model_words']} words run through the model in "
        f"{le['model_batches']} batches; {le['seconds']:.2f} s{stop}",
        f"  limits: {lim['max_queries']} model words, {lim['max_seconds']:g} s, W-method depth {lim['depth']}, "
        f"{lim['random_words']} random words per equivalence query",
        f"  agreement with the model on {ag['words']} held-out words: " + "; ".join(parts),
        f"  relation to the target ({tg['name'] or 'spec'}, {tg['minimal_states']} states): {le['relation']}{what}; "
        f"the model agrees with this machine on {at['sequence_agreement']:.1%} of words of length {at['length']} "
        f"({at['times_training_length']}× the training length)",
    ]
    if le.get("witness"):
        lines.append(
            f"  witness: {le['witness']['statement']} (checked by running both: {le['witness'].get('checked')})"
        )
    if wb["n_states"] is None:
        lines.append(f"white-box: none ({wb['note']})")
    else:
        lines.append(f"  relation to the white-box extraction ({wb['n_states']} states): {le['relation_to_white_box']}")
        lines.append(f"white-box: {wb['n_states']} states, relation to the target: {wb['relation']}")
    if at.get("warning"):
        lines.append(f"warning: {at['warning']}")
    return lines
