"""The trainer of a SequenceModel: AdamW, cosine schedule after a linear warmup, gradient clipping, the loss on the
judged positions normalized by their global number, bf16 autocast on GPU, early stopping, resumable checkpoints,
data parallel under torchrun (distributed.py).

Determinism: the batch of step s is drawn from a torch Generator seeded by (seed, s), and torch's global generator
(Gumbel noise, dropout) is reseeded by (seed, s) before every step, so a run never carries random state: the same
config gives the same metrics on CPU, and a run resumed from its checkpoint (weights, optimizer moments, step and
early-stop counter) continues exactly as if it had never stopped.

A task with an answer readout (Brandoit et al.'s TSO_N; nn/model.py, nn/tasks/tso.py) is trained as the authors'
``_answer_term``: the loss (plain, first-error or the arm's) sees the state logits with the states as targets at every
position, '?' included, and the cross-entropy of the answer logits at each word's last position is added at full
weight from step 0, in both arms and both phases (``answer_term``; off: the answer replaces the state target at '?').

A run directory holds ``config.json`` (the TrainConfig, the ModelConfig and the task), ``model.safetensors`` (the
last checkpoint), ``metrics.jsonl`` (one record per logged step: ``step``, ``loss``, ``accuracy`` — R² for
regression — ``lr``, ``tokens_per_s``, and at validation steps ``val_token_accuracy``/``val_sequence_accuracy``),
and after training ``eval.json`` and ``curves.png``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from ...fsa import progress, signals
from ...fsa.errors import Interrupted, SpecError
from ...fsa.io import atomic_write_text, remove_staged_leftovers
from ..layers.nfsm import NFSM
from ..limits import check_train
from ..model import SequenceModel
from ..tasks import Batch, Task
from .checkpoint import load_checkpoint, restore, save_checkpoint
from .config import (
    TrainConfig,
    check_run_plugin,
    head_family_of,
    model_config,
    read_run_record,
    run_record,
    task_of,
)
from .distributed import World, all_sum, barrier, close_world, init_world, set_rows, use_global_batch_randomness
from .init_from import init_architecture, load_init
from .objectives import (
    ANCHOR_WEIGHT,
    RELEASE_ACCURACY,
    RELEASE_PATIENCE,
    Anchor,
    balanced_ce,
    explore_scale,
    first_error,
    frontier_excess,
)
from .plots import plot_curves, run_title
from .run_eval import evaluate_run_model
from .runfiles import (
    ALL_RUN_FILES,
    CONFIG,
    CURVES,
    EVAL,
    METRICS,
    MODEL,
    has_checkpoint,
    read_metrics,
    read_text,
    stream_seed,
)
from .runfiles import DATA as _DATA
from .runfiles import NOISE as _NOISE
from .runfiles import VAL as _VAL
from .runlock import run_lock


def lr_at(cfg: TrainConfig, step: int) -> float:
    """Linear warmup over ``warmup`` × steps, then cosine from lr to min_lr (step counted from 0)."""
    warm = max(1, round(cfg.warmup * cfg.steps)) if cfg.warmup > 0 else 0
    if step < warm:
        return cfg.lr * (step + 1) / warm
    span = max(1, cfg.steps - warm)
    floor = min(cfg.min_lr, cfg.lr)
    return floor + (cfg.lr - floor) * 0.5 * (1.0 + math.cos(math.pi * min(step - warm, span) / span))


def first_error_weights(logits: torch.Tensor, batch: Batch, rate: float = 3.0) -> torch.Tensor:
    """w_t = 1 up to each word's first wrong prediction t*, exp(−rate·(t − t*)) after it (Brandoit et al.'s
    weighting: once the state is wrong, later positions say little about the table rows they read)."""
    with torch.no_grad():
        wrong = (logits.argmax(-1) != batch.targets) & batch.mask
        t = logits.shape[1]
        first = torch.where(
            wrong.any(1), wrong.to(torch.int8).argmax(1), torch.full_like(wrong[:, 0], t, dtype=torch.long)
        )
        pos = torch.arange(t, device=logits.device)[None, :]
        return torch.exp(-rate * (pos - first[:, None]).clamp(min=0).to(logits.dtype))


def param_groups(model: torch.nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """Weight decay on matrices only (not on biases, norms, start states h0 and NFSM start logits)."""
    decay, keep = [], []
    for name, p in model.named_parameters():
        plain = p.ndim < 2 or name.endswith(("h0", "start_logits"))
        (keep if plain else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": keep, "weight_decay": 0.0}]


class StopRequest:
    """Ctrl-C (SIGINT) and SIGTERM set :attr:`requested` (and :attr:`signum`) instead of interrupting a step
    halfway; a second Ctrl-C interrupts at once. The previous handlers come back with :meth:`restore`. Outside the
    main thread: inert."""

    def __init__(self) -> None:
        self.requested = False
        self.signum = int(signal.SIGINT)
        self.previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.previous[sig] = signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested and signum == signal.SIGINT:
            raise signals.Stopped(signum)
        self.requested, self.signum = True, int(signum)

    def restore(self) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
        self.previous = {}


class Prepared:
    """Everything a run needs that can be checked before any file is written or any step is taken."""

    def __init__(
        self,
        cfg: TrainConfig,
        out: str | Path,
        *,
        resume: bool,
        given: set[str] | None = None,
        plugins: tuple[str, ...] = (),
        allow_changed: bool = False,
    ) -> None:
        """``plugins``: the plug-in import paths the command line named (a resumed run's recorded plug-in is
        imported only if named there or installed; nn/plugins.py), ``allow_changed``: accept a changed plug-in
        source on resume."""
        self.task: Task = task_of(cfg)
        cfg = init_architecture(cfg, self.task, given)  # with --init-from, the compiled model's architecture
        self.cfg, self.out, self.resume = cfg, Path(out), resume
        self.lengths = cfg.train_lengths(self.task)
        check_train(cfg.to_dict(), self.lengths[1])  # tokens per step, activations, attention: before any tensor
        stored = None
        if resume and has_checkpoint(self.out) and (self.out / CONFIG).exists():
            stored = read_run_record(read_text(self.out / CONFIG), str(self.out / CONFIG))
            check_run_plugin(stored[1], repr(str(self.out)), plugins, allow_changed)  # before any import
        self.mcfg = model_config(cfg, self.task)
        if stored is not None and allow_changed and stored[1].plugin and self.mcfg.plugin:
            self.mcfg.plugin = stored[1].plugin  # the run keeps its record; the change was accepted
        SequenceModel.from_config(self.mcfg).check_plugin()  # a bad architecture or plug-in fails here
        self.task.sample(2, self.lengths, torch.Generator().manual_seed(0))  # a length the task refuses fails here
        if cfg.device.startswith("cuda") and not torch.cuda.is_available():
            raise SpecError(f"--device {cfg.device}: no CUDA device is available")
        if cfg.device != "cpu" and not cfg.device.startswith("cuda"):
            raise SpecError(f"--device must be cpu or cuda, got {cfg.device!r}")
        if self.out.exists() and not self.out.is_dir():
            raise SpecError(f"--out {str(self.out)!r} exists and is not a directory")
        self.header: dict[str, Any] | None = None
        self.tensors: dict[str, torch.Tensor] | None = None
        if has_checkpoint(self.out):
            if not resume:
                raise SpecError(f"{str(self.out)!r} holds a training run; pass --resume to continue it")
            if stored is not None:
                diff = stored[0].differences(cfg)
                if diff:
                    raise SpecError(f"--resume: {str(self.out)!r} was started with other settings ({'; '.join(diff)})")
            read_metrics(self.out / METRICS)  # a damaged record is refused here, before anything is written
            if (self.out / MODEL).exists():
                self.header, self.tensors = load_checkpoint(self.out / MODEL)
                if self.header.get("model") != self.mcfg.to_dict():
                    raise SpecError(f"--resume: the checkpoint in {str(self.out)!r} is of another model")


def train(
    cfg: TrainConfig,
    out: str | Path,
    *,
    resume: bool = False,
    given: set[str] | None = None,
    plugins: tuple[str, ...] = (),
    allow_changed: bool = False,
) -> dict[str, Any] | None:
    """Train (or resume) the run in ``out``; the result dict (rank 0; None on the other ranks).

    Ctrl-C (or SIGTERM) during training finishes the step under way, writes a checkpoint at it and raises
    :class:`Interrupted`; ``resume=True`` then continues exactly as if the run had not stopped (module docstring).
    A run stopped before its first step leaves nothing behind. The run's lock is held throughout (runlock.py): a
    second writer of ``out`` is refused, naming this process."""
    prep = Prepared(cfg, out, resume=resume, given=given, plugins=plugins, allow_changed=allow_changed)
    with run_lock(prep.out):
        remove_staged_leftovers(prep.out, ALL_RUN_FILES)  # a killed run's half-written files (fsa/io.py)
        world = init_world(cfg.device)
        try:
            if world.size > 1 and cfg.batch % world.size:
                raise SpecError(f"--batch {cfg.batch} is not divisible by the {world.size} processes")
            result = _Trainer(prep, world).run()
        finally:
            close_world(world)
        if not world.main:
            return None
        try:
            return finish(prep, result)
        except KeyboardInterrupt as exc:
            raise Interrupted(f"stopped before {str(prep.out)!r} was evaluated; the trained model is saved",
                              signum=signals.signal_of(exc)) from None  # fmt: skip


class _Trainer:
    def __init__(self, prep: Prepared, world: World) -> None:
        self.prep, self.world, self.cfg, self.task = prep, world, prep.cfg, prep.task
        cfg = self.cfg
        if cfg.device.startswith("cuda"):
            self.device = torch.device("cuda", world.local_rank if world.size > 1 else torch.cuda.current_device())
            torch.cuda.set_device(self.device)
        else:
            self.device = torch.device("cpu")
        torch.manual_seed(cfg.seed)
        self.model = SequenceModel.from_config(prep.mcfg).to(self.device)
        if cfg.init_from and prep.header is None:
            load_init(self.model, cfg, self.task)
        self.random_modules = use_global_batch_randomness(self.model)
        self.optimizer = torch.optim.AdamW(param_groups(self.model, cfg.weight_decay), lr=cfg.lr, betas=(0.9, 0.999))
        self.step, self.streak, self.stopped_early, self.finished = 0, 0, False, False
        if prep.header is not None:
            restore(self.model, prep.tensors, self.optimizer)
            h = prep.header
            self.step, self.streak = int(h["step"]), int(h.get("streak", 0))
            self.stopped_early, self.finished = bool(h.get("stopped_early")), bool(h.get("finished"))
        self.net = self.model
        if world.size > 1:
            from torch.nn.parallel import DistributedDataParallel

            ids = [self.device.index] if self.device.type == "cuda" else None
            self.net = DistributedDataParallel(self.model, device_ids=ids)
        self.regression = self.task.kind == "regression"
        self.out = prep.out
        self.last: dict[str, Any] = {}
        self.made_dir = False
        self._init_arm(prep.header)

    # ------------------------------------------------------------------ Brandoit et al.'s arms (objectives.py)
    def _init_arm(self, header: dict[str, Any] | None) -> None:
        cfg = self.cfg

        layers = [m for m in self.model.modules() if isinstance(m, NFSM)]
        # the top NFSM layer: the one the anchored arm supervises (the authors' two-layer NFSM on TSO_N); the
        # exploration penalty is the mean over all of them (the authors' Backbone)
        self.nfsm = layers[-1] if layers else None
        self.nfsm_layers = layers
        # a task with an answer readout (TSO_N): the states everywhere and the answer's own term (module docstring)
        readout = self.prep.mcfg.answer_readout
        split = getattr(self.task, "split_answer", None)
        self.answer_split = split if readout is not None and cfg.answer_term is not False else None
        self.n_answers = int(readout["classes"]) if readout is not None else 0
        self.anchor, self.anchored, self.anchor_streak, self.release_step = None, False, 0, 0
        self.best: tuple[tuple[float, float], int, dict[str, torch.Tensor]] | None = None
        h = header or {}
        if cfg.arm == "anchored":
            family = head_family_of(cfg, self.task)
            self.anchor = Anchor(family.codes, family.sizes)
            self.anchored = bool(h.get("anchored", True))
            self.anchor_streak, self.release_step = int(h.get("anchor_streak", 0)), int(h.get("release_step", 0))
            self.pinned = self.anchored and Anchor.can_pin(self.nfsm, self.cfg.d_model)
            if self.pinned:  # frozen: AdamW skips a parameter without gradient
                Anchor.pin(self.nfsm)
        for layer in self.nfsm_layers:
            layer.track = bool(cfg.explore or cfg.anchor_explore or self.anchor is not None)

    def _release(self) -> None:
        """The anchored arm's release: the free loss, the readout unpinned, a fresh optimizer and schedule."""
        self.anchored, self.release_step = False, self.step
        Anchor.unpin(self.nfsm)
        self.optimizer = torch.optim.AdamW(param_groups(self.model, self.cfg.weight_decay), lr=self.cfg.lr)

    def _arm_loss(self, out: torch.Tensor, batch: Batch, loss_sum: torch.Tensor | None) -> torch.Tensor | None:
        """Σ over words of the arm's loss (anchored heads, or the balanced loss) plus the exploration penalty, or
        None to keep the plain loss (``loss_sum``: Σ over words of the plain loss, with its frontier)."""
        cfg = self.cfg
        if not (self.anchored or cfg.loss == "balanced" or cfg.explore):
            return None
        aux = self.nfsm.aux if self.nfsm is not None else {}
        if self.anchored:
            total, frontier = self.anchor.loss(aux["states"], aux["indices"], batch)
            dec, _ = balanced_ce(out, batch.targets, batch.mask)
            total, beta = total + ANCHOR_WEIGHT * dec, cfg.anchor_explore
        else:
            if cfg.loss == "balanced":
                total, frontier = balanced_ce(out, batch.targets, batch.mask)
            else:
                total = loss_sum
                frontier = first_error((out.argmax(-1) == batch.targets).detach(), batch.mask)[1]
            beta = cfg.explore
        excess = [layer.aux["excess"] for layer in self.nfsm_layers if "excess" in layer.aux]
        if beta and excess:  # the mean over the NFSM layers of each word's excess at its first error
            mean = torch.stack(excess).mean(0)
            total = total + beta * explore_scale(self.step, cfg.steps) * frontier_excess(mean, frontier)
        return total

    # ------------------------------------------------------------------ files (rank 0)
    def _start_files(self) -> None:
        if not self.world.main:
            return
        self.made_dir = not self.out.exists()
        self.out.mkdir(parents=True, exist_ok=True)
        if self.step == 0 or not (self.out / CONFIG).exists():  # a run that never reached a checkpoint is replaced
            atomic_write_text(self.out / CONFIG, json.dumps(run_record(self.cfg, self.prep.mcfg, self.task), indent=1))
        # drop records past the checkpoint (written after it by a run that was killed) and any torn last line
        path = self.out / METRICS
        keep = [r for r in read_metrics(path) if r["step"] <= self.step]
        if self.step == 0:
            keep = []
        atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in keep))
        self.last = keep[-1] if keep else {}

    def _checkpoint(self) -> None:
        if not self.world.main:
            return
        header = {
            "model": self.prep.mcfg.to_dict(),
            "task": {"name": self.task.name, "vocab": self.task.vocab, "classes": self.task.classes},
            "step": self.step,
            "streak": self.streak,
            "stopped_early": self.stopped_early,
            "finished": self.finished,
            "seed": self.cfg.seed,
            "anchored": self.anchored,
            "anchor_streak": self.anchor_streak,
            "release_step": self.release_step,
        }
        if self.best is not None and self.finished:
            header["best_step"] = self.best[1]  # --keep-best: the weights are those validated at this step
        save_checkpoint(self.out / MODEL, self.model, header, self.optimizer)

    # ------------------------------------------------------------------ one step
    def _batch(self, step: int) -> tuple[Batch, int, int]:
        """This rank's slice of step ``step``'s global batch, the global number of judged positions and of tokens."""
        gen = torch.Generator().manual_seed(stream_seed(self.cfg.seed, _DATA, step))
        full = self.task.sample(self.cfg.batch, self.prep.lengths, gen, train=True)
        lo, hi = self.world.rows(self.cfg.batch)
        set_rows(self.random_modules, (self.cfg.batch, lo, hi))
        return full.slice(lo, hi).to(self.device), int(full.mask.sum()), int(full.lengths.sum())

    def _loss(self, batch: Batch, n_global: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(loss to backpropagate, [sum loss, right | sse, Σy, Σy², count] of this rank)."""
        use_bf16 = self.device.type == "cuda"
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=use_bf16):
            out = self.net(batch.inputs)
        out = out.float()
        mask = batch.mask
        if self.regression:
            y, p = batch.targets[mask].float(), out[mask]
            width = y.shape[-1]
            sse = ((p - y) ** 2).sum()
            loss = sse / (n_global * width)
            stats = torch.stack(
                [
                    sse.detach().double(),
                    y.sum().double(),
                    (y**2).sum().double(),
                    torch.tensor(float(y.numel()), dtype=torch.float64, device=y.device),
                ]
            )
        else:
            ce = F.cross_entropy(out.flatten(0, 1), batch.targets.flatten(), reduction="none").view(mask.shape)
            right = ((out.argmax(-1) == batch.targets) & mask).sum().double()
            total = (ce * mask).sum()
            fit, fit_out, answer = batch, out, None
            if self.answer_split is not None:  # the states' logits on the states everywhere, the answer apart
                states, answers = self.answer_split(batch.targets, batch.lengths)
                fit, fit_out = Batch(batch.inputs, states, mask, batch.lengths), out[..., : -self.n_answers]
                rows = torch.arange(len(answers), device=out.device)
                last = out[rows, batch.lengths.long() - 1, -self.n_answers :]
                answer = F.cross_entropy(last, answers, reduction="sum")
                ce = F.cross_entropy(fit_out.flatten(0, 1), states.flatten(), reduction="none").view(mask.shape)
            if self.cfg.loss == "first-error":
                weighted = (ce * mask * first_error_weights(fit_out, fit)).sum()
            else:
                weighted = (ce * mask).sum()
            arm = self._arm_loss(fit_out, fit, weighted * self.cfg.batch / n_global)
            loss = weighted / n_global if arm is None else arm / self.cfg.batch
            if answer is not None:  # Brandoit et al.'s _answer_term: the mean over words, full weight, both arms
                loss = loss + answer / self.cfg.batch
            stats = torch.stack([total.detach().double(), right])
        return loss * self.world.size, stats

    def _train_step(self) -> tuple[torch.Tensor, int, int]:
        signals.at("step")
        step = self.step
        torch.manual_seed(stream_seed(self.cfg.seed, _NOISE, step))
        batch, n_global, n_tokens = self._batch(step)
        for group in self.optimizer.param_groups:
            group["lr"] = lr_at(self.cfg, step - self.release_step)
        self.net.train()
        loss, stats = self._loss(batch, n_global)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.cfg.clip > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.clip)
        self.optimizer.step()
        self.step += 1
        return stats, n_global, n_tokens

    def _summarize(self, stats: torch.Tensor, n_global: int) -> tuple[float, float]:
        s = all_sum(stats.to(torch.float64), self.world).cpu()
        if self.regression:
            sse, sy, sy2, count = (float(v) for v in s)
            sst = sy2 - sy * sy / max(count, 1)
            return sse / max(count, 1), (1.0 - sse / sst) if sst > 0 else float("nan")
        return float(s[0]) / n_global, float(s[1]) / n_global

    # ------------------------------------------------------------------ validation
    @torch.no_grad()
    def _validate(self) -> dict[str, float]:
        """Token and sequence accuracy (R² for regression) on fixed held-out words at the training maximum length."""
        cfg, task = self.cfg, self.task
        n = max(cfg.val_samples - cfg.val_samples % self.world.size, self.world.size)
        gen = torch.Generator().manual_seed(stream_seed(cfg.seed, _VAL))
        full = task.sample(n, self.prep.lengths[1], gen, train=True)
        lo, hi = self.world.rows(n)
        b = full.slice(lo, hi).to(self.device)
        self.model.eval()
        try:
            out = self.model(b.inputs).float()
        finally:
            self.model.train()
        if self.regression:
            y, p = b.targets[b.mask].double(), out[b.mask].double()
            s = all_sum(
                torch.stack(
                    [
                        ((p - y) ** 2).sum(),
                        y.sum(),
                        (y**2).sum(),
                        torch.tensor(float(y.numel()), dtype=torch.float64, device=y.device),
                    ]
                ),
                self.world,
            ).cpu()
            sst = float(s[2]) - float(s[1]) ** 2 / max(float(s[3]), 1)
            return {"val_r2": 1.0 - float(s[0]) / sst if sst > 0 else float("nan")}
        heads = {}
        if self.anchored:  # the pinned heads' sequence accuracy: the release rule
            ok = self.anchor.heads_correct(self.nfsm.aux["indices"], b.targets) | ~b.mask
            heads["anchor_sequence_accuracy"] = float(ok.all(1).double().mean())
        good = (out.argmax(-1) == b.targets) | ~b.mask
        if self.n_answers and self.world.size == 1:  # an answer readout: the answer and the states apart
            rows, last = torch.arange(len(b.lengths), device=good.device), b.lengths.long().to(good.device) - 1
            states = good.clone()
            states[rows, last] = True
            heads["val_answer_accuracy"] = float(good[rows, last].double().mean())
            heads["val_state_sequence_accuracy"] = float(states.all(1).double().mean())
        words = (good.all(dim=1) & b.mask.any(dim=1)).sum()
        s = all_sum(
            torch.stack([(good & b.mask).sum(), b.mask.sum(), words, b.mask.any(dim=1).sum()]).double(), self.world
        ).cpu()
        return {
            "val_token_accuracy": float(s[0]) / max(float(s[1]), 1),
            "val_sequence_accuracy": float(s[2]) / max(float(s[3]), 1),
            **heads,
        }

    # ------------------------------------------------------------------ interruption
    def _stop_requested(self, stop: StopRequest) -> bool:
        """Whether Ctrl-C/SIGTERM reached any rank (all ranks agree, so that they stop at the same step)."""
        if self.world.size == 1:
            return stop.requested
        return float(all_sum(torch.tensor([float(stop.requested)], dtype=torch.float64), self.world)[0]) > 0

    def _interrupt(self, stop: StopRequest) -> None:
        """Checkpoint at the current step and raise :class:`Interrupted` (nothing is kept before the first step)."""
        signum = stop.signum
        if self.step == 0:
            raise Interrupted(f"stopped before the first step of {str(self.out)!r}; nothing was kept",
                              self.world.main, signum)  # fmt: skip
        self._checkpoint()
        raise Interrupted(f"stopped at step {self.step} of {self.cfg.steps}; checkpoint written to "
                          f"{str(self.out / MODEL)!r}", self.world.main, signum)  # fmt: skip

    def _discard_unstarted(self) -> None:
        """Remove the files of a run that never reached a checkpoint, so that it blocks no rerun."""
        if not self.world.main or has_checkpoint(self.out):
            return
        for name in (CONFIG, METRICS):
            (self.out / name).unlink(missing_ok=True)
        if self.made_dir:
            with contextlib.suppress(OSError):
                self.out.rmdir()

    def _after_validation(self, rec: dict[str, Any], step: int) -> None:
        """The release rule of the anchored arm and the best checkpoint (``keep_best``)."""
        if self.anchored:
            good = rec.get("anchor_sequence_accuracy", 0.0) >= RELEASE_ACCURACY
            self.anchor_streak = self.anchor_streak + 1 if good else 0
            if self.anchor_streak >= RELEASE_PATIENCE:
                self._release()
                rec["anchor_released"] = step
        if self.cfg.keep_best and "val_sequence_accuracy" in rec:
            score = (rec["val_sequence_accuracy"], rec["val_token_accuracy"])
            if self.best is None or score >= self.best[0]:
                self.best = (score, step, {k: v.detach().clone() for k, v in self.model.state_dict().items()})

    # ------------------------------------------------------------------ the loop
    def run(self) -> dict[str, Any]:
        cfg = self.cfg
        metrics, bar = None, None
        try:
            self._start_files()
            signals.at("setup")
            barrier(self.world)
        except BaseException:
            self._discard_unstarted()
            raise
        metrics = open(self.out / METRICS, "a") if self.world.main else None  # noqa: SIM115
        if self.world.main and cfg.progress and not self.finished:
            bar = progress.bar(cfg.steps, "train", initial=self.step, unit="step")
        tokens, t0 = 0, time.perf_counter()
        stop = StopRequest()
        try:
            while self.step < cfg.steps and not self.finished:
                if self._stop_requested(stop):
                    self._interrupt(stop)
                stats, n_global, toks = self._train_step()
                tokens += toks
                s = self.step
                if bar is not None:
                    bar.update(1)
                validate = s % cfg.val_every == 0 or s == cfg.steps
                if s % cfg.log_every == 0 or validate or s == cfg.steps:
                    loss, acc = self._summarize(stats, n_global)
                    dt = time.perf_counter() - t0
                    rec = {
                        "step": s,
                        "loss": loss,
                        "accuracy": acc,
                        "lr": lr_at(cfg, s - 1),
                        "tokens_per_s": tokens / dt if dt > 0 else None,
                    }
                    tokens, t0 = 0, time.perf_counter()
                    if validate:
                        rec.update(self._validate())
                        self._after_validation(rec, s)
                        exact = rec.get("val_sequence_accuracy") == 1.0
                        self.streak = self.streak + 1 if exact else 0
                        if cfg.early_stop and self.streak >= cfg.early_stop:
                            self.stopped_early = True
                    if metrics is not None:
                        metrics.write(json.dumps(rec) + "\n")
                        metrics.flush()
                    self.last = rec
                    if bar is not None:
                        bar.set_postfix(loss=f"{loss:.4f}", acc=f"{acc:.4f}", tok_s=f"{rec['tokens_per_s'] or 0:.0f}")
                if self.stopped_early or s == cfg.steps:
                    self.finished = True
                if self.finished or s % cfg.checkpoint_every == 0:
                    self._checkpoint()
        except BaseException:
            self._discard_unstarted()
            raise
        finally:
            stop.restore()
            if bar is not None:
                bar.close()
            if metrics is not None:
                metrics.close()
        barrier(self.world)
        if self.best is not None and self.finished:  # --keep-best: end on the best validation, saved as the run's model
            self.model.load_state_dict(self.best[2])
            self._checkpoint()
        self.model.eval()
        return {"model": self.model, "step": self.step, "last": self.last, "stopped_early": self.stopped_early}


def finish(prep: Prepared, result: dict[str, Any]) -> dict[str, Any]:
    """Rank 0 after training: evaluate, write eval.json and curves.png, return the run's summary."""
    model, cfg, out = result["model"], prep.cfg, prep.out
    signals.at("evaluation")
    if not result["last"]:
        result["last"] = (read_metrics(out / METRICS) or [{}])[-1]
    ev = evaluate_run_model(model, prep.task, cfg, prep.lengths)
    atomic_write_text(out / EVAL, json.dumps(ev, indent=1))

    plot_curves(out / CURVES, read_metrics(out / METRICS), ev, title=run_title(cfg))
    last = result["last"]
    summary = {
        "run": os.fspath(out),
        "seed": cfg.seed,
        "train_lengths": list(prep.lengths),
        "steps": result["step"],
        "final_loss": last.get("loss"),
        "train_accuracy": last.get("accuracy"),
        "stopped_early": result["stopped_early"],
        "eval": {k: ev[k] for k in ("lengths", "token_accuracy", "sequence_accuracy", "scaled_accuracy") if k in ev},
    }
    summary.update(l_max=ev.get("l_max"), l_max_capped=bool(ev.get("l_max_capped")))
    for key in ("range", "regression", "exact", "l_max_note", "skipped"):
        if key in ev:
            summary[key if key != "regression" else "eval_regression"] = ev[key]
    return summary
