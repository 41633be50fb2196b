"""`fsa2rnn eval RUN`: re-evaluate a training run — accuracy against length, and L_max with --lmax."""

from __future__ import annotations

import click

from ..fsa.errors import SpecError
from ..nn.limits import MAX_LENGTH, parse_lengths
from ..nn.lmax import DEFAULT_CAP
from ..nn.train.runfiles import check_run_dir
from .errors import echo_json
from .limit_options import limited, samples_option
from .options import quiet_option
from .plugin_options import checked_plugin, plugin_options


@click.command("eval")
@click.argument("run", metavar="RUN", type=click.Path())
@click.option(
    "--lengths", help="Evaluation lengths, e.g. 40,80,160 (default: the run's). Limit: each in [1, 2^20], at most 64."
)
@click.option("--lmax", is_flag=True, help="Also search the failing length L_max.")
@limited("cap", help="Longest length the L_max search tries (default 4096; under --protocol brandoit the "
         "protocol's own 2^20).", default=None)  # fmt: skip
@samples_option
@limited("threshold", help="Sequence accuracy below which a length fails (default 1.0; 0.9 for baselines under "
         "--protocol brandoit).", default=None)  # fmt: skip
@click.option(
    "--protocol",
    type=click.Choice(["prefix", "brandoit"]),
    default="prefix",
    show_default=True,
    help="L_max search: prefixes of the same seeded words, or Brandoit et al.'s fresh words seeded by (seed, length) "
    "at every length, doubling from the training length then bisection, the cap clipped so that one word's logits "
    "fit in 1 GiB.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@plugin_options
@quiet_option
def eval_command(
    run: str,
    lengths: str | None,
    lmax: bool,
    cap: int | None,
    samples: int,
    threshold: float | None,
    protocol: str,
    as_json: bool,
    plugin: str | None,
    allow_changed_plugin: bool,
) -> None:
    """Evaluate the model of training run RUN: token and sequence accuracy at each length (the Transformer only
    where its attention fits in memory), scaled accuracy, and with --lmax the failing length L_max."""
    plugins = checked_plugin(plugin)
    wanted = parse_lengths(lengths, "--lengths") if lengths is not None else None
    if protocol != "prefix" and not lmax:
        raise SpecError("--protocol chooses the L_max search: pass --lmax with it")
    check_run_dir(run)
    if cap is None:
        cap = MAX_LENGTH if protocol == "brandoit" else DEFAULT_CAP
    from ..nn.train import evaluate_run

    out = evaluate_run(run, lengths=wanted, lmax=lmax, cap=cap, samples=samples, threshold=threshold, protocol=protocol,
                       plugins=plugins, allow_changed=allow_changed_plugin)  # fmt: skip
    if as_json:
        echo_json(out)
        return
    if "token_accuracy" in out:
        click.echo("length  token_acc  seq_acc  scaled")
        for n, t, s, c in zip(out["lengths"], out["token_accuracy"], out["sequence_accuracy"], out["scaled_accuracy"]):
            click.echo(f"{n:>6}  {t:9.4f}  {s:7.4f}  {c:6.3f}")
        for sk in out.get("skipped") or []:
            click.echo(f"skipped length {sk['length']}: {sk['reason']}")
    else:
        for n, m, r in zip(out["lengths"], out["mse"], out["r2"]):
            click.echo(f"length {n}: MSE {m:.4g}, R² {r:.4f}")
    if lmax:
        lm = out["l_max"] if out["l_max"] is not None else ("none up to the cap" if out["l_max_capped"] else "-")
        click.echo(f"L_max: {lm}" + (f" ({out['l_max_note']})" if out.get("l_max_note") else ""))
    ex = out.get("exact")
    if ex and ex.get("exact") is not None:
        click.echo(f"tables exact: {ex['exact']} ({ex['triples']} reachable triples)")
