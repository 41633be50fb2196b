"""`fsa2rnn verify MODEL`: the exact check and agreement with the automaton on random words at a dtype and length."""

from __future__ import annotations

import click

from .errors import echo_json, echo_report
from .run import DTYPES


@click.command("verify")
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.option("--spec", default=None, help="Automaton to compare with (default: the one the model header describes).")
@click.option("--dtype", type=click.Choice(DTYPES), default="float64", show_default=True)
@click.option(
    "--length", type=click.IntRange(1, 10**7), default=1000, show_default=True, help="Length of random words."
)
@click.option("--words", "n_words", type=click.IntRange(1, 10**5), default=16, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--mode",
    type=click.Choice(("fused", "factors")),
    default="fused",
    show_default=True,
    help="Householder models: apply A(x) as the exact fused product or factor by factor.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def verify_command(
    model_path: str, spec: str | None, dtype: str, length: int, n_words: int, seed: int, mode: str, as_json: bool
) -> None:
    """Check MODEL exactly and on random words; exit code 1 if it does not realize the automaton."""
    from fsa2rnn.compiler.model import CompiledModel
    from fsa2rnn.fsa.library import resolve_spec
    from fsa2rnn.realize.verify import verify_model

    model = CompiledModel.load(model_path)
    automaton = resolve_spec(spec) if spec is not None else None
    report = verify_model(model, automaton, dtype=dtype, length=length, n_words=n_words, seed=seed, mode=mode)
    if as_json:
        echo_json(report)
    else:
        echo_report(report)
    if not report["ok"]:
        raise SystemExit(1)
