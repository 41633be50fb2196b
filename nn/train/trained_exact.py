"""Whether a trained one-layer NFSM realizes its task's automaton at every length (Prop. G.1's argument), decided on
its tables: the check ``fsa2rnn train``/``eval`` record as ``exact`` and ``verify --eta`` on a trained NFSM uses
(fsa2rnn.realize.trained_robust)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..model import SequenceModel
from ..tasks import Task

#: reachable (indices, symbol, state) triples the search visits at most
MAX_TRIPLES = 1_000_000


@torch.no_grad()
def nfsm_tables_exact(model: SequenceModel, task: Task) -> dict[str, Any]:
    """Whether a one-layer NFSM model realizes the task's automaton at every length (Prop. G.1's argument).

    In eval mode the model's output at position t is a function of the head indices c_t and the symbol x_t alone
    (the embedding of x_t plus the NFSM's output for c_t, then position-wise MLP, norm and classifier), and
    c_t = σ_{x_t}(c_{t−1}) with the tables σ_x read off the logits (:meth:`SequenceModel.symbol_transitions`). A
    breadth-first search visits every triple (c_t, x_t, q_t) reachable together with the automaton's state q_t; the
    model is run on a shortest word reaching each, and its prediction there is compared with the class of q_t. All
    right ⇒ right at every position of every word; else the word is a witness. Returns ``{exact, triples, witness,
    reason}`` (exact None when the check does not apply).
    """
    a = task.automaton
    cfg = model.config
    if cfg.layer != "nfsm" or cfg.n_layers != 1 or a is None or getattr(task, "tokens_per_step", 1) != 1:
        why = "the check covers one-layer NFSM models on automaton tasks with one token per symbol"
        return {"exact": None, "triples": 0, "witness": None, "reason": why}
    if getattr(model.blocks[0].layer, "conv", None) is not None:
        why = "the NFSM's convolution makes its tables depend on the symbol before"
        return {"exact": None, "triples": 0, "witness": None, "reason": why}
    k = a.n_symbols
    tables, start = model.nfsm_tables(k)  # (k, H, d_max), (H,)
    trans = np.asarray(a.transitions)
    classes = task.state_class.numpy() if hasattr(task, "state_class") else np.arange(a.n_states)
    heads = np.arange(tables.shape[1])
    start_pair = (tuple(start.tolist()), int(a.initial))
    parent: dict[tuple, tuple] = {}
    expanded: set[tuple] = set()
    frontier, triples = [start_pair], []
    while frontier:
        nxt = []
        for c, q in frontier:
            expanded.add((c, q))
            for x in range(k):
                c2 = tuple(tables[x, heads, list(c)].tolist())
                key = (c2, x, int(trans[x, q]))
                if key not in parent:
                    parent[key] = (c, q, x)
                    triples.append(key)
                    if (c2, key[2]) not in expanded:
                        nxt.append((c2, key[2]))
        if len(triples) > MAX_TRIPLES:
            return {"exact": None, "triples": len(triples), "witness": None, "reason": "too many configurations"}
        frontier = list(dict.fromkeys(nxt))
    # a shortest word for every triple, from the parent links (first visit = shortest)
    via: dict[tuple, list[int]] = {}
    first_of_pair: dict[tuple, tuple] = {}
    for key in triples:
        first_of_pair.setdefault((key[0], key[2]), key)
    words = []
    for key in triples:
        c, q, x = parent[key]
        prev = first_of_pair.get((c, q))
        word = ([] if (c, q) == start_pair else via[prev]) + [x]
        via[key] = word
        words.append(word)
    lengths = torch.tensor([len(w) for w in words])
    ids = torch.zeros(len(words), int(lengths.max()), dtype=torch.long)
    for i, w in enumerate(words):
        ids[i, : len(w)] = torch.tensor(w)
    preds = model.predict_states(ids, lengths).cpu()
    got = preds[torch.arange(len(words)), lengths - 1].numpy()
    want = classes[np.array([key[2] for key in triples])]
    bad = np.flatnonzero(got != want)
    witness = [a.symbols[s] for s in words[int(bad[0])]] if len(bad) else None
    margin = _table_margin(model, k, sorted({c for c, _ in expanded}))
    return {"exact": not len(bad), "triples": len(triples), "witness": witness, "margin": margin, "reason": None}


def _table_margin(model: SequenceModel, k: int, configs: list[tuple]) -> float:
    """The smallest logit margin (best − second best) over the table rows that the reachable configurations use:
    the slack the argmax has against rounding (docs/theory.md, "The margin certificate")."""
    block = model.blocks[0]
    theta = block.layer.head_logits(block.norm1(model.embedding.weight[:k])).double().cpu()  # (k, H, d, d)
    used = torch.tensor(configs, dtype=torch.long)  # (C, H)
    rows = theta[:, torch.arange(theta.shape[1])[None, :], used]  # (k, C, H, d)
    top = rows.topk(2, dim=-1).values if rows.shape[-1] > 1 else torch.cat([rows, rows - float("inf")], -1)
    return float((top[..., 0] - top[..., 1]).min())


__all__ = ["MAX_TRIPLES", "nfsm_tables_exact"]
