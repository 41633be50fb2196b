"""Head planning for the NFSM compiler: which layers and heads realize an automaton, with which tables.

- single head, d = |Q|, σ_x = δ_x (Prop. G.1: every transformation is a table);
- permutation group: heads that track points (Example G.7). Take a faithful permutation action ρ of the transition
  group (the automaton's natural ``action``, else fsa/permutation_rep.py) and a *base* b_1, …, b_k of ρ's group
  (sympy's Schreier–Sims): an element is determined by the images of the base points, so head i, started at b_i
  with tables ρ(x), holds g(b_i) for the running product g, and the tuple of head indices determines the state.
  M11 on 11 points has a base of 4 points (4 heads of 11), S5 on 5 points a base of 4 (4 heads of 5);
- direct product (``automaton.factors``): one head per factor, each reading the shared symbol;
- Krohn–Rhodes cascade (fsa/holonomy.py): one layer per level, top first; level i's table is chosen by the symbol
  and the indices of the levels above at the previous step (Prop. G.6 with the timing of docs/theory.md).

``auto`` picks, among the plans that apply, the fewest logits per step (Σ d_i², the paper's cost of heads).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....fsa import holonomy_decomposition
from ....fsa.automaton import Automaton
from ....fsa.errors import ConstructionError, FsaError, LimitExceededError, SpecError
from ....fsa.permutation_rep import faithful_permutation_representation
from ...keys import HIGH_FIRST, decode
from .exact import LayerTables

HEADS_CHOICES = ("auto", "single", "multi")
LAYERS_CHOICES = ("auto", "single", "stacked")
#: Largest number of keys (symbol × indices of the layers above) of a stacked layer.
MAX_CASCADE_KEYS = 4096
#: ``layers="auto"`` tries the holonomy cascade only up to this many states (the decomposition can be costly).
AUTO_CASCADE_MAX_STATES = 64


@dataclass
class NFSMPlan:
    construction: str  #: "single" | "multihead" | "product" | "stacked"
    layers: list[LayerTables]
    initial: list[int]  #: start configuration (one index per head, all layers)
    lifts: list[tuple[list[int], int]]  #: (configuration, state) pairs the readout exploration starts from
    source: str  #: one line: where the heads come from

    @property
    def cost(self) -> int:
        """Logits per step: Σ over layers and heads of d²."""
        return sum(d * d for layer in self.layers for d in layer.heads)


def single_head_plan(a: Automaton) -> NFSMPlan:
    """One head with d = |Q| and σ_x = δ_x (Prop. G.1)."""
    bank = np.asarray(a.transitions, dtype=np.int64)[:, None, :]
    layer = LayerTables([a.n_states], [], bank, a.n_symbols)
    lifts = [([q], q) for q in range(a.n_states)]
    return NFSMPlan("single", [layer], [a.initial], lifts, f"one head of {a.n_states} indices (the states)")


def permutation_heads_plan(a: Automaton) -> NFSMPlan:
    """Heads tracking the images of a base of a faithful permutation action (Example G.7)."""
    if not a.is_group_automaton:
        raise ConstructionError("multi-head point tracking needs a group automaton (every symbol a permutation)")
    perms, source = _permutation_action(a)
    base = _base(perms)
    deg = perms.shape[1]
    bank = np.repeat(perms[:, None, :], len(base), axis=1)
    layer = LayerTables([deg] * len(base), [], bank, a.n_symbols)
    src = f"{len(base)} heads of {deg} indices tracking base points {base} of the {source}"
    return NFSMPlan("multihead", [layer], list(base), [(list(base), a.initial)], src)


def product_heads_plan(a: Automaton) -> NFSMPlan:
    """One head per direct-product factor; factor i's table is read off the product (first factor most significant)."""
    if not a.factors:
        raise ConstructionError("the automaton was not built as a direct product (no factors)")
    dims = [f.n_states for f in a.factors]
    if int(np.prod(dims)) != a.n_states:
        raise ConstructionError(f"factor sizes {dims} do not multiply to {a.n_states} states")
    digits = decode(np.arange(a.n_states), dims, HIGH_FIRST)  # (n, r)
    trans = np.asarray(a.transitions, dtype=np.int64)
    bank = np.zeros((a.n_symbols, len(dims), max(dims)), dtype=np.int64)
    bank[:] = np.arange(max(dims))
    for h, d in enumerate(dims):
        img = digits[trans, h]  # (|Σ|, n): digit h of δ_x(q)
        # well defined: the image digit depends on digit h of q only
        first = np.array([np.flatnonzero(digits[:, h] == k)[0] for k in range(d)])
        table = img[:, first]
        if not np.array_equal(table[:, digits[:, h]], img):
            raise ConstructionError(f"factor {h} of the product does not act independently of the others")
        bank[:, h, :d] = table
    layer = LayerTables(dims, [], bank, a.n_symbols)
    lifts = [(digits[q].tolist(), q) for q in range(a.n_states)]
    init = digits[a.initial].tolist()
    return NFSMPlan("product", [layer], init, lifts, f"one head per factor ({' x '.join(map(str, dims))})")


