"""`fsa2rnn compare RUN`: what a trained model learned, against its target automaton and a compiled model of it."""

from __future__ import annotations

from typing import Any

import click

from ..compiler.model import CompiledModel
from ..fsa.errors import SpecError
from ..fsa.library import resolve_spec
from ..fsa.progress import stages
from ..nn.capabilities import missing
from ..nn.limits import check_words_length
from ..nn.train.runfiles import check_run_dir
from ..realize.moore import spec_target
from .errors import echo_json
from .limit_options import cap_option, limited, samples_option, seed_option
from .lstar_options import lstar_options, run_lstar
from .options import check_plot, max_states_option, quiet_option
from .plugin_options import checked_plugin, plugin_options


@click.command("compare")
@click.argument("run", metavar="RUN", type=click.Path())
@click.option("--spec", default=None, help="Target automaton (default: the run's task automaton).")
@click.option("--compiled", "compiled_path", default=None, type=click.Path(dir_okay=False),
              help="Compiled model of the target (default: compiled here for the run's layer family).")  # fmt: skip
@click.option("--plot", "plot_path", default=None,
              help="Write the eigenvalues on the unit circle per symbol; the extension (.png, .pdf, .svg) chooses "
                   "the format.")  # fmt: skip
@limited("length", help="Length of the sampled and held-out words (default: the longest training length).")
@limited("words", help="Words sampled for the extraction (and held out for its agreement).", default=256,
         show_default=True)  # fmt: skip
@seed_option
@click.option("--lmax/--no-lmax", default=True, show_default=True, help="Search L_max at each dtype.")
@cap_option
@samples_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@quiet_option
@max_states_option
@lstar_options
@plugin_options
def compare_command(
    run: str,
    spec: str | None,
    compiled_path: str | None,
    plot_path: str | None,
    length: int | None,
    words: int,
    seed: int,
    lmax: bool,
    cap: int,
    samples: int,
    as_json: bool,
    max_states: int,
    method: str,
    max_queries: int,
    max_seconds: float,
    depth: int,
    plugin: str | None,
    allow_changed_plugin: bool,
) -> None:
    """Extract the automaton the model of training run RUN implements and relate it to the target (isomorphic,
    homomorphic, or none with a witness); compare its transition spectra (padded with 1: an eigenvalue one model
    lacks counts), monoid, NFSM tables and L_max with a compiled model's. With --method lstar or kv, learn the machine
    black-box instead (AALpy) and relate it to the target and to the white-box extraction."""
    plugins = checked_plugin(plugin)
    check_plot(plot_path)
    check_run_dir(run)
    if length is not None:
        check_words_length(words, length)

    from ..nn.train import load_run
    from ..realize.compare import check_inputs, compare, has_spectra, plot_spectra, whitebox_fallback

    model, task, cfg = load_run(run, plugins=plugins, allow_changed=allow_changed_plugin)
    target = None
    if spec is not None:
        target = spec_target(resolve_spec(spec, max_states=max_states), task.classes)
    compiled = CompiledModel.load(compiled_path) if compiled_path is not None else None
    check_inputs(task, target, compiled)
    if plot_path is not None and not has_spectra(model):
        raise SpecError(f"--plot draws eigenvalues of A(x): a {cfg.model} model has no linear transition")
    length = length or cfg.train_lengths(task)[1]
    check_words_length(words, length)
    why = missing(model, "carry") if method == "whitebox" else None
    if why is not None:  # a forward-only plug-in (nn/capabilities.py): L* instead, in one line
        click.echo(f"note: {whitebox_fallback(why)}", err=True)
        method = "lstar"
    if method != "whitebox":
        if plot_path is not None or compiled_path is not None:
            raise SpecError(f"--plot and --compiled belong to --method whitebox, not {method}")
        return run_lstar(model, task, target, method=method, length=length, words=words, seed=seed,
                         max_queries=max_queries, max_seconds=max_seconds, depth=depth, as_json=as_json)  # fmt: skip
    with stages("compare", 1 + lmax) as step:
        step("extraction, spectra, monoid")
        report = compare(model, task, target=target, compiled=compiled, length=length, words=words, seed=seed,
                         lmax=lmax, cap=cap, n_words=samples, step=step)  # fmt: skip
    if plot_path is not None:
        plot_spectra(report["spectra"], plot_path, title=run_title(cfg, task))
        report["plot"] = plot_path
    if as_json:
        echo_json(report)
    else:
        print_report(report)


def run_title(cfg: Any, task: Any) -> str:
    """A plot title naming the run: task, model, eigenvalue range (where the model has one) and seed."""
    eig = f" [{cfg.eig.replace(',', ', ')}]" if getattr(cfg, "eig", None) else ""
    return f"{task.name} · {cfg.model}{eig} · seed {cfg.seed}"


