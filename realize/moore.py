"""Output-labelled machines for extraction: a model's realized machine and its target, as Moore machines, and the
relation between them.

A model reads a word and outputs a class after each symbol, so the machine a model realizes is a Moore machine: an
automaton over the model's symbols with an output label per state (the class the model predicts there). The target
is the task's automaton labelled by its readout (the class of each state: the state itself for a word problem, the
accepting bit for ``:accept``), or a spec whose states are named like the model's classes. The model outputs
nothing before the first symbol, so the start state of an extracted machine may carry no label
(:data:`UNOBSERVED`); such a state has no incoming transitions, and minimization merges it with a state of the same
successors (or, against a target, gives it the target's initial label — the one completion under which the two
can agree).

:func:`relate` decides, after Moore minimization of both machines: ``isomorphic`` (a bijection preserving the
transitions, the initial state and the labels), ``homomorphic`` (the extracted machine maps onto the target: it
refines it) or ``none`` with a witness (fsa/relabel.py ``homomorphism``): a word after which the outputs differ, or
two words the extracted machine sends to one state and the target to two. When the target's states are not named
like the model's classes, only the transition structure is compared (``labels_compared`` False).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..fsa.automaton import Automaton
from ..fsa.errors import SpecError
from ..fsa.minimize import moore_minimize
from ..fsa.relabel import Witness, homomorphism, isomorphism

#: label of a state at which no output was read (the start state of a model, which outputs after each symbol)
UNOBSERVED = -2

#: the model's predicted labels after every position of each word (words of symbol ids)
PredictWords = Callable[[list[list[int]]], list[np.ndarray]]


@dataclass
class MooreMachine:
    """An automaton with an initial state and an output label per state (a class id; −1: "no state", as compiled
    models output where their readout fails; :data:`UNOBSERVED` only at an initial state with no incoming
    transitions). ``classes`` names the class ids."""

    automaton: Automaton
    labels: np.ndarray
    classes: tuple[str, ...]

    def __post_init__(self) -> None:
        a = self.automaton
        self.labels = np.asarray(self.labels, dtype=np.int64)
        self.classes = tuple(self.classes)
        if a.initial is None:
            raise SpecError("a Moore machine needs an initial state")
        if self.labels.shape != (a.n_states,):
            raise SpecError(f"a Moore machine needs one label per state ({a.n_states}), got {self.labels.shape}")
        hidden = np.flatnonzero(self.labels == UNOBSERVED)
        if len(hidden) and (hidden.tolist() != [a.initial] or np.any(a.transitions == a.initial)):
            raise SpecError("only an initial state without incoming transitions may be unobserved")

    @property
    def n_states(self) -> int:
        return self.automaton.n_states

    def outputs(self, ids: np.ndarray) -> np.ndarray:
        """The label after each symbol of words ids (B, T) (symbol ids of the automaton)."""
        return self.labels[self.automaton.run(np.asarray(ids, dtype=np.int64))]

    def label_name(self, label: int) -> str:
        if label == UNOBSERVED:
            return "(unobserved)"
        return self.classes[label] if 0 <= label < len(self.classes) else "(no state)"

    def minimal(self, initial_label: int | None = None) -> MooreMachine:
        """The minimal Moore machine (fsa/minimize.py ``moore_minimize``). An unobserved start state takes
        ``initial_label`` when given; otherwise it is merged with a state whose successors are the same classes,
        if there is one (any such merge agrees with everything the model outputs)."""
        a, lab = self.automaton, self.labels.copy()
        hidden = lab[a.initial] == UNOBSERVED
        if hidden and initial_label is not None:
            lab[a.initial] = initial_label
        m, mlab = moore_minimize(a, lab)
        if hidden and initial_label is None:
            t = m.transitions
            twins = np.flatnonzero(np.all(t == t[:, [m.initial]], axis=0))
            twins = twins[twins != m.initial]
            if len(twins):
                lab[a.initial] = mlab[twins[0]]
                m, mlab = moore_minimize(a, lab)
        states = [f"s{i}" for i in range(m.n_states)]
        return MooreMachine(m.replace(states=states), mlab, self.classes)


def task_target(task: Any) -> MooreMachine:
    """The Moore machine of a task: its automaton, each state labelled by its class (``task.state_class``)."""
    if task.automaton is None:
        raise SpecError(f"task {task.name!r} has no automaton to extract or compare against")
    classes = np.asarray(getattr(task, "state_class", np.arange(task.automaton.n_states)))
    return MooreMachine(task.automaton, classes, task.classes)


def spec_target(automaton: Automaton, classes: Sequence[str]) -> tuple[MooreMachine, bool]:
    """(target, labels_compared): a spec as the target of a model whose classes are ``classes``. Its states are
    labelled by the class of the same name when every state is named like a class; otherwise each state is its
    own label and only the structure is compared."""
    if automaton.initial is None:
        raise SpecError("the target spec needs an initial state")
    index = {c: i for i, c in enumerate(classes)}
    if all(s in index for s in automaton.states):
        return MooreMachine(automaton, np.array([index[s] for s in automaton.states]), tuple(classes)), True
    return MooreMachine(automaton, np.arange(automaton.n_states), automaton.states), False


def check_alphabet(extracted: MooreMachine, target: MooreMachine) -> None:
    e, t = extracted.automaton.symbols, target.automaton.symbols
    if set(e) != set(t):
        raise SpecError(f"the model reads symbols {list(e)} but the target's alphabet is {list(t)}")


def relate(
    extracted: MooreMachine,
    target: MooreMachine,
    *,
    labels_compared: bool = True,
    predict: PredictWords | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """``{relation, labels_compared, witness}`` of the extracted machine against the target (module docstring).

    The witness (symbol names) is checked by running both: the target on its words, and — with ``predict`` — the
    model itself (``checked``: the model outputs what the witness says, see :func:`check_witness`)."""
    check_alphabet(extracted, target)
    t_min = target.minimal() if labels_compared else state_machine(target)
    e_min = extracted.minimal(int(t_min.labels[t_min.automaton.initial]) if labels_compared else None)
    labels = (e_min.labels, t_min.labels) if labels_compared else None
    out: dict[str, Any] = {"labels_compared": labels_compared, "witness": None}
    if isomorphism(e_min.automaton, t_min.automaton, labels=labels) is not None:
        return {"relation": "isomorphic", **out}
    phi, witness = homomorphism(e_min.automaton, t_min.automaton, labels=labels)
    if witness is None:
        return {"relation": "homomorphic", **out}
    out["witness"] = describe_witness(witness, e_min, t_min, target, predict, seed=seed)
    return {"relation": "none", **out}


def state_machine(target: MooreMachine) -> MooreMachine:
    """The target with each state as its own label (the structure only): its reachable part, minimal."""
    return MooreMachine(target.automaton, np.arange(target.n_states), target.automaton.states).minimal()


def describe_witness(
    witness: Witness,
    e_min: MooreMachine,
    t_min: MooreMachine,
    target: MooreMachine,
    predict: PredictWords | None,
    *,
    seed: int = 0,
) -> dict[str, Any]:
    """The witness as symbol names, with what each machine does on it, checked by running the target (and the
    model, with ``predict``)."""
    sym = e_min.automaton.symbols
    ta = target.automaton
    words = [list(w) for w in witness.words]
    ids = [[ta.symbol_index(sym[x]) for x in w] for w in words]  # the same words over the target's symbol ids
    t_states = [_final(ta, w) for w in ids]
    info: dict[str, Any] = {
        "kind": witness.kind,
        "words": [[sym[x] for x in w] for w in words],
        "target_states": [ta.states[q] for q in t_states],
    }
    if witness.kind == "output":
        want = target.labels[t_states[0]]
        info["target_output"] = target.label_name(int(want))
        info["extracted_output"] = e_min.label_name(int(e_min.labels[_final(e_min.automaton, words[0])]))
        info["statement"] = f"after {_show(info['words'][0])} the model outputs otherwise than the target"
    else:
        info["statement"] = (
            f"the model does not distinguish {_show(info['words'][0])} and {_show(info['words'][1])}; "
            f"the target sends them to {info['target_states'][0]!r} and {info['target_states'][1]!r}"
        )
    info.update(check_witness(witness, words, target, ids, predict, seed=seed))
    return info


def check_witness(
    witness: Witness,
    words: list[list[int]],
    target: MooreMachine,
    target_ids: list[list[int]],
    predict: PredictWords | None,
    *,
    seed: int = 0,
    n_suffixes: int = 16,
    suffix_length: int = 8,
) -> dict[str, Any]:
    """Run both on the witness: ``checked`` True when the target and the model do what it says.

    "output": the model's output after the word differs from the target's label there. "states": the target
    sends the two words to different states, and the model's outputs after w1·s and w2·s are equal for ``n_suffixes``
    seeded random suffixes s (and, when the target's labels are the model's classes, the target's shortest
    suffix that separates its two states by output)."""
    ta = target.automaton
    if witness.kind == "output":
        if predict is None:
            return {"checked": None}
        got = predict([words[0]])[0]
        model_out = int(got[-1]) if len(got) else UNOBSERVED
        want = int(target.labels[_final(ta, target_ids[0])])
        return {"checked": bool(model_out != want), "model_output": target.label_name(model_out)}
    q1, q2 = (_final(ta, w) for w in target_ids)
    distinguished = q1 != q2
    if predict is None:
        return {"checked": None if distinguished else False}
    rng = np.random.default_rng(seed)
    k = ta.n_symbols
    suffixes = [rng.integers(0, k, suffix_length).tolist() for _ in range(n_suffixes)]
    sep = _separating_suffix(target, q1, q2)
    if sep is not None:
        suffixes.insert(0, sep)
    runs = predict([w + s for s in suffixes for w in words])
    same = all(
        np.array_equal(runs[2 * i][len(words[0]) :], runs[2 * i + 1][len(words[1]) :]) for i in range(len(suffixes))
    )
    return {"checked": bool(distinguished and same), "suffixes_tried": len(suffixes)}


def _separating_suffix(target: MooreMachine, q1: int, q2: int) -> list[int] | None:
    """A shortest nonempty word whose output the target gives differently from q1 and from q2 (None if none)."""
    t = target.automaton.transitions
    seen = {(q1, q2)}
    frontier = [((q1, q2), [])]
    while frontier:
        nxt = []
        for (p, q), w in frontier:
            for x in range(t.shape[0]):
                p2, r2 = int(t[x, p]), int(t[x, q])
                if target.labels[p2] != target.labels[r2]:
                    return w + [x]
                if (p2, r2) not in seen:
                    seen.add((p2, r2))
                    nxt.append(((p2, r2), w + [x]))
        frontier = nxt
    return None


def _final(a: Automaton, word: Sequence[int]) -> int:
    return int(a.run(np.asarray(word, dtype=np.int64))[-1]) if len(word) else int(a.initial)


def _show(word: Sequence[str]) -> str:
    return "ε (the empty word)" if not word else " ".join(word)
