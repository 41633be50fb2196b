"""`fsa2rnn verify MODEL`: the exact check and agreement with the automaton on random words at a dtype and length;
with ``--eta`` the robustness verdict at η (realize/conditions.py), L_max under perturbation and a drift plot."""

from __future__ import annotations

from pathlib import Path

import click

from ..compiler.model import CompiledModel
from ..fsa.errors import SpecError
from ..fsa.library import resolve_spec
from ..nn.limits import check_words_length
from ..nn.train.runfiles import check_run_dir
from ..realize.verify import verify_model
from .errors import echo_json, echo_report
from .limit_options import cap_option, limited, seed_option
from .options import check_plot, max_states_option, quiet_option
from .run import DTYPES

#: the first length the L_max search of `verify --eta --lmax` tries (fsa2rnn.realize.conditions.LMAX_START)
LMAX_START = 16


@click.command("verify")
@click.argument("model_path", metavar="MODEL|RUN", type=click.Path())
@click.option("--spec", default=None, help="Automaton to compare with (default: the one the model header describes).")
@click.option("--dtype", type=click.Choice(DTYPES), default="float64", show_default=True)
@limited("length", help="Length of the random words.", default=1000, show_default=True)
@limited("words", "--words", "n_words", help="Random words checked.", default=16, show_default=True)
@seed_option
@click.option(
    "--mode",
    type=click.Choice(("fused", "factors")),
    default="fused",
    show_default=True,
    help="Householder models: apply A(x) as the exact fused product or factor by factor.",
)
@limited("eta", help="Per-step perturbation bound η: add the robust verdict.", default=None)
@click.option(
    "--perturbation",
    type=click.Choice(("random", "adversarial")),
    default="adversarial",
    show_default=True,
    help="With --eta: e_t uniform in the η-ball, or pushed toward the nearest wrong cell.",
)
@click.option("--lmax", is_flag=True,
              help="With --eta: the failing length of η-trajectories (a compiled model: on 32 random words, lengths "
                   "doubled from 16 to --cap).")  # fmt: skip
@cap_option
@click.option("--plot", default=None, type=click.Path(),
              help="With --eta: write the drift against t of 8 random words and the witness word, up to length "
                   "min(--cap, 4096) (.png, .pdf, .svg: the extension is the format).",
              )  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@quiet_option
@max_states_option
def verify_command(
    model_path: str,
    spec: str | None,
    dtype: str,
    length: int,
    n_words: int,
    seed: int,
    mode: str,
    eta: float | None,
    perturbation: str,
    lmax: bool,
    cap: int,
    plot: str | None,
    as_json: bool,
    max_states: int,
) -> None:
    """Check MODEL exactly and on random words; exit code 1 if it does not realize the automaton (or, with --eta,
    is not robust at η). A training run RUN is checked against its task on random words, and with --eta by the same
    theorems (trained A(x): Theorem 4.1's branch; trained NFSM: η* of its attractors; random perturbations)."""
    if eta is None and (lmax or plot is not None):
        raise SpecError("--lmax and --plot need --eta")
    check_words_length(n_words, length)
    if eta is not None:
        if cap < LMAX_START:
            raise SpecError(f"--cap {cap} is below the start length {LMAX_START} of the L_max search")
        check_plot(plot)

    if Path(model_path).is_dir():  # a training run: its task's automaton, realize/trained_robust.py
        from ..realize.trained_robust import verify_run

        check_run_dir(model_path)
        if plot is not None:
            raise SpecError("--plot draws the drift from code points, which compiled models have; not a run's")
        explicit = click.get_current_context().get_parameter_source("perturbation").name == "COMMANDLINE"
        if explicit and perturbation == "adversarial":
            raise SpecError("a trained model has no code points to aim an adversarial perturbation at: use random")
        from ..nn.train import load_run

        report = verify_run(model_path, load_run(model_path), spec=spec, eta=eta, perturbation_kind="random",
                            dtype=dtype, length=length, n_words=n_words, seed=seed, lmax=lmax, cap=cap)  # fmt: skip
        echo_json(report) if as_json else echo_report(report)
        if not report["ok"]:
            raise SystemExit(1)
        return
    model = CompiledModel.load(model_path)
    automaton = resolve_spec(spec, max_states=max_states) if spec is not None else None
    report = verify_model(model, automaton, dtype=dtype, length=length, n_words=n_words, seed=seed, mode=mode)
    if eta is not None:
        from ..realize.conditions import robust_report

        report["robust"] = robust_report(
            model,
            automaton,
            eta=eta,
            perturbation_kind=perturbation,
            dtype=dtype,
            mode=mode,
            lmax=lmax,
            cap=cap,
            plot=plot,
            seed=seed,
        )
        report["ok"] = bool(report["ok"]) and report["robust"]["verdict"] == "robust"
    if as_json:
        echo_json(report)
    else:
        echo_report(report)
    if not report["ok"]:
        raise SystemExit(1)
