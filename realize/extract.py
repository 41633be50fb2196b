"""Extraction: the automaton a model implements, as a Moore machine (realize/moore.py), for every model.

:func:`extract` reads compiled and trained models alike:

- NFSM (a compiled NFSM, or a trained one-layer NFSM SequenceModel): the hard tables argmax θ(x) and the readout —
  exact. A compiled model's readout is a function of the configuration; a trained model's classifier reads the
  NFSM's output and the current symbol's embedding, so its states are the reachable (configuration, last symbol)
  pairs, each labelled by the class the model predicts there (run on a shortest word reaching it). Either machine
  is then Moore-minimized.
- Everything else (DeltaNet/DeltaProduct, Mamba-style, DLR, LSTM, Transformer, multi-layer NFSMs, compiled linear
  RNNs): sample-based extraction (realize/sample_extract.py).

Each extraction reports its agreement with the model on held-out words at the extraction length and at 10 times
it. The rest of this module is the original NFSM table check (length-independent-state-tracking §7, App. H.6):
read each layer's tables back from its logits (argmax at a dtype, through the model's own embedding → linear path)
and compare the machine they define with the target automaton up to relabelling of states.

The comparison is a homomorphism check: φ = the model's readout (head indices → state) must satisfy
φ(σ_x(c)) = δ_x(φ(c)) for every configuration c in the readout's domain and every symbol x, and send the start
configuration to the initial state. It is decided exhaustively by a breadth-first search over (configuration, state)
pairs (compiler/targets/nfsm/exact.py), which also yields a shortest word on which the model errs when it does.
Matching tables certify every length: the scan composes them exactly (Prop. G.1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..compiler.keys import HIGH_FIRST, encode
from ..compiler.model import CompiledModel
from ..compiler.registry import target_of
from ..compiler.targets.nfsm.exact import LayerTables, NFSMMachine, Readout, check_radix_limit
from ..fsa.automaton import Automaton
from ..fsa.errors import ConstructionError, LimitExceededError, ModelFileError, SpecError
from ..nn import load_model
from ..nn.compiled.nfsm import NFSMModel
from ..nn.model import SequenceModel
from ..nn.table_predict import NFSMTablePredictor, table_readable
from .moore import UNOBSERVED, MooreMachine
from .probe import SequenceProbe, compiled_probe, predict_words
from .sample_extract import sample_extract

#: reachable machine states a table extraction visits at most
MAX_TABLE_STATES = 1_000_000
#: held-out lengths are the extraction length times these
AGREEMENT_FACTORS = (1, 10)

DTYPES = {
    "float64": torch.float64,
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
}


def as_dtype(dtype: str | torch.dtype) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype not in DTYPES:
        raise SpecError(f"unknown dtype {dtype!r} (choose from {', '.join(DTYPES)})")
    return DTYPES[dtype]


def dtype_name(dtype: str | torch.dtype) -> str:
    return str(as_dtype(dtype)).replace("torch.", "")


def as_nfsm_module(model: Any) -> Any:
    """An NFSMModel from a module, a CompiledModel or a model file path (ModelFileError for another target)."""
    return NFSMModel.coerce(model)


def target_automaton(model: Any) -> Automaton:
    """The automaton the model was compiled from (stored in its header: compiler/model.py ``target_automaton``)."""
    return as_nfsm_module(model).compiled.target_automaton()


@torch.no_grad()
def extracted_machine(model: Any, dtype: str | torch.dtype = "float64") -> tuple[NFSMMachine, Readout]:
    """The machine defined by the argmax tables the model computes at ``dtype``, with the model's readout."""
    module = as_nfsm_module(model)
    banks = [layer.key_tables(as_dtype(dtype)).cpu().numpy() for layer in module.layers]
    program = module.program
    layers = [
        LayerTables(list(spec.heads), list(spec.upper), bank, module.n_symbols)
        for spec, bank in zip(program.layers, banks)
    ]
    machine = NFSMMachine(layers, program.initial_config)
    readout = Readout(program.readout_codes.copy(), program.readout_states.copy(), list(program.dims))
    return machine, readout


def failing_word(
    model: Any, automaton: Automaton | None = None, dtype: str | torch.dtype = "float64"
) -> list[int] | None:
    """A shortest word (symbol ids) from the initial state on which the model at ``dtype`` reads out a wrong state,
    or None when it is right on every word (exhaustive search over reachable (configuration, state) pairs)."""
    automaton = automaton if automaton is not None else target_automaton(model)
    machine, readout = extracted_machine(model, dtype)
    start = [(machine.initial.tolist(), automaton.initial)]
    return machine.explore(automaton, start, readout).word