def cascade_plan(a: Automaton, *, max_cost: int | None = None) -> NFSMPlan:
    """Stacked layers from the holonomy cascade, one head per level (Prop. G.6; the cascade in docs/holonomy.md).

    Layer i's keys are all (symbol, indices of the levels above): |Σ|·Π_{j<i} n_j of them, at most
    :data:`MAX_CASCADE_KEYS`. With ``max_cost``, a cascade needing at least that many logits per step is refused.
    """
    cascade = holonomy_decomposition(a)
    dims = [int(level.n_points) for level in cascade.levels]
    cost = sum(d * d for d in dims)
    if max_cost is not None and cost >= max_cost:
        raise ConstructionError(f"the cascade needs {cost} logits per step, not fewer than {max_cost}")
    n_keys_last = a.n_symbols * int(np.prod(dims[:-1], dtype=object))
    if n_keys_last > MAX_CASCADE_KEYS:
        raise LimitExceededError(
            f"the cascade's last layer would read {n_keys_last} keys (symbol × upper indices), "
            f"over the limit of {MAX_CASCADE_KEYS}"
        )
    layers = []
    for i, d in enumerate(dims):
        keys, images = cascade.dependency(i)
        keys = np.asarray(keys, dtype=np.int64).reshape(-1, i + 1)
        radices = [a.n_symbols] + dims[:i]
        n_keys = int(np.prod(radices))
        bank = np.broadcast_to(np.arange(d), (n_keys, 1, d)).copy()  # keys never reached: identity
        code = np.zeros(len(keys), dtype=np.int64)
        for j, r in enumerate(radices):
            code = code * r + keys[:, j]
        bank[code, 0, :] = np.asarray(images, dtype=np.int64)
        layers.append(LayerTables([d], list(range(i)), bank, a.n_symbols))
    coords = np.asarray(cascade.coordinates, dtype=np.int64)
    lifts = [(coords[q].tolist(), q) for q in range(a.n_states)]
    src = f"holonomy cascade {cascade}"
    return NFSMPlan("stacked", layers, coords[a.initial].tolist(), lifts, src)


def candidate_plans(a: Automaton, heads: str, layers: str) -> list[NFSMPlan]:
    """The plans to try, in order of preference (the compiler takes the first whose exploration succeeds)."""
    if heads not in HEADS_CHOICES:
        raise SpecError(f"heads must be one of {', '.join(HEADS_CHOICES)}, got {heads!r}")
    if layers not in LAYERS_CHOICES:
        raise SpecError(f"layers must be one of {', '.join(LAYERS_CHOICES)}, got {layers!r}")
    if layers == "stacked":
        if heads == "multi":
            raise SpecError("heads='multi' and layers='stacked' cannot be combined (a cascade level is one head)")
        return [cascade_plan(a)]
    single = single_head_plan(a)
    if heads == "single" and layers in ("single", "auto"):
        plans = [single]
        if layers == "auto":
            plans = _with_cascade(a, plans)
        return sorted(plans, key=lambda p: p.cost)
    multi = []
    for make in (product_heads_plan, permutation_heads_plan):
        try:
            multi.append(make(a))
        except FsaError:
            continue
    if heads == "multi":
        if not multi:
            raise ConstructionError(
                "no multi-head plan applies: the automaton is neither a direct product nor a group automaton"
            )
        return sorted(multi, key=lambda p: p.cost)
    plans = [single] + multi
    if layers == "auto":
        plans = _with_cascade(a, plans)
    return sorted(plans, key=lambda p: p.cost)  # stable: on ties the single head wins


def _with_cascade(a: Automaton, plans: list[NFSMPlan]) -> list[NFSMPlan]:
    """Add the cascade plan when it may be cheaper (non-group automata of moderate size)."""
    if a.is_group_automaton or a.n_states > AUTO_CASCADE_MAX_STATES or a.n_states < 3:
        return plans
    try:
        return plans + [cascade_plan(a, max_cost=min(p.cost for p in plans))]
    except (FsaError, ImportError, AttributeError):
        return plans


def _permutation_action(a: Automaton) -> tuple[np.ndarray, str]:
    if a.action is not None:
        return np.asarray(a.action, dtype=np.int64), f"natural action on {a.action.shape[1]} points"
    rep = faithful_permutation_representation(a)
    return np.asarray(rep.perms, dtype=np.int64), f"{rep.source} (degree {rep.degree})"


def _base(perms: np.ndarray) -> list[int]:
    """A base of the permutation group generated by the rows of ``perms`` (sympy Schreier–Sims)."""
    from sympy.combinatorics import Permutation, PermutationGroup

    deg = perms.shape[1]
    group = PermutationGroup([Permutation(row.tolist(), size=deg) for row in perms])
    if group.order() == 1:
        return [0]
    group.schreier_sims()
    return [int(b) for b in group.base]
