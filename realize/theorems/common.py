"""Helpers shared by the registry's checks: compile-check-run, the float orbit of a learned layer along x^k, a tiny
fit to parity."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.fsa.automaton import Automaton

from . import require


def compiled_and_run(model: CompiledModel, automaton: Automaton, *, length: int = 256, n_words: int = 8) -> str:
    """Require the compile-time exact check and a float64 run on random words (realize/verify.py); evidence."""
    from fsa2rnn.realize.verify import verify_model

    require(bool(model.summary.get("verified")), f"{automaton.name or 'the automaton'}: the exact check failed")
    rep = verify_model(model, automaton, dtype="float64", length=length, n_words=n_words)
    require(bool(rep["ok"]), f"{automaton.name}: verify failed (first failing length {rep['first_failing_length']})")
    return f"{model.target}/{model.construction}: exact check ok, {n_words}×{length} symbols right"


def _flat(state: Any) -> torch.Tensor:
    """Every tensor of a (nested) layer state, flattened into one float64 vector."""
    out: list[torch.Tensor] = []

    def rec(s: Any) -> None:
        if torch.is_tensor(s):
            out.append(s.detach().reshape(-1).to(torch.float64))
        elif isinstance(s, dict):
            for k in sorted(s):
                rec(s[k])
        elif isinstance(s, (list, tuple)):
            for v in s:
                rec(v)

    rec(state)
    return torch.cat(out) if out else torch.zeros(0, dtype=torch.float64)


@torch.no_grad()
def orbit(model: Any, symbol: int, *, chunk: int, budget: int) -> dict[str, Any]:
    """The float orbit of a model reading x^k (x = ``symbol``) in chunks of ``chunk`` symbols, up to ``budget``:
    ``{repeat: (t, p) | None, outputs: the predictions of the last period (or chunk), change: ‖S_last − S_prev‖ /
    ‖S_last‖}``. ``repeat``: the whole state after chunk t/chunk recurs bitwise p chunks later — from then on the
    chunked evaluation, a deterministic function of (state, chunk), repeats every p·chunk symbols forever."""
    was = model.training
    model.eval()
    try:
        ones = torch.full((1, chunk), symbol, dtype=torch.long)
        seen: dict[bytes, int] = {}
        outputs: list[torch.Tensor] = []
        state, prev = None, None
        for j in range(max(1, budget // chunk)):
            logits, state = model(ones, state, True)
            outputs.append(logits.argmax(-1)[0])
            flat = _flat(state)
            key = flat.numpy().tobytes()
            if key in seen:
                p = j - seen[key]
                return {"repeat": ((seen[key] + 1) * chunk, p), "outputs": torch.cat(outputs[-p:]), "change": 0.0}
            seen[key] = j
            change = None if prev is None else float((flat - prev).norm() / flat.norm().clamp(min=1e-300))
            prev = flat
        return {"repeat": None, "outputs": outputs[-1], "change": change}
    finally:
        model.train(was)


def fit_counting(model: Any, modulus: int, *, steps: int, seed: int, length: int = 8, lr: float = 3e-3) -> float:
    """Train ``model`` a few steps on counting the 1s of random 0/1 words modulo ``modulus`` (parity for 2);
    returns the token accuracy on fresh words of the same length."""
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        x = torch.randint(0, 2, (32, length), generator=g)
        loss = torch.nn.functional.cross_entropy(
            model(x).reshape(-1, model.config.n_classes), (x.cumsum(1) % modulus).reshape(-1)
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        x = torch.randint(0, 2, (256, length), generator=g)
        return float((model(x).argmax(-1) == x.cumsum(1) % modulus).float().mean())


def eigenvalues(model: Any, symbol: int) -> np.ndarray:
    """Eigenvalues of the first layer's A(x) for one symbol (read with no history), complex: the entries of a
    diagonal transition (mamba), the eigenvalues of the per-head matrices otherwise."""
    a = model.symbol_transitions()[symbol].detach().to(torch.float64)
    if model.config.layer == "mamba":
        return a.reshape(-1).numpy().astype(np.complex128)
    return torch.linalg.eigvals(a.reshape(-1, a.shape[-2], a.shape[-1])).reshape(-1).numpy()


def learned(layer: str, *, seed: int, vocab: int = 2, n_classes: int = 2, d_model: int = 16, **layer_args: Any) -> Any:
    """A small SequenceModel with one ``layer`` (seeded init, float32, no MLP)."""
    from fsa2rnn.nn.model import SequenceModel

    torch.manual_seed(seed)
    return SequenceModel(vocab, n_classes, layer, 1, d_model, layer_args=layer_args, mlp_ratio=0)