def _num(v: Any) -> str:
    return "-" if v is None else f"{v:.4f}"


def _eig(p: list[float] | None) -> str:
    if p is None:
        return "-"
    re, im = p
    return f"{re:+.4f}" if abs(im) < 5e-5 else f"{re:+.3f}{im:+.3f}i"


def print_report(r: dict[str, Any]) -> None:
    ex, tg = r["extracted"], r["target"]
    click.echo(f"extracted: {ex['n_states']} states ({'sample-based' if ex['sample_based'] else 'exact'})")
    click.echo(f"  method: {ex['method']}")
    ag = ex["agreement"]
    rows = zip(ag["lengths"], ag["token"], ag["sequence"])
    parts = [f"length {n}: token {t:.4f}, sequence {s:.4f}" for n, t, s in rows]
    click.echo(f"  agreement with the model on {ag['words']} held-out words: " + "; ".join(parts))
    what = "" if ex["labels_compared"] else " (structure only: the target's states are not the model's classes)"
    name = tg["name"] or "spec"
    at = ex["checked_at"]
    click.echo(f"  relation to the target ({name}, {tg['minimal_states']} states): {ex['relation']}{what}; the "
               f"model agrees with this machine on {at['sequence_agreement']:.1%} of words of length {at['length']} "
               f"({at['times_training_length']}× the training length)")  # fmt: skip
    w = ex.get("witness")
    if w:
        click.echo(f"  witness: {w['statement']} (checked by running both: {w.get('checked')})")
    if at.get("warning"):
        click.echo(f"warning: {at['warning']}")
    if r.get("compiled"):
        c = r["compiled"]
        click.echo(f"compiled: {c['target']} ({c['construction']}, {c['layers']} layer(s))")
    elif r.get("compiled_note"):
        click.echo(f"compiled: none ({r['compiled_note']})")
    if r["spectra"]:
        click.echo("spectra (each compiled eigenvalue ← its trained partner; the compiled spectrum padded with 1, so")
        click.echo("an eigenvalue the compiled model lacks is matched to 1 and counts in the distance):")
        click.echo("  symbol      layer  head  distance  core      compiled ← trained; unpaired trained")
        for row in r["spectra"]:
            pairs = "-"
            if row["compiled"] is not None:
                pairs = ", ".join(f"{_eig(c)} ← {_eig(m)}" for m, c in zip(row["matched"], row["compiled"]))
                extra = row.get("unpaired") or []
                if extra:
                    shown = ", ".join(_eig(e) for e in extra[:4]) + (f", … ({len(extra)})" if len(extra) > 4 else "")
                    pairs += f"; {shown}"
            head = f"  {row['symbol']:<10}  {row['layer']:>5}  {row['head']:>4}"
            click.echo(f"{head}  {_num(row['distance']):>8}  {_num(row.get('core_distance')):>8}  {pairs}")
        if r.get("spectra_note"):
            click.echo(f"  ({r['spectra_note']})")
    m = r["monoid"]
    click.echo(f"monoid: extracted {_monoid(m['extracted'])} · target {_monoid(m['target'])}")
    t = r.get("tables")
    if t and "matching" in t:
        click.echo(f"NFSM tables: heads {t['trained_heads']} (reachable {t['trained_reachable']}) vs compiled "
                   f"{t['compiled_heads']} (reachable {t['compiled_reachable']}): equal up to relabeling: "
                   f"{t['equal_up_to_relabeling']}")  # fmt: skip
    lm = r.get("l_max")
    if lm:
        click.echo(f"L_max (words of length {lm['start']}..{lm['cap']}, {lm['n_words']} words):")
        click.echo("  dtype      trained          compiled")
        comp = lm["compiled"] or [None] * len(lm["dtypes"])
        for dt, tr, co in zip(lm["dtypes"], lm["trained"], comp):
            click.echo(f"  {dt:<9}  {_lmax(tr, lm['cap']):<15}  {_lmax(co, lm['cap'])}")
    if r.get("plot"):
        click.echo(f"plot: {r['plot']}")


def _monoid(m: dict[str, Any]) -> str:
    if m.get("size") is None:
        return f"too large ({m.get('note', '')})"
    kind = "group" if m["is_group"] else ("aperiodic" if m["is_aperiodic"] else "neither group nor aperiodic")
    return f"{m['size']} elements, {kind}"


def _lmax(e: dict[str, Any] | None, cap: int) -> str:
    if e is None:
        return "-"
    if e.get("error"):
        return "error"
    return f"none up to {cap}" if e["l_max"] is None else str(e["l_max"])
