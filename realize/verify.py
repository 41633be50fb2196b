"""`verify_model`: the exact check plus agreement with the automaton on random words at a dtype and length.

The reference is the automaton given, else the target automaton stored in the model's header at compile time
(covered by its integrity hash, compiler/model.py) — never one rebuilt from the model's own weights, which would
compare the model with itself. The exact check is the target's ``check`` (the registry, compiler/registry.py): for
"householder" and "diagonal" models compiler/targets/lrnn/exact.py (rational / angle-index / exponent arithmetic),
for "affine" models the shift register's window check, for "pdssm" the one-hot code points' induction step, for
"nfsm" models the margin certificate and table extraction of realize/certificate.py and realize/extract.py, both
against the reference: any failing makes ``ok`` false. The float agreement runs the torch module under the
scan policy of `fsa2rnn run` (``RUN_SCAN``, nn/compiled), reported as ``scan``.
``automaton_from_model`` reads off the automaton a model's exact dynamics realize (what the weights do, not what
they should do).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..compiler import load_executor
from ..compiler.model import CompiledModel
from ..compiler.registry import target_of
from ..fsa.automaton import Automaton
from ..fsa.errors import LimitExceededError, ModelFileError, SpecError

#: most symbols (words × length) verify_model runs through the float model
MAX_SYMBOLS = 2 * 10**7


def automaton_from_model(model: CompiledModel) -> Automaton:
    """The automaton the model's exact dynamics realize, on the header's names (not the stored target): its target's
    ``realized_automaton`` (the registry) — for linear RNNs δ read off the exact configuration search, for NFSMs the
    extracted tables' automaton, for PD-SSMs the one-hot code points explored exactly. A model whose dynamics send
    one state to two different successors on one symbol realizes no automaton (ModelFileError)."""
    target = target_of(model)
    realized = target.load("realized_automaton")
    if realized is None:
        raise ModelFileError(f"target {target.name!r} names no exact reading of the automaton its models realize")
    return realized(model)


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
    torch (the base install) the agreement runs on the numpy executor (``fsa2rnn.compiler.load_executor``) at
    float64, and a target check that runs the torch module (the NFSM's margin certificate and extraction) is listed
    under ``skipped``."""
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
    target = target_of(model)
    try:
        check = target.load("check")  # the target's exact check
    except ModuleNotFoundError as exc:  # the base install: this target's check runs the torch module
        if torch is not None or exc.name != "torch":
            raise
        report["skipped"] = [f"the {target.name} target's check ({target.check_summary}) runs the torch module: "
                             f"{NN_EXTRA}"]  # fmt: skip
        exact_ok = True  # nothing exact to check without it; the agreement below decides
    else:
        entries, exact_ok = check(model, automaton, dtype=dtype)
        report.update(entries)
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, automaton.n_symbols, size=(n_words, length))
    want = automaton.run(ids, start=np.full(n_words, model.initial))
    if torch is None:
        if dtype != "float64" or mode != "fused":
            raise ModuleNotFoundError(f"--dtype {dtype} --mode {mode} runs the torch modules", name="torch")

        kwargs: dict[str, Any] = {"scan": "numpy executor (fsa2rnn.compiler.load_executor)"}
        pred = load_executor(model).predict_states(ids)
    else:
        from ..nn.compiled import load_model, run_options

        net = load_model(model).to(getattr(torch, dtype))
        kwargs = run_options(net, mode)
        pred = net.predict_states(torch.from_numpy(ids), **kwargs).numpy()
    fail = _first_failure(pred, want)
    report.update(
        dtype=dtype,
        mode=kwargs.get("mode"),
        scan=kwargs.get("scan"),
        length=length,
        words=n_words,
        seed=seed,
        agreement=float((pred == want).mean()),
        first_failing_length=fail,
    )
    report["ok"] = exact_ok and fail is None
    return report
