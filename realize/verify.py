"""`verify_model`: the exact check plus agreement with the automaton on random words at a dtype and length.

For "householder" and "diagonal" models the exact check is compiler/exact_check.py (rational / angle-index / exponent
arithmetic); for "nfsm" models the margin certificate and table extraction of realize/certificate.py and
realize/extract.py are added. ``automaton_from_model`` rebuilds the automaton a model claims to realize from its
header and from the transitions its exact dynamics realize (per-target hook).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.fsa.automaton import Automaton
from fsa2rnn.fsa.errors import LimitExceededError, ModelFileError, SpecError

#: most symbols (words × length) verify_model runs through the float model
MAX_SYMBOLS = 2 * 10**7


def automaton_from_model(model: CompiledModel) -> Automaton:
    """The automaton described by a model's header, with the transitions its exact dynamics realize.

    householder/diagonal: read δ off the exact configuration search (compiler/exact_check.py ``explore``); states not
    reachable from the initial state keep self-loops (they are never observed). nfsm: E's extracted automaton.
    A model whose dynamics send one state to two different successors on one symbol realizes no automaton.
    """
    h = model.header
    if model.target == "nfsm":
        from fsa2rnn.realize.extract import extracted_automaton

        return extracted_automaton(model)
    from .exact import explore

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


def verify_model(
    model: CompiledModel,
    automaton: Automaton | None = None,
    *,
    dtype: str = "float64",
    length: int = 1000,
    n_words: int = 16,
    seed: int = 0,
    mode: str = "fused",
) -> dict[str, Any]:
    """Exact check and float agreement; keys: ok, exact, agreement, first_failing_length, dtype, length, words, ..."""
    import torch

    from fsa2rnn.nn import load_model

    if length * n_words > MAX_SYMBOLS:
        raise LimitExceededError(
            f"verify: {n_words} words × length {length} = {length * n_words} symbols (limit {MAX_SYMBOLS})"
        )
    if model.target in ("householder", "diagonal"):
        from fsa2rnn.compiler.lrnn_spec import check_digest

        check_digest(model)
    given = automaton is not None
    if automaton is None:
        automaton = automaton_from_model(model)
    if list(automaton.symbols) != model.symbols or list(automaton.states) != model.states:
        raise SpecError("the spec's states or symbols differ from the model's (same names in the same order needed)")
    report: dict[str, Any] = {
        "target": model.target,
        "construction": model.construction,
        "automaton": "from --spec" if given else "from the model header",
    }
    if model.target in ("householder", "diagonal"):
        from .exact import exact_check

        ex = exact_check(model, automaton.replace(initial=model.initial))
        report["exact"] = {k: v for k, v in ex.items()}
        exact_ok = bool(ex["ok"])
    else:
        from fsa2rnn.realize.certificate import margin_certificate
        from fsa2rnn.realize.extract import extract_and_compare

        report["certificate"] = margin_certificate(model, dtype)
        report["extraction"] = extract_and_compare(model, automaton, dtype=dtype)
        exact_ok = bool(report["extraction"].get("match", False))
    net = load_model(model).to(getattr(torch, dtype))
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, automaton.n_symbols, size=(n_words, length))
    want = automaton.run(ids, start=np.full(n_words, model.initial))
    kwargs = {"mode": mode} if model.target == "householder" else {}
    pred = net.predict_states(torch.from_numpy(ids), **kwargs).numpy()
    fail = _first_failure(pred, want)
    report.update(
        dtype=dtype,
        mode=mode if model.target == "householder" else None,
        length=length,
        words=n_words,
        seed=seed,
        agreement=float((pred == want).mean()),
        first_failing_length=fail,
    )
    report["ok"] = exact_ok and fail is None
    return report