def extract_and_compare(
    model: Any, automaton: Automaton | None = None, *, dtype: str | torch.dtype = "float32"
) -> dict[str, Any]:
    """Extract the tables at ``dtype`` and compare them with the target automaton (default: the stored one).

    Keys: ``match`` (the readout is a homomorphism from the extracted machine, on every configuration the readout
    knows, onto the target, and the model is right on every word from the initial state), ``dtype``,
    ``tables_equal_compiled`` (the extracted tables equal the float64 ones, per layer), ``configurations`` (how many
    the readout knows), ``states_covered``, ``failing_word`` (symbol names, from the initial state) and
    ``statement``.
    """
    module = as_nfsm_module(model)
    automaton = automaton if automaton is not None else target_automaton(module)
    _check_names(module, automaton)
    machine, readout = extracted_machine(module, dtype)
    ref, _ = extracted_machine(module, "float64")
    equal = [bool(np.array_equal(a.bank, b.bank)) for a, b in zip(machine.layers, ref.layers)]
    starts = list(zip(machine.decode_code(readout.codes).tolist(), readout.states.tolist()))
    everywhere = machine.explore(automaton, starts, readout)
    word = machine.explore(automaton, [(machine.initial.tolist(), automaton.initial)], readout).word
    match = everywhere.word is None and word is None
    covered = int(len(np.unique(readout.states)))
    name = dtype_name(dtype)
    if match:
        statement = (
            f"the tables extracted at {name} realize the automaton: the readout is a homomorphism onto it on all "
            f"{len(readout.codes)} configurations it knows ({covered} of {automaton.n_states} states)"
        )
    elif word is not None:
        statement = f"the tables extracted at {name} err on a word of length {len(word)} from the initial state"
    else:
        statement = (
            f"the tables extracted at {name} are right from the initial state but not from every configuration "
            f"the readout knows"
        )
    return {
        "match": bool(match),
        "dtype": name,
        "tables_equal_compiled": equal,
        "configurations": int(len(readout.codes)),
        "states_covered": covered,
        "failing_word": None if word is None else [automaton.symbols[x] for x in word],
        "statement": statement,
    }


def extracted_automaton(model: Any, dtype: str | torch.dtype = "float64") -> Automaton:
    """The semiautomaton the model's tables at ``dtype`` realize, on the model's state names (through the readout).

    δ'_x(q) = readout(σ_x(c_q)) for a configuration c_q that reads out as q. States no configuration reads out as
    (unreachable from the initial state in multi-head models) keep self-loops. Raises ConstructionError when the
    tables leave the readout's configurations or two configurations of one state disagree.
    """
    module = as_nfsm_module(model)
    h = module.compiled.header
    machine, readout = extracted_machine(module, dtype)
    n = len(h["states"])
    trans = np.tile(np.arange(n), (module.n_symbols, 1))
    configs = machine.decode_code(readout.codes)
    for x in range(module.n_symbols):
        img = readout(machine.step(configs, np.full(len(configs), x)))
        if np.any(img < 0):
            raise ConstructionError(f"at {dtype_name(dtype)} symbol {h['symbols'][x]!r} leads out of the readout")
        for q in np.unique(readout.states):
            vals = np.unique(img[readout.states == q])
            if len(vals) != 1:
                raise ConstructionError(
                    f"at {dtype_name(dtype)} the configurations of state {h['states'][q]!r} disagree under "
                    f"{h['symbols'][x]!r}: the model realizes no automaton on these states"
                )
            trans[x, q] = vals[0]
    return Automaton(
        trans, states=h["states"], symbols=h["symbols"], initial=h["initial"], accepting=h.get("accepting")
    )


def _check_names(module: Any, automaton: Automaton) -> None:
    h = module.compiled.header
    if list(automaton.symbols) != list(h["symbols"]):
        raise SpecError("the automaton's symbols differ from the model's")
    if automaton.n_states != len(h["states"]):
        raise SpecError(f"the automaton has {automaton.n_states} states, the model {len(h['states'])}")
    if automaton.initial is None:
        raise SpecError("the automaton has no initial state")


# ---------------------------------------------------------------------------------------------------- every model
@dataclass
class Extraction:
    """An extracted machine: ``machine`` (clusters or table states) and its Moore-minimal form ``minimal``,
    ``method`` (a sentence naming it), ``sample_based``, ``agreement`` (held-out words: ``lengths``, ``token`` and
    ``sequence`` agreement of the minimal machine's outputs with the model's) and the method's ``details``.
    In :meth:`report`, ``n_states`` counts the minimal machine, ``n_machine_states`` the machine before it."""

    method: str
    sample_based: bool
    machine: MooreMachine
    minimal: MooreMachine
    agreement: dict[str, Any]
    details: dict[str, Any] = field(default_factory=dict)
    predict: Callable[[list[list[int]]], list[np.ndarray]] | None = None

    def report(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "sample_based": self.sample_based,
            "n_states": self.minimal.n_states,
            "n_machine_states": self.machine.n_states,
            "agreement": self.agreement,
            **self.details,
        }


