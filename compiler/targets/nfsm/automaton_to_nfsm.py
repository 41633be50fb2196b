"""Automaton → Neural Finite-State Machine weights (length-independent-state-tracking §6; docs/theory.md, "Neural
Finite-State Machines").

The whole path: plan heads and layers (nfsm_heads.py) → explore the (configuration, state) pairs the plan's tables
reach, which checks that the head indices determine the state and yields the readout (exact/nfsm.py) → logits
with the chosen margin, as key embedding → linear map (nfsm_logits.py) → check that the float64 argmax of those
logits gives back the tables → a :class:`CompiledModel` (header layout: compiler/targets/nfsm/README.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....fsa.automaton import Automaton
from ....fsa.errors import ConstructionError, FsaError, UnknownStateError
from ...model import MODEL_FORMAT, CompiledModel, stored_automaton
from .exact import NFSMMachine, Readout
from .heads import NFSMPlan, candidate_plans
from .logits import DEFAULT_MARGIN, DEFAULT_OFFSET, compile_logits, logits_numpy, n_logits, tables_from_logits

#: the constructions of target "nfsm": the plan is chosen by ``heads`` and ``layers``
CONSTRUCTIONS = ("auto",)


def compile_nfsm(
    automaton: Automaton,
    *,
    construction: str = "auto",
    heads: str = "auto",
    layers: str = "auto",
    margin: float | None = None,
    initial: int | str | None = None,
    offset: float = DEFAULT_OFFSET,
    embedding: str = "onehot",
    seed: int = 0,
) -> CompiledModel:
    """Compile an automaton into NFSM weights.

    ``heads``: "auto" (fewest logits per step among the plans that apply), "single" (one head, d = |Q|) or "multi"
    (heads per product factor or per base point of a permutation action). ``layers``: "auto", "single" or
    "stacked" (one layer per level of the holonomy cascade). ``margin`` (default 1.0) is the gap between the
    chosen logit and the others in every row, on top of the common level ``offset`` (default 1.0).
    ``embedding``: "onehot" (default) or "dense" (a random orthogonal key embedding drawn from ``seed``, so that
    each logit is a dot product over all embedding coordinates, as in a trained model; layer i's from seed + i;
    compiler/targets/nfsm/logits.py).
    """
    if construction not in CONSTRUCTIONS:
        raise ConstructionError(
            f"the nfsm target chooses its plan by heads and layers, not --construction {construction!r}"
        )
    a = _with_initial(automaton, initial)
    plan, machine, readout = _first_realizing_plan(a, heads, layers)
    return nfsm_model(
        a,
        machine,
        readout,
        construction=plan.construction,
        source=plan.source,
        margin=margin,
        offset=offset,
        embedding=embedding,
        seed=seed,
    )


def nfsm_model(
    a: Automaton,
    machine: NFSMMachine,
    readout: Readout,
    *,
    construction: str,
    source: str,
    margin: float | None = None,
    offset: float = DEFAULT_OFFSET,
    embedding: str = "onehot",
    seed: int = 0,
) -> CompiledModel:
    """The CompiledModel of a machine whose readout has been checked against ``a`` (layout: README.md here)."""
    margin = DEFAULT_MARGIN if margin is None else float(margin)
    tensors: dict[str, np.ndarray] = {}
    layer_headers = []
    for i, lt in enumerate(machine.layers):
        weights = compile_logits(lt.bank, lt.heads, margin=margin, offset=offset, embedding=embedding, seed=seed + i)
        back = tables_from_logits(logits_numpy(weights["embedding"], weights["weight"], weights["bias"]), lt.heads)
        if not np.array_equal(back, lt.bank):
            raise ConstructionError(f"layer {i}: the float64 argmax of the compiled logits differs from its tables")
        names = {k: f"layers.{i}.{k}" for k in weights}
        for k, v in weights.items():
            tensors[names[k]] = v
        layer_headers.append(
            {
                "kind": "nfsm",
                "heads": list(lt.heads),
                "initial": [int(v) for v in machine.initial[machine.head_slices[i]]],
                "upper": list(lt.upper),
                "key_radices": machine.key_radices[i],
                "n_keys": int(lt.bank.shape[0]),
                "attractors": "onehot",
                "key_embedding": embedding,
                "embedding": names["embedding"],
                "weight": names["weight"],
                "bias": names["bias"],
            }
        )
    tensors["readout.codes"] = readout.codes
    tensors["readout.states"] = readout.states
    head_dims = [list(lt.heads) for lt in machine.layers]
    widths = [int(sum(h)) for h in head_dims]
    header: dict[str, Any] = {
        "format": MODEL_FORMAT,
        "target": "nfsm",
        "construction": construction,
        "states": list(a.states),
        "symbols": list(a.symbols),
        "initial": int(a.initial),
        "accepting": None if a.accepting is None else list(a.accepting_states),
        "name": a.name,
        "layers": layer_headers,
        "readout": {
            "kind": "head_indices",
            "radices": list(machine.dims),
            "codes": "readout.codes",
            "states": "readout.states",
        },
        "automaton": stored_automaton(a, a.initial),
        "margin": margin,
        "offset": float(offset),
        "source": source,
        "summary": {
            "target": "nfsm",
            "construction": construction,
            "layers": len(head_dims),
            "width": widths[0] if len(widths) == 1 else widths,
            "heads": sum(len(h) for h in head_dims),
            "head_dims": head_dims,
            "logits_per_step": int(sum(n_logits(h) for h in head_dims)),
            "margin": margin,
            "source": source,
            "verified": True,
        },
    }
    return CompiledModel(header, tensors).validate().seal()


def machine_from_plan(plan: NFSMPlan) -> NFSMMachine:
    return NFSMMachine(plan.layers, plan.initial)


def _first_realizing_plan(a: Automaton, heads: str, layers: str) -> tuple[NFSMPlan, NFSMMachine, Readout]:
    """The cheapest candidate plan whose exhaustive exploration from its lifts yields a well-defined readout.

    The exploration visits every (configuration, state) pair reachable from the lifts, so a readout that exists is
    correct for every word from every lifted state: this is the compiler's exhaustive check ("verified").
    """
    errors = []
    for plan in candidate_plans(a, heads, layers):
        machine = machine_from_plan(plan)
        try:
            readout = machine.explore(a, plan.lifts).readout()
        except FsaError as exc:
            errors.append(f"{plan.construction}: {exc}")
            continue
        if readout(machine.initial[None, :])[0] != a.initial:
            errors.append(f"{plan.construction}: the start configuration does not read out as the initial state")
            continue
        return plan, machine, readout
    raise ConstructionError("no NFSM plan realizes the automaton: " + "; ".join(errors))


def _with_initial(a: Automaton, initial: int | str | None) -> Automaton:
    if initial is not None:
        return a.replace(initial=a.state_index(initial))
    if a.initial is None:
        raise UnknownStateError("the automaton has no initial state: pass initial= (CLI: --initial STATE)")
    return a
