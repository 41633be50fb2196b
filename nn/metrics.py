"""The metrics of a trained SequenceModel's length generalization (docs/theory.md, "Length generalization"): the one
place that scores a model on a task. The L_max search itself is :func:`fsa2rnn.nn.lmax.failing_length`.

- :func:`accuracy_at_lengths`: token accuracy (judged positions right), sequence accuracy (words right at every
  judged position) and the scaled accuracy (acc − chance)/(1 − chance) on words of each fixed length, drawn from the
  task's *evaluation* distribution with a seed per length. Automaton tasks are streamed: the words are continued
  chunk by chunk (``Task.continue_words``) while the model carries its recurrent state, so 2^20 symbols per word never
  sit in memory at once; a task supervised on the answer only is judged at each word's last position. The
  Transformer has no fixed-size state: it is evaluated only at lengths whose attention over the whole prefix fits
  :data:`ATTENTION_BYTES`, and the others are reported as skipped, with the reason.
- :func:`range_accuracy`: the negative-eigenvalues paper's test (App. E.1): words of lengths uniform in MIN..MAX,
  judged at their last judged position (the answer), as accuracy and scaled accuracy.
- :func:`failing_length_of`: L_max by :func:`fsa2rnn.nn.lmax.failing_length` on the task's word source.
- :func:`regression_scores`: MSE and R² (the DLR tasks).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..fsa.progress import counting
from .lmax import clip_cap, failing_length, failing_length_fresh
from .model import SequenceModel
from .tasks import Task

#: tokens per forward call when reading long words in chunks (n_words × chunk), on CPU; ×32 on CUDA (on CPU,
#: activations of a few MiB are as fast per token as larger ones and much faster than hundreds of MiB)
CHUNK_TOKENS = 2**15
#: tokens per length read for the accuracy curve at most (fewer words at long lengths, never fewer than MIN_WORDS)
LENGTH_TOKENS = 2**22
MIN_WORDS = 16
#: memory the Transformer's attention over a whole prefix may take (B × heads × L² float32, per layer)
ATTENTION_BYTES = 2**31


def default_lengths(train_max: int, cap: int | None = None) -> list[int]:
    """The training maximum, then doubling up to ``cap`` (default 8 × the training maximum), cap included."""
    cap = 8 * train_max if cap is None else cap
    out, n = [], train_max
    while n < cap:
        out.append(n)
        n *= 2
    return [*out, cap] if cap >= train_max else [cap]


def _seed(*parts: int) -> int:
    return int(np.random.SeedSequence([abs(int(p)) for p in parts]).generate_state(1, np.uint64)[0] >> 1)


def _attention_words(model: SequenceModel, length: int, want: int) -> int:
    """How many words of ``length`` the model's attention can hold at once (``want`` for recurrent models)."""
    heads = [b.layer for b in model.blocks if not getattr(b.layer, "recurrent", True)]
    if model.whole is not None and not model.recurrent:
        heads = [model.whole]
    if not heads:
        return want
    per_word = sum(_pass_bytes(layer, length, model) for layer in heads)
    return int(min(want, ATTENTION_BYTES // max(per_word, 1)))


#: bytes per position and feature that one forward pass of a layer without a carried state is assumed to hold (its
#: activations; nn/capabilities.py: a model without ``carry`` reads a word in one pass)
FORWARD_BYTES = 64


def _pass_name(model: SequenceModel) -> str:
    return "attention" if any(hasattr(b.layer, "encoder") for b in model.blocks) else "one forward pass"


def _pass_bytes(layer: Any, length: int, model: SequenceModel) -> int:
    """Memory of one word of ``length`` read in one pass by a layer without a fixed-size state: attention's
    length² scores (the Transformer), else :data:`FORWARD_BYTES` × length × d_model (a forward-only plug-in)."""
    encoder = getattr(layer, "encoder", None)
    if encoder is not None:
        return 4 * encoder.layers[0].self_attn.num_heads * length**2 * len(encoder.layers)
    return FORWARD_BYTES * length * model.config.d_model


def _device(model: SequenceModel) -> torch.device:
    return model.device


def _chunk_tokens(model: SequenceModel) -> int:
    return CHUNK_TOKENS * (32 if _device(model).type == "cuda" else 1)


@torch.no_grad()
def _logits(model: SequenceModel, inputs: torch.Tensor, state: Any) -> tuple[torch.Tensor, Any]:
    return model(inputs.to(_device(model)), state, True)


def accuracy_at_lengths(
    model: SequenceModel,
    task: Task,
    lengths: list[int],
    *,
    samples: int = 512,
    seed: int = 0,
    progress: Any = None,
    train: bool = False,
) -> dict[str, Any]:
    """{lengths, token_accuracy, sequence_accuracy, scaled_accuracy, samples, skipped} (see the module docstring).
    ``progress``: a bar (fsa2rnn.fsa.progress) advanced by one per length; ``train``: draw the words from the task's
    training distribution instead (they differ for e.g. brandoit:FF: 10 % writes in training, 1 % in evaluation)."""
    if task.kind == "regression":
        raise ValueError("accuracy_at_lengths: a regression task has no accuracy (use regression_scores)")
    out: dict[str, Any] = {
        "lengths": [],
        "token_accuracy": [],
        "sequence_accuracy": [],
        "scaled_accuracy": [],
        "samples": [],
        "skipped": [],
    }
    was = model.training
    model.eval()
    try:
        for length in lengths:
            n = max(MIN_WORDS, min(samples, LENGTH_TOKENS // length))
            n = min(n, samples)
            fit = _attention_words(model, length, n)
            if fit < min(n, MIN_WORDS):
                out["skipped"].append(
                    {
                        "length": length,
                        "reason": f"{model.config.layer}: {_pass_name(model)} over {length} positions of "
                        f"{min(n, MIN_WORDS)} words exceeds {ATTENTION_BYTES / 2**30:g} GiB",
                    }
                )
                continue
            n = fit
            gen = torch.Generator().manual_seed(_seed(seed, length))
            right, judged, words_right, words = _score_length(model, task, length, n, gen, train)
            tok = right / max(judged, 1)
            out["lengths"].append(length)
            out["token_accuracy"].append(tok)
            out["sequence_accuracy"].append(words_right / max(words, 1))
            out["scaled_accuracy"].append(scaled(tok, task.chance))
            out["samples"].append(n)
            if progress is not None:
                progress.update(1)
    finally:
        model.train(was)
    return out


def _score_length(model: SequenceModel, task: Task, length: int, n: int, gen: torch.Generator, train: bool = False):
    """(right positions, judged positions, right words, judged words) on n words of ``length`` (of the training
    draw if ``train``, else the evaluation draw)."""
    recurrent = model.recurrent
    if hasattr(task, "continue_words") and task.prefixes_judged:  # automaton words, read in chunks
        answer = task.supervision == "answer"  # judged at the word's last position only
        chunk = max(1, _chunk_tokens(model) // n) if recurrent else length
        right = judged = 0
        ok = torch.ones(n, dtype=torch.bool)
        state, carry, done = None, None, 0
        while done < length:
            step = min(chunk, length - done)
            tokens, targets, carry = task.continue_words(n, step, gen, carry, train=train)
            logits, state = _logits(model, tokens, state)
            good = logits.argmax(-1).cpu() == targets
            done += step
            if answer:
                good = good[:, -1:] if done == length else good[:, :0]
            right += int(good.sum())
            judged += good.numel()
            ok &= good.all(dim=1)
        return right, judged, int(ok.sum()), n
    batch = task.sample(n, length, gen, train=train)
    logits, _ = _logits(model, batch.inputs, None)
    good = (logits.argmax(-1).cpu() == batch.targets) | ~batch.mask
    has = batch.mask.any(dim=1)
    right = int((good & batch.mask).sum())
    return right, int(batch.mask.sum()), int((good.all(dim=1) & has).sum()), int(has.sum())


def scaled(acc: float, chance: float) -> float:
    """(acc − chance)/(1 − chance): 1 perfect, 0 random guessing (the negative-eigenvalues paper's score)."""
    return (acc - chance) / (1.0 - chance) if chance < 1 else float("nan")


@torch.no_grad()
def range_accuracy(
    model: SequenceModel, task: Task, lo: int, hi: int, *, samples: int = 8192, seed: int = 0, batch: int = 512
) -> dict[str, Any]:
    """Accuracy at each word's last judged position (its answer) on words of lengths uniform in lo..hi."""
    gen = torch.Generator().manual_seed(_seed(seed, lo, hi, 7))
    right = total = 0
    was = model.training
    model.eval()
    try:
        for start in range(0, samples, batch):
            b = task.sample(min(batch, samples - start), (lo, hi), gen, train=False)
            pos = torch.arange(b.mask.shape[1])[None, :].expand_as(b.mask)
            # causal models: what follows a word's end never reaches it, so its padding may be any symbol
            logits, _ = _logits(model, b.inputs.masked_fill(pos >= b.lengths[:, None], 0), None)
            last = torch.where(b.mask, pos, torch.full_like(pos, -1)).max(dim=1).values
            keep = last >= 0
            rows = torch.nonzero(keep).squeeze(1)
            pred = logits.argmax(-1).cpu()[rows, last[rows]]
            right += int((pred == b.targets[rows, last[rows]]).sum())
            total += len(rows)
    finally:
        model.train(was)
    acc = right / max(total, 1)
    return {"lengths": f"{lo}..{hi}", "samples": total, "accuracy": acc, "scaled_accuracy": scaled(acc, task.chance)}


def failing_length_of(
    model: SequenceModel,
    task: Task,
    *,
    start: int,
    cap: int,
    n_words: int = 512,
    threshold: float = 1.0,
    seed: int = 0,
    protocol: str = "prefix",
    progress: Any = None,
) -> dict[str, Any]:
    """{l_max, l_max_capped, l_max_note}: the failing length of the model on the task's evaluation words, by the
    ``prefix`` protocol (nn/lmax.py: prefixes of the same words) or Brandoit et al.'s ``brandoit`` (fresh words
    at every length, the cap clipped so that one word's logits fit in memory; adds ``l_max_trace``: the
    accuracy at every length judged, and ``l_max_cap``: the cap searched). ``progress``: a bar advanced by the
    symbols read (at most ``n_words × cap``)."""
    whole_words = getattr(task, "fresh_words", None) if protocol == "brandoit" else None
    if whole_words is None and hasattr(task, "fresh_words"):
        why = f"{task.name}: a word's question comes last, so prefixes of one word are not words (--protocol brandoit)"
        return {"l_max": None, "l_max_capped": False, "l_max_note": why}
    if whole_words is None and not hasattr(task, "word_source"):
        return {"l_max": None, "l_max_capped": False, "l_max_note": f"{task.name} has no automaton word source"}
    if whole_words is None and not task.prefixes_judged:
        why = f"{task.name} judges only the answer of a whole word, so prefixes of one word are not words"
        return {"l_max": None, "l_max_capped": False, "l_max_note": why}
    note = None
    fit_cap = cap
    while _attention_words(model, fit_cap, n_words) < n_words and fit_cap > start:
        fit_cap //= 2
    if fit_cap < cap:
        note = f"{model.config.layer}: searched only up to {fit_cap} ({_pass_name(model)} beyond it exceeds memory)"
    recurrent = model.recurrent
    chunk = max(1, _chunk_tokens(model) // n_words) if recurrent else fit_cap
    predict = model.predictor()
    if progress is not None:
        predict = counting(predict, progress)
    if protocol == "brandoit":
        top = clip_cap(max(fit_cap, start), task.n_classes, start)
        l_max, capped, trace = failing_length_fresh(
            predict,
            None if whole_words is not None else task.word_source(),
            start=start,
            cap=top,
            n_words=n_words,
            threshold=threshold,
            seed=seed,
            chunk=chunk,
            whole_words=whole_words,
        )
        trace_out = {str(k): v for k, v in sorted(trace.items())}
        return {"l_max": l_max, "l_max_capped": capped, "l_max_note": note, "l_max_cap": top, "l_max_trace": trace_out}
    l_max, capped = failing_length(
        predict,
        task.word_source(),
        start=start,
        cap=max(fit_cap, start),
        n_words=n_words,
        threshold=threshold,
        seed=seed,
        chunk=chunk,
    )
    return {"l_max": l_max, "l_max_capped": capped, "l_max_note": note}


@torch.no_grad()
def regression_scores(
    model: SequenceModel, task: Task, length: int, *, samples: int = 512, seed: int = 0, batch: int = 64
) -> dict[str, Any]:
    """MSE and R² = 1 − MSE / MSE(mean target) over the judged positions (the DLR paper's score, §3.3)."""
    gen = torch.Generator().manual_seed(_seed(seed, length, 11))
    sse = sy = sy2 = count = 0.0
    was = model.training
    model.eval()
    try:
        for start in range(0, samples, batch):
            b = task.sample(min(batch, samples - start), length, gen, train=False)
            pred = model(b.inputs.to(_device(model)))  # the whole-sequence path (no state: DLR-prod's N² modes)
            y, p = b.targets[b.mask].double(), pred.cpu()[b.mask].double()
            sse += float(((p - y) ** 2).sum())
            sy += float(y.sum())
            sy2 += float((y**2).sum())
            count += y.numel()
    finally:
        model.train(was)
    sst = sy2 - sy * sy / max(count, 1)
    return {"length": length, "mse": sse / max(count, 1), "r2": 1.0 - sse / sst if sst > 0 else float("nan")}
