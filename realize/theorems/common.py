"""Helpers shared by the registry's checks: compile-check-run (with the exact checker shown to reject a near miss),
the float orbit of a learned layer along x^k, a tiny fit to counting.

The checkers are called through their modules' attributes (``exact.exact_check``, ``extract.extract_and_compare``)
so that the registry runs exactly the code a user's ``fsa2rnn verify`` would."""

from __future__ import annotations

import copy
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ...compiler.model import CompiledModel
from ...compiler.registry import target_of
from ...compiler.targets.lrnn import exact as ec
from ...fsa.automaton import Automaton
from ...fsa.errors import ModelFileError
from ...nn.model import SequenceModel
from ...nn.train.config import TrainConfig, load_run
from ...nn.train.trainer import train
from ..extract import extract_and_compare
from ..verify import verify_model
from .claims import require

#: the extraction module, through which the checks call (a check of the check patches its functions there)
ex = sys.modules[extract_and_compare.__module__]


def near_miss(automaton: Automaton) -> Automaton:
    """The automaton with one reachable transition redirected: δ_x(q0) for the first symbol x whose image can change
    (same states and symbols, so a model of the original must be rejected against it)."""
    t = np.array(automaton.transitions, copy=True)
    q0 = automaton.initial
    x = 0
    t[x, q0] = (t[x, q0] + 1) % automaton.n_states
    return automaton.replace(transitions=t, name=f"{automaton.name}~")


def ulp_near_misses(model: CompiledModel) -> list[tuple[str, CompiledModel]]:
    """The smallest changes of the weights: per float tensor of the model, the copy with its first nonzero entry
    moved up by one ulp (``np.nextafter``), named ``tensor[index]``."""
    out = []
    for name in sorted(model.tensors):
        t = np.asarray(model.tensors[name])
        nz = np.flatnonzero(t.reshape(-1)) if t.dtype.kind == "f" else []
        if len(nz):
            flat = t.reshape(-1).copy()
            flat[nz[0]] = np.nextafter(flat[nz[0]], np.inf)
            miss = copy.deepcopy(model)
            miss.tensors[name] = flat.reshape(t.shape)
            out.append((f"{name}[{int(nz[0])}]", miss.seal()))
    return out


def exact_two_sided(model: CompiledModel, automaton: Automaton) -> str:
    """The exact check accepts ``model`` against its automaton and rejects it against :func:`near_miss` (a target
    whose tables are extracted exactly, the NFSM: those tables, realize/extract.py; a linear RNN:
    compiler/targets/lrnn/exact.py); evidence. A linear RNN's check must also reject every :func:`ulp_near_misses`
    copy (one weight one ulp off: a checker that compares within any tolerance accepts them)."""
    name = automaton.name or "the automaton"
    miss = near_miss(automaton)
    if target_of(model).extraction is not None:
        ok = ex.extract_and_compare(model, automaton)
        require(bool(ok["match"]), f"{name}: the extracted tables do not realize it: {ok['statement']}")
        bad = ex.extract_and_compare(model, miss)
        require(not bad["match"], f"{name}: the tables are accepted against a near miss (δ_x(q0) changed)")
        return "tables realize it, near miss rejected"
    ok = ec.exact_check(model, automaton)
    require(bool(ok["ok"]), f"{name}: the exact check fails: {ok['failure']}")
    bad = ec.exact_check(model, miss)
    require(not bad["ok"], f"{name}: the exact check accepts the model against a near miss (δ_x(q0) changed)")
    ulps = ulp_near_misses(model)
    for where, off in ulps:
        try:
            accepted = bool(ec.exact_check(off, automaton)["ok"])
        except (ec.ExactnessError, ModelFileError):
            accepted = False
        require(not accepted, f"{name}: the exact check accepts the model with {where} one ulp off")
    return (
        f"{ok['transitions_checked']} (state, symbol) steps = δ, near miss rejected, {len(ulps)} one-ulp weight "
        "near misses rejected"
    )


def float_run(model: CompiledModel, automaton: Automaton, *, length: int = 256, n_words: int = 8) -> str:
    """A float64 run on ``n_words`` random words of ``length`` (realize/verify.py): every readout right."""
    rep = verify_model(model, automaton, dtype="float64", length=length, n_words=n_words)
    require(bool(rep["ok"]), f"{automaton.name}: verify failed (first failing length {rep['first_failing_length']})")
    return f"{n_words}×{length} float64 readouts right ({run_path(rep)})"


def run_path(rep: dict[str, Any]) -> str:
    """Which kernel a float run of verify_model used: the torch module as `fsa2rnn run` runs it by default."""
    scan = rep.get("scan")
    return "the default `fsa2rnn run` path" + (f", {scan} scan" if scan else "")


def compiled_and_run(model: CompiledModel, automaton: Automaton, *, length: int = 256, n_words: int = 8) -> str:
    """The exact check (two-sided) and the float64 run, as one line (used where only the float run is the part)."""
    return f"{exact_two_sided(model, automaton)}; {float_run(model, automaton, length=length, n_words=n_words)}"


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


