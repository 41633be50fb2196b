"""The conversion of compiled weights into a trainable :class:`~fsa2rnn.nn.model.SequenceModel` (docs/theory.md,
"Learned layers"): the compiled model's states become the trained architecture's states, so compiled weights can be
compared with trained ones or used to initialize them.

**Householder, one layer** (Theorem 3 permutations, C.1 rotations, parity; also a one-level cascade): H_t =
A(x_t) H_{t−1} + B(x_t) with A(x) = C_k ⋯ C_1, C_j = I − β_j v_j v_jᵀ, is the DeltaProduct recurrence with n_h = k:

- one-hot embedding, d_model = |Σ| + n (the symbol in the first |Σ| coordinates, the readout in the last n);
- keys k_{t,j} = v_j(x_t) (unit vectors, so the layer's L2 normalization keeps them), β through the layer's own
  map β = 2·sigmoid(z): z = ±SATURATED_LOGIT where the compiled β is 2 or 0 (exact), logit(β/2) otherwise;
- values 0, except a reset row (A = 0, B = e_q): its projections commute, so the one along e_q goes last and writes
  β k vᵀ = e_q with v = 1 (docs/theory.md); a row whose B is not such a write raises;
- the state read out whole (the layer's output RMSNorm off: over dv = 1 it would return ±1): n heads of dk = n,
  dv = 1, every head's S_0 = H_0 as its one value column and query q = e_h, so head h outputs H_t[h] (an
  identity readout of S), placed by o_proj in the last n coordinates;
- the compiled decoder as the classifier: logits_q = α(⟨c_s, H⟩ − ½‖c_s‖²) for the code point c_s of the layer
  state s that reads out as q (the nearest-code rule; for hash readouts the codes are the permutations of 1..n, all
  of one norm), no norm, no MLP, and α chosen so that the cross-entropy at the code points is ≤ 1e−9.

**NFSM, one layer** (single, multihead, product plans): the compiled embedding (identity or orthogonal) in the
first K coordinates, the compiled linear map as the layer's logits (same row-major θ[k, j] layout), the start
indices as one-hot ``start_logits``, the attractors copied into the last Σ d_i coordinates, and a classifier that
scores a state by α times the number of heads whose index matches its configuration (the right state scores r·α,
any other at most (r − 1)·α).

**PD-SSM, one layer**: nn/pdssm_from_compiled.py (a dictionary of one matrix per symbol, D = 1, the state copied
to the classifier).

**What does not map.** Cascade wiring: layer i of a compiled cascade (Householder Theorem 4 with several levels,
Theorem 6's two layers, stacked NFSMs) reads the row key (x_t, s_0(t−1), …, s_{i−1}(t−1)) — the *decoded*
discrete states of the layers above at the previous step, looked up in a table of one transition per key. A
SequenceModel's layer i reads the continuous output of layer i − 1 at the same step through norm, MLP and linear
maps; emulating the decode-and-lookup exactly would need the MLP to implement a nearest-code classifier and a
product-key table, which these weights do not provide. The diagonal target (complex unit-modulus λ per symbol) maps
onto none of the layers either: SelectiveDiagonal's eigenvalues are real and DLR's are input-independent. Readouts
that send two code points to one automaton state (a permutation automaton whose states are fewer than its group's
elements) have no linear classifier with ≈ 0 loss. All of these raise ConstructionError naming the reason.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..compiler.model import CompiledModel
from ..compiler.program import half_norms
from ..compiler.registry import program_of, target_of
from ..compiler.targets.lrnn.program import HashReadout, LinearLayer, LinearRNNProgram
from ..compiler.targets.nfsm.program import NFSMProgram
from ..fsa.errors import ConstructionError
from .layers import SATURATED_LOGIT

if TYPE_CHECKING:  # SequenceModel.from_compiled passes its class: no import cycle
    from .model import SequenceModel

#: the cross-entropy at the compiled code points is at most this
CE_BOUND = 1e-9
#: pairwise distances between code points are computed for at most this many codes (nearest readouts)
MAX_CODES = 20000


def sequence_model_from_compiled(
    cls: type[SequenceModel], model: CompiledModel | str | Path, *, dtype: torch.dtype = torch.float64
) -> SequenceModel:
    """A ``cls`` (SequenceModel) with the compiled weights (a CompiledModel or a model file; module docstring), in
    eval mode: the conversion its target names (``sequence_model`` in the registry, called with ``cls``, the model
    and the dtype); ConstructionError where they do not map."""
    if not isinstance(model, CompiledModel):
        model = CompiledModel.load(model)
    target = target_of(model)
    convert = target.load("sequence_model")
    if convert is None:
        raise ConstructionError(f"target {target.name!r} does not map onto a SequenceModel layer")
    return convert(cls, model, dtype)


def _one_layer(model: CompiledModel, expect: type) -> Any:
    """The program of a one-layer ``model`` of the ``expect`` class; ConstructionError for a cascade."""
    program = program_of(model, expect=expect)
    if len(program.layers) != 1:
        raise ConstructionError(
            f"{program.target} model with {len(program.layers)} layers ({model.construction}): cascade wiring does "
            "not map onto a SequenceModel — each lower layer reads the decoded states of the layers above at step t−1 "
            "through a lookup table, not the upper layer's continuous output"
        )
    return program


def householder_sequence_model(
    cls: type[SequenceModel], model: CompiledModel, dtype: torch.dtype = torch.float64
) -> SequenceModel:
    """A one-layer Householder model as a DeltaProduct ``cls`` (SequenceModel; module docstring)."""
    return _householder(cls, _one_layer(model, LinearRNNProgram), dtype)


def nfsm_sequence_model(
    cls: type[SequenceModel], model: CompiledModel, dtype: torch.dtype = torch.float64
) -> SequenceModel:
    """A one-layer NFSM model as an NFSM-layer ``cls`` (SequenceModel; module docstring)."""
    return _nfsm(cls, _one_layer(model, NFSMProgram), dtype)


def diagonal_sequence_model(
    cls: type[SequenceModel], model: CompiledModel, dtype: torch.dtype = torch.float64
) -> SequenceModel:
    """The diagonal target maps onto no SequenceModel layer (module docstring): ConstructionError saying why."""
    p = _one_layer(model, LinearRNNProgram)
    raise ConstructionError(
        f"target {p.target!r} does not map onto a SequenceModel layer: its complex per-symbol eigenvalues are "
        "neither real (SelectiveDiagonal) nor input-independent (DLR)"
    )


# ---------------------------------------------------------------------------------------------------- Householder
def _householder(cls: type[SequenceModel], p: LinearRNNProgram, dtype: torch.dtype) -> SequenceModel:
    entry = p.layers[0]
    name, n, t = f"{entry.index}", entry.width, entry.stored
    n_sym = p.n_symbols
    rows = np.asarray(t["keys"])[:, 0]
    if sorted(rows.tolist()) != list(range(n_sym)):
        raise ConstructionError(f"layer {name}: rows are not one per symbol")
    beta = np.zeros((n_sym,) + t["beta"].shape[1:])
    vecs = np.zeros((n_sym,) + t["v"].shape[1:])
    values = np.zeros(beta.shape)
    for r, x in enumerate(rows.tolist()):
        beta[x], vecs[x], values[x] = _row_factors(name, x, t["beta"][r], t["v"][r], entry.b[r], entry.a[r])
    k = beta.shape[1]
    codes, code_states = _gh_codes(entry)
    classes = _code_classes(p, code_states)

    d_model = n_sym + n
    net = cls(
        n_sym,
        p.n_states,
        "deltaproduct",
        1,
        d_model,
        layer_args=dict(
            heads=n, head_dim=n, value_dim=1, n_h=k, beta_range=[0, 2], short_conv=False, output_norm=False
        ),
        mlp_ratio=0,
        norm="none",
    ).to(dtype)
    layer = net.blocks[0].layer
    f = dict(dtype=dtype)
    z = np.where(beta >= 2, SATURATED_LOGIT, np.where(beta <= 0, -SATURATED_LOGIT, _logit(beta / 2)))
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()
        net.embedding.weight[:, :n_sym] = torch.eye(n_sym, **f)
        wq = layer.q_proj.weight.view(n, n, d_model)  # (head, dk, d_model): q_h = e_h for every symbol
        wq[torch.arange(n), torch.arange(n), :n_sym] = 1
        # (n_h, H, dk, d_model) ← v_j(x) for every head; (n_h, H, dv=1, d_model) ← value_j(x); β logits
        layer.k_proj.weight.view(k, n, n, d_model)[..., :n_sym] = torch.tensor(vecs, **f).permute(1, 2, 0)[:, None]
        layer.v_proj.weight.view(k, n, 1, d_model)[..., 0, :n_sym] = torch.tensor(values, **f).T[:, None]
        layer.b_proj.weight.view(k, n, d_model)[..., :n_sym] = torch.tensor(z, **f).T[:, None]
        layer.h0[:, :, 0] = torch.tensor(entry.h0, **f)
        layer.o_proj.weight[n_sym + torch.arange(n), torch.arange(n)] = 1
        alpha = _alpha(len(codes), _code_gap(codes, isinstance(entry.readout, HashReadout)))
        c = torch.tensor(codes, **f)
        net.classifier.weight.fill_(0)
        net.classifier.bias.fill_(-alpha * float((c * c).sum(-1).max()) - 1e3 * alpha)  # states with no code point
        net.classifier.weight[classes, n_sym:] = alpha * c
        net.classifier.bias[classes] = -alpha * half_norms(c)
    return net.eval()


def _row_factors(
    name: str, x: int, beta: np.ndarray, v: np.ndarray, b: np.ndarray, a: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(β, keys, values) of one symbol's n_h delta steps: B = 0, or a reset written by the last step."""
    values = np.zeros_like(beta)
    if not np.any(b):
        return beta, v, values
    # B ≠ 0: a step whose key is parallel to B goes last (if reordering keeps the product) and writes B
    norm = np.linalg.norm(b)
    for j in np.flatnonzero(beta > 0):
        if abs(abs(v[j] @ b) - norm) > 1e-12:
            continue
        order = [i for i in range(len(beta)) if i != j] + [int(j)]
        prod = np.eye(len(b))
        for i in order:
            prod = (np.eye(len(b)) - beta[i] * np.outer(v[i], v[i])) @ prod
        if np.allclose(prod, a, atol=1e-12):
            values[-1] = (v[j] @ b) / beta[j]
            return beta[order], v[order], values
    raise ConstructionError(
        f"layer {name}, symbol {x}: B(x) = {b.tolist()} is not a write β k vᵀ along the key of a last delta step"
    )