def extract(
    model: Any,
    *,
    symbols: list[str] | tuple[str, ...] | None = None,
    classes: list[str] | tuple[str, ...] | None = None,
    length: int = 40,
    words: int = 256,
    suffixes: int = 16,
    suffix_length: int = 8,
    max_clusters: int = 64,
    seed: int = 0,
) -> Extraction:
    """The machine ``model`` implements (module docstring): a SequenceModel (``symbols``: the names of its first
    token ids, ``classes``: of its outputs — a task's automaton symbols and classes), or a compiled model (a
    CompiledModel, a model file or a module of nn.load_model; names from its header). ``length`` is the length of
    the sampled and held-out words (the training length); the sample's sizes and ``seed`` as in
    realize/sample_extract.py."""
    if length < 1 or words < 1:
        raise SpecError(f"extraction needs a length and a number of words ≥ 1, got {length} and {words}")
    if isinstance(model, SequenceModel):
        if symbols is None or classes is None:
            raise SpecError("extracting a SequenceModel needs the names of its symbols and classes")
        symbols, classes = tuple(symbols), tuple(classes)
        if model.config.input_dim is not None:
            raise SpecError("a model of real-valued inputs (input_dim) reads no symbols: nothing to extract")
        if not symbols:
            raise SpecError("extraction needs at least one symbol: the machine's alphabet is empty")
        if len(symbols) > model.config.vocab or len(classes) != model.config.n_classes:
            raise SpecError(
                f"the model reads {model.config.vocab} tokens into {model.config.n_classes} classes; got "
                f"{len(symbols)} symbols and {len(classes)} classes"
            )
        if model.config.layer == "nfsm" and model.config.n_layers == 1:
            machine, details = _trained_nfsm_machine(model, symbols, classes), {}
            method = (
                "NFSM tables: the hard tables argmax θ(x) of the trained layer, states the reachable (head indices, "
                "last symbol) pairs labelled by the model's prediction there (exact)"
            )
            return _extraction(model, machine, method, False, details, length, words, seed)
        probe = SequenceProbe(model)
    else:
        module = _as_module(model)
        h = module.compiled.header
        symbols, classes = tuple(h["symbols"]), tuple(h["states"])
        exact = target_of(module.compiled).load("extraction")  # a target whose configurations can be enumerated
        if exact is not None:
            machine, method = exact(module)
            return _extraction(module, machine, method, False, {}, length, words, seed)
        model, probe = module, compiled_probe(module)
    machine, details = sample_extract(
        probe, symbols, classes, length=length, words=words, suffixes=suffixes, suffix_length=suffix_length,
        max_clusters=max_clusters, seed=seed,
    )  # fmt: skip
    method = (
        f"sample-based: k-means (k = {details['kmeans_k']}) on the hidden states after every prefix of "
        f"{details['words']} random words of length {details['length']}, refined until the model's predicted "
        f"outputs agree on {details['suffixes']} sampled continuations of length {details['suffix_length']}; "
        f"{details['clusters']} clusters, transitions by majority (consistency {details['consistency']:.4f})"
    )
    return _extraction(model, machine, method, True, details, length, words, seed)


def _as_module(model: Any) -> Any:
    if isinstance(model, (CompiledModel, str, Path)):
        return load_model(model)
    if hasattr(model, "compiled") and hasattr(model, "predict_states"):
        return model
    raise ModelFileError(f"cannot extract an automaton from a {type(model).__name__}")


def _extraction(
    model: Any, machine: MooreMachine, method: str, sampled: bool, details: dict, length: int, words: int, seed: int
) -> Extraction:
    minimal = machine.minimal()

    def predict(ws: list[list[int]]) -> list[np.ndarray]:
        return predict_words(model, ws)

    agreement = held_out_agreement(model, minimal, length=length, words=words, seed=seed)
    return Extraction(method, sampled, machine, minimal, agreement, details, predict)


@torch.no_grad()
def held_out_agreement(
    model: Any, machine: MooreMachine, *, length: int, words: int = 256, seed: int = 0
) -> dict[str, Any]:
    """Token and sequence agreement of the machine's outputs with the model's predictions on ``words`` held-out
    random words (uniform symbols, seeded apart from the extraction's sample) of each length in
    :data:`AGREEMENT_FACTORS` × ``length``."""
    rng = np.random.default_rng([seed, 1])
    k = machine.automaton.n_symbols
    out: dict[str, Any] = {"lengths": [], "token": [], "sequence": [], "words": int(words)}
    for f in AGREEMENT_FACTORS:
        n = f * length
        ids = rng.integers(0, k, (words, n))
        got = model.predict_states(torch.from_numpy(ids)).cpu().numpy()
        same = got == machine.outputs(ids)
        out["lengths"].append(int(n))
        out["token"].append(float(same.mean()))
        out["sequence"].append(float(same.all(1).mean()))
    return out


