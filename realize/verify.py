"""`verify_model`: the exact check plus agreement with the automaton on random words at a dtype and length.

The reference is the automaton given, else the target automaton stored in the model's header at compile time
(covered by its integrity hash, compiler/model.py) — never one rebuilt from the model's own weights, which would
compare the model with itself. For "householder" and "diagonal" models the exact check is compiler/exact/lrnn.py
(rational / angle-index / exponent arithmetic), for "affine" models compiler/definite_to_affine.py's window check;
for "nfsm" models the margin certificate and table extraction of realize/certificate.py and realize/extract.py,
both against the reference: either failing makes ``ok`` false. The float agreement runs the torch module under the
scan policy of `fsa2rnn run` (``RUN_SCAN``, nn/compiled), reported as ``scan``.
``automaton_from_model`` reads off the automaton a model's exact dynamics realize (what the weights do, not what
they should do).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fsa2rnn.compiler.automaton_to_pdssm import check_pdssm, realized_automaton
from fsa2rnn.compiler.definite_to_affine import check_affine
from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.fsa.automaton import Automaton
from fsa2rnn.fsa.errors import LimitExceededError, ModelFileError, SpecError
from fsa2rnn.runtime import load_executor

from .exact import exact_check, explore

#: most symbols (words × length) verify_model runs through the float model
MAX_SYMBOLS = 2 * 10**7


def automaton_from_model(model: CompiledModel) -> Automaton:
    """The automaton the model's exact dynamics realize, on the header's names (not the stored target).

    householder/diagonal: read δ off the exact configuration search (compiler/exact/lrnn.py ``explore``); states not
    reachable from the initial state keep self-loops (they are never observed). nfsm: E's extracted automaton.
    A model whose dynamics send one state to two different successors on one symbol realizes no automaton.
    """
    h = model.header
    if model.target == "nfsm":
        from fsa2rnn.realize.extract import extracted_automaton

        return extracted_automaton(model)
    if model.target == "pdssm":  # the one-hot code points explored exactly

        return realized_automaton(model)

    res = explore(model)
    if not res["ok"]:
        raise ModelFileError(f"the model's exact dynamics are inconsistent: {res['failure']}")
    n, k = len(h["states"]), len(h["symbols"])
    table = np.tile(np.arange(n), (k, 1))
    e = res["edges"]
    table[e[:, 1], e[:, 0]] = e[:, 2]
    pairs = e[:, :2]
    if len(np.unique(pairs, axis=0)) != len(pairs):
        raise ModelFileError(
            "the model's dynamics are not those of an automaton: one (state, symbol) has two successors"
        )
    return Automaton(
        table,
        states=h["states"],
        symbols=h["symbols"],
        initial=h["initial"],
        accepting=h.get("accepting"),
        name=h.get("name"),
    )


def _first_failure(pred: np.ndarray, want: np.ndarray) -> int | None:
    bad = np.argwhere(pred != want)
    return None if len(bad) == 0 else int(bad[:, 1].min()) + 1


#: what the base install lacks for the torch modules
NN_EXTRA = "pip install 'fsa2rnn[nn]'"


def optional_torch() -> Any:
    """torch, or None in the base install (``pip install fsa2rnn`` without the ``nn`` extra)."""
    try:
        import torch
    except ModuleNotFoundError as exc:
        if exc.name != "torch":
            raise
        return None
    return torch


def verify_model(
    model: CompiledModel | Any,
    automaton: Automaton | None = None,
    *,
    dtype: str = "float64",
    length: int = 1000,
    n_words: int = 16,
    seed: int = 0,
    mode: str = "fused",
) -> dict[str, Any]:
    """Exact check and float agreement; keys: ok, exact, agreement, first_failing_length, dtype, length, words, ...

    ``model`` is a CompiledModel or the torch module ``load_model`` returns (its ``.compiled`` is checked). Without
    torch (the base install) the agreement runs on the numpy executor of fsa2rnn.runtime at float64, and the NFSM's
    margin certificate and extraction, which run the torch module, are listed under ``skipped``."""
    torch = optional_torch()
    if not isinstance(model, CompiledModel) and isinstance(getattr(model, "compiled", None), CompiledModel):
        model = model.compiled
    if not isinstance(model, CompiledModel):
        raise SpecError(f"verify_model takes a CompiledModel or a module from load_model, got {type(model).__name__}")
    if seed < 0:
        raise SpecError(f"the seed must be a non-negative integer, got {seed}")
    if length * n_words > MAX_SYMBOLS:
        raise LimitExceededError(
            f"verify: {n_words} words × length {length} = {length * n_words} symbols (limit {MAX_SYMBOLS})"
        )
    model.check_integrity()
    given = automaton is not None
    if automaton is None:
        automaton = model.target_automaton()
    if list(automaton.symbols) != model.symbols or list(automaton.states) != model.states:
        raise SpecError("the spec's states or symbols differ from the model's (same names in the same order needed)")
    automaton = automaton.replace(initial=model.initial)
    report: dict[str, Any] = {
        "target": model.target,
        "construction": model.construction,
        "automaton": "from --spec" if given else "stored in the model file",
    }
    if model.target in ("householder", "diagonal"):
        ex = exact_check(model, automaton)
        report["exact"] = {k: v for k, v in ex.items()}
        exact_ok = bool(ex["ok"])
    elif model.target == "affine":  # the shift register's window check, in integer arithmetic

        ex = check_affine(model, automaton)
        report["exact"] = dict(ex)
        exact_ok = bool(ex["ok"])
    elif model.target == "pdssm":  # the one-hot code points' induction step, in integer arithmetic

        ex = check_pdssm(model, automaton)
        report["exact"] = dict(ex)
        exact_ok = bool(ex["ok"])
    elif torch is None:
        report["skipped"] = [f"the NFSM's margin certificate and extraction (they run the torch module: {NN_EXTRA})"]
        exact_ok = True  # nothing exact to check without them; the agreement below decides
    else:
        from fsa2rnn.realize.certificate import margin_certificate
        from fsa2rnn.realize.extract import extract_and_compare

        report["certificate"] = margin_certificate(model, dtype, automaton)
        report["extraction"] = extract_and_compare(model, automaton, dtype=dtype)
        exact_ok = bool(report["certificate"]["certified"]) and bool(report["extraction"].get("match", False))
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, automaton.n_symbols, size=(n_words, length))
    want = automaton.run(ids, start=np.full(n_words, model.initial))
    if torch is None:
        if dtype != "float64" or (mode != "fused" and model.target == "householder"):
            raise ModuleNotFoundError(f"--dtype {dtype} --mode {mode} runs the torch modules", name="torch")

        kwargs: dict[str, Any] = {"scan": "numpy executor (fsa2rnn.runtime)"}
        pred = load_executor(model).predict_states(ids)
    else:
        from fsa2rnn.nn.compiled import load_model, run_options

        net = load_model(model).to(getattr(torch, dtype))
        kwargs = {**run_options(net, mode), **({"mode": mode} if model.target == "householder" else {})}
        pred = net.predict_states(torch.from_numpy(ids), **kwargs).numpy()
    fail = _first_failure(pred, want)
    report.update(
        dtype=dtype,
        mode=mode if model.target == "householder" else None,
        scan=kwargs.get("scan"),
        length=length,
        words=n_words,
        seed=seed,
        agreement=float((pred == want).mean()),
        first_failing_length=fail,
    )
    report["ok"] = exact_ok and fail is None
    return report