def _gh_codes(entry: LinearLayer) -> tuple[np.ndarray, np.ndarray]:
    """Code points (S, n) of the layer's states and the layer state of each (copies: the program's are read-only)."""
    ro = entry.readout
    if isinstance(ro, HashReadout):  # the permutations of 1..n of the known keys Σ_i (h_i − 1) nⁱ
        return ro.code_points().astype(np.float64), np.array(ro.values, dtype=np.int64)
    return np.array(ro.codes, dtype=np.float64), np.array(ro.code_states, dtype=np.int64)


def _code_classes(p: LinearRNNProgram, layer_states: np.ndarray) -> torch.Tensor:
    """The automaton state each code point reads out as (the final readout table); one code per state."""
    lut = dict(zip(p.final_keys.tolist(), p.final_states.tolist()))
    classes = np.array([lut.get(int(s), -1) for s in layer_states])
    return _injective(classes)


def _injective(classes: np.ndarray) -> torch.Tensor:
    if np.any(classes < 0):
        raise ConstructionError("a code point reads out as no automaton state")
    if len(np.unique(classes)) != len(classes):
        raise ConstructionError(
            "several code points read out as one automaton state; a linear classifier cannot take their maximum "
            "(compile the word problem, or a representation whose code points are the states)"
        )
    return torch.from_numpy(classes)


