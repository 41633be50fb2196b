"""Table extraction for NFSM models (length-independent-state-tracking §7, App. H.6): read each layer's tables
back from its logits (argmax at a dtype, through the model's own embedding → linear path) and compare the machine
they define with the target automaton up to relabelling of states.

The comparison is a homomorphism check: φ = the model's readout (head indices → state) must satisfy
φ(σ_x(c)) = δ_x(φ(c)) for every configuration c in the readout's domain and every symbol x, and send the start
configuration to the initial state. It is decided exhaustively by a breadth-first search over (configuration, state)
pairs (compiler/nfsm_machine.py), which also yields a shortest word on which the model errs when it does.
Matching tables certify every length: the scan composes them exactly (Prop. G.1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.compiler.nfsm_machine import LayerTables, NFSMMachine, Readout
from fsa2rnn.fsa.automaton import Automaton
from fsa2rnn.fsa.errors import ConstructionError, ModelFileError, SpecError

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
    """An NFSMModel from a module, a CompiledModel or a model file path."""
    from fsa2rnn.nn import load_model
    from fsa2rnn.nn.nfsm_model import NFSMModel

    if isinstance(model, NFSMModel):
        return model
    if isinstance(model, (CompiledModel, str, Path)):
        module = load_model(model)
        if not isinstance(module, NFSMModel):
            raise ModelFileError("not an NFSM model (target is not 'nfsm')")
        return module
    raise ModelFileError(f"cannot read an NFSM model from a {type(model).__name__}")


def target_automaton(model: Any) -> Automaton:
    """The automaton the model was compiled from (stored in its header: compiler/model.py ``target_automaton``)."""
    return as_nfsm_module(model).compiled.target_automaton()


@torch.no_grad()
def extracted_machine(model: Any, dtype: str | torch.dtype = "float64") -> tuple[NFSMMachine, Readout]:
    """The machine defined by the argmax tables the model computes at ``dtype``, with the model's readout."""
    module = as_nfsm_module(model)
    banks = [layer.key_tables(as_dtype(dtype)).cpu().numpy() for layer in module.layers]
    layers = []
    for spec, bank in zip(module.layer_specs, banks):
        layers.append(LayerTables([int(d) for d in spec["heads"]], list(spec["upper"]), bank, module.n_symbols))
    machine = NFSMMachine(layers, module._initial_config())
    readout = Readout(module.readout_codes.cpu().numpy(), module.readout_states.cpu().numpy(), list(module.radices))
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