#: what ``impl="auto"`` runs on this machine's CPU for the learned layers the impossibility entries use
DEFAULT_KERNELS = "Mamba: the fused torch selective scan in time chunks; DeltaNet: the chunked torch delta rule"


@torch.no_grad()
def default_kernel_deviation(model: Any, symbol: int, *, length: int) -> float:
    """The largest relative difference between ``model``'s logits along symbol^length computed by the kernels the
    library runs by default (every layer's ``impl`` as built, "auto") and by the sequential references
    (``impl="naive"``), both in float64: one call, so the default kernel's own time chunks hand their state on."""
    fast, ref = copy.deepcopy(model).double().eval(), copy.deepcopy(model).double().eval()
    for block in ref.blocks:
        block.layer.impl = "naive"
    x = torch.full((1, length), symbol, dtype=torch.long)
    got, want = fast(x), ref(x)
    return float((got - want).abs().max() / want.abs().max().clamp(min=1e-300))


def counter(modulus: int) -> Automaton:
    """The number of 1s read so far modulo ``modulus``, on words of 0s and 1s (parity for 2)."""
    step = np.arange(modulus)
    return Automaton(np.stack([step, np.roll(step, -1)]), states=[str(v) for v in step], symbols=["0", "1"],
                     initial=0, name=f"count1 mod {modulus}")  # fmt: skip


def fit_until(
    layer: str,
    modulus: int,
    *,
    max_steps: int,
    seed: int,
    length: int = 8,
    lr: float = 1e-2,
    round_steps: int = 100,
    **flags: Any,
) -> tuple[SequenceModel, float, int, float]:
    """A ``layer`` model trained by fsa2rnn's trainer (``fsa2rnn train``'s settings ``flags``: ``layers``,
    ``d_model``, ``eig``, …) on counting 1s modulo ``modulus`` on words of ``length``, validated every
    ``round_steps`` steps and stopped once a validation reads every word right, or after ``max_steps``; then its
    token accuracy on 256 fresh words of that length: (model, accuracy, steps, seconds). The run lives in a
    temporary directory."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "count.json"
        counter(modulus).save(spec)
        cfg = TrainConfig(task=str(spec), model=layer, train_length=f"{length}..{length}", steps=max_steps, batch=32,
                          lr=lr, seed=seed, val_every=round_steps, early_stop=1, checkpoint_every=max_steps,
                          eval_lengths=[length], samples=16, lmax=False, progress=False, **flags)  # fmt: skip
        result = train(cfg, Path(tmp) / "run")
        model, _, _ = load_run(Path(tmp) / "run")
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        x = torch.randint(0, 2, (256, length), generator=g)
        acc = float((model(x).argmax(-1) == x.cumsum(1) % modulus).float().mean())
    return model, acc, int(result["steps"]), time.perf_counter() - start


@torch.no_grad()
def layer_eigenvalues(model: Any, *, n_inputs: int, seed: int, scale: float = 3.0) -> list[np.ndarray]:
    """Per layer of a SequenceModel: the eigenvalues (complex) of transition(x) over ``n_inputs`` random inputs
    x ~ N(0, scale²) of width d_model (every layer's input space, so deeper layers are covered too)."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for block in model.blocks:
        x = torch.randn(n_inputs, model.config.d_model, generator=g, dtype=torch.float64) * scale
        a = block.layer.double().transition(x).to(torch.float64)
        block.layer.float()
        if a.is_complex() or a.shape[-1] != a.shape[-2] or a.dim() == 3 and model.config.layer == "mamba":
            out.append(a.reshape(-1).numpy().astype(np.complex128))
        else:
            out.append(torch.linalg.eigvals(a.reshape(-1, a.shape[-2], a.shape[-1])).reshape(-1).numpy())
    return out


def eigenvalues(model: Any, symbol: int) -> np.ndarray:
    """Eigenvalues of the first layer's A(x) for one symbol (read with no history), complex: the entries of a
    diagonal transition (mamba), the eigenvalues of the per-head matrices otherwise."""
    a = model.symbol_transitions()[symbol].detach().to(torch.float64)
    if model.config.layer == "mamba":
        return a.reshape(-1).numpy().astype(np.complex128)
    return torch.linalg.eigvals(a.reshape(-1, a.shape[-2], a.shape[-1])).reshape(-1).numpy()


def learned(
    layer: str,
    *,
    seed: int,
    vocab: int = 2,
    n_classes: int = 2,
    d_model: int = 16,
    n_layers: int = 1,
    mlp_ratio: float = 0,
    **layer_args: Any,
) -> Any:
    """A small SequenceModel of ``n_layers`` ``layer`` blocks (seeded init, float32, no MLP by default)."""
    torch.manual_seed(seed)
    return SequenceModel(vocab, n_classes, layer, n_layers, d_model, layer_args=layer_args, mlp_ratio=mlp_ratio)