def _code_gap(codes: np.ndarray, hash_readout: bool) -> float:
    """min over pairs of ½‖c_s − c_s'‖²: the margin of the nearest-code scores at a code point."""
    if hash_readout:
        return 1.0  # permutations of 1..n: the closest pairs differ by swapping two adjacent values
    if len(codes) > MAX_CODES:
        raise ConstructionError(f"{len(codes)} code points exceed the {MAX_CODES} the classifier scaling measures")
    if len(codes) < 2:
        return 1.0
    c = torch.from_numpy(codes)
    d2 = torch.cdist(c, c).pow(2)
    d2.fill_diagonal_(float("inf"))
    return 0.5 * float(d2.min())


def _alpha(n_codes: int, gap: float) -> float:
    """Scale α with (n − 1)·exp(−α·gap) ≤ CE_BOUND, so the cross-entropy at the code points is ≤ CE_BOUND."""
    return (math.log(max(n_codes - 1, 1)) - math.log(CE_BOUND)) / gap


def _logit(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(p) - np.log1p(-p)


# ---------------------------------------------------------------------------------------------------- NFSM
def _nfsm(cls: type[SequenceModel], p: NFSMProgram, dtype: torch.dtype) -> SequenceModel:
    spec = p.layers[0]
    heads = list(spec.heads)
    emb, weight, bias = spec.embedding, spec.weight, spec.bias
    n_sym, k_dim = emb.shape
    if n_sym != p.n_symbols:
        raise ConstructionError(f"NFSM layer 0 has {n_sym} keys for {p.n_symbols} symbols")
    width = sum(heads)
    d_model = k_dim + width
    net = cls(
        n_sym, p.n_states, "nfsm", 1, d_model, layer_args=dict(heads=heads), mlp_ratio=0, norm="none"
    ).to(dtype)
    layer = net.blocks[0].layer
    f = dict(dtype=dtype)
    # configurations: mixed radix, first head most significant
    codes = np.array(p.readout_codes, dtype=np.int64)
    radices = list(p.dims)
    idx = np.zeros((len(codes), len(radices)), dtype=np.int64)
    rest = codes.copy()
    for i in range(len(radices) - 1, -1, -1):
        idx[:, i], rest = rest % radices[i], rest // radices[i]
    classes = _injective(np.array(p.readout_states, dtype=np.int64))
    offsets = np.concatenate([[0], np.cumsum(heads)[:-1]])
    alpha = _alpha(p.n_states, 1.0)
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()
        net.embedding.weight[:, :k_dim] = torch.tensor(emb, **f)
        layer.logits.weight[:, :k_dim] = torch.tensor(weight, **f)
        layer.logits.bias.copy_(torch.tensor(bias, **f))
        layer.start_logits[torch.arange(len(heads)), torch.tensor(spec.initial)] = 1
        layer.out_proj.weight[k_dim + torch.arange(width), torch.arange(width)] = 1
        cols = torch.from_numpy(k_dim + offsets[None, :] + idx)  # (N, r) feature column of each head's index
        net.classifier.weight[classes[:, None], cols] = alpha
        net.classifier.bias.fill_(-alpha * len(heads) - 1e3 * alpha)  # states with no configuration
        net.classifier.bias[classes] = -alpha * len(heads)
    return net.eval()