def _reachable_configurations(
    start: np.ndarray, step: Callable[[np.ndarray, int], np.ndarray], k: int, radices: list[int]
) -> tuple[np.ndarray, np.ndarray, list[list[int]], np.ndarray]:
    """Breadth-first search of a deterministic machine on integer vectors (states encoded in mixed radix):
    (states (n, D) in BFS order, table (k, n), a shortest word reaching each state, the state before its last
    symbol (−1 for the start)), one numpy step per level."""
    check_radix_limit(radices, "machine states")
    start = np.asarray(start, dtype=np.int64)[None, :]
    states, codes = [start], [encode(start, radices, HIGH_FIRST)]
    parent, symbol = [np.array([-1])], [np.array([-1])]
    seen = codes[0]
    frontier = start
    while len(frontier):
        succ = np.concatenate([step(frontier, x) for x in range(k)])  # symbol-major
        c = encode(succ, radices, HIGH_FIRST)
        _, first = np.unique(c, return_index=True)
        first.sort()
        first = first[~np.isin(c[first], seen)]
        if not len(first):
            break
        frontier = succ[first]
        n_front = len(states[-1])
        offset = sum(len(s) for s in states[:-1])
        states.append(frontier)
        codes.append(c[first])
        parent.append(offset + first % n_front)
        symbol.append(first // n_front)
        seen = np.concatenate([seen, c[first]])
        if len(seen) > MAX_TABLE_STATES:
            raise LimitExceededError(f"the tables reach over {MAX_TABLE_STATES} machine states, over the limit")
    all_states, all_codes = np.concatenate(states), np.concatenate(codes)
    par, sym = np.concatenate(parent), np.concatenate(symbol)
    order = np.argsort(all_codes)
    table = np.empty((k, len(all_states)), dtype=np.int64)
    for x in range(k):
        nxt = encode(step(all_states, x), radices, HIGH_FIRST)
        table[x] = order[np.searchsorted(all_codes[order], nxt)]
    words: list[list[int]] = []
    for i in range(len(all_states)):
        words.append([] if par[i] < 0 else words[int(par[i])] + [int(sym[i])])  # parents come first (BFS)
    return all_states, table, words, par


def compiled_nfsm_machine(module: Any) -> tuple[MooreMachine, str]:
    """The compiled NFSM's configurations reachable from its start, labelled by its readout (−1: none): the nfsm
    target's ``extraction`` (exact), with how it was extracted."""
    machine, readout = extracted_machine(module, "float64")
    h = module.compiled.header
    k = machine.n_symbols
    configs, table, _, _ = _reachable_configurations(
        machine.initial, lambda c, x: machine.step(c, np.full(len(c), x)), k, list(machine.dims)
    )
    names = [",".join(map(str, c)) for c in configs.tolist()]
    automaton = Automaton(table, states=names, symbols=h["symbols"], initial=0)
    method = "NFSM tables: the compiled tables (argmax of the logits at float64) and readout (exact)"
    return MooreMachine(automaton, readout(configs), tuple(h["states"])), method


@torch.no_grad()
def _trained_nfsm_machine(model: Any, symbols: tuple[str, ...], classes: tuple[str, ...]) -> MooreMachine:
    """A trained one-layer NFSM's (head indices, last symbol) pairs reachable from its start (module docstring),
    labelled through nn/table_predict.py: one forward per pair, in batches (else on each pair's shortest word)."""
    k = len(symbols)
    tables, start = model.nfsm_tables(k)  # (k, H, d_max), (H,)
    heads = np.arange(tables.shape[1])

    def step(nodes: np.ndarray, x: int) -> np.ndarray:  # node = (indices…, last symbol + 1)
        cfg = tables[x][heads[None, :], nodes[:, :-1]]
        return np.concatenate([cfg, np.full((len(nodes), 1), x + 1)], axis=1)

    radices = [tables.shape[2]] * len(heads) + [k + 1]
    nodes, table, words, parent = _reachable_configurations(np.r_[start, 0], step, k, radices)
    labels = np.full(len(nodes), UNOBSERVED, dtype=np.int64)
    if len(nodes) > 1 and table_readable(model):  # the model's output on (last symbol, configuration before it)
        labels[1:] = NFSMTablePredictor(model).outputs(nodes[1:, -1] - 1, nodes[parent[1:], :-1])
    elif len(nodes) > 1:
        runs = predict_words(model, words[1:])
        labels[1:] = [int(r[-1]) for r in runs]
    names = ["start"] + [f"{','.join(map(str, n[:-1].tolist()))}|{symbols[int(n[-1]) - 1]}" for n in nodes[1:]]
    return MooreMachine(Automaton(table, states=names, symbols=symbols, initial=0), labels, classes)
