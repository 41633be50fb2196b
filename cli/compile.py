"""`fsa2rnn compile SPEC --target householder|nfsm|diagonal -o MODEL`: exact weights, checked, written atomically."""

from __future__ import annotations

from pathlib import Path

import click

from fsa2rnn.fsa.errors import ConstructionError, FsaError
from fsa2rnn.fsa.library import resolve_spec

from .errors import echo_json, echo_report

TARGETS = ("householder", "nfsm", "diagonal")


@click.command("compile")
@click.argument("spec")
@click.option("--target", type=click.Choice(TARGETS), required=True, help="Which architecture to compile to.")
@click.option(
    "--construction",
    default="auto",
    show_default=True,
    help="householder: auto|permutation|rotation|reflections2|cascade; diagonal: auto|group|cascade.",
)
@click.option("--heads", default="auto", show_default=True, help="nfsm: auto|single|multi.")
@click.option("--layers", "layers_opt", default="auto", show_default=True, help="nfsm: auto|single|stacked.")
@click.option("--margin", type=float, default=None, help="nfsm: logit margin.")
@click.option("--initial", default=None, help="Initial state (name); needed when the spec has none.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Model file to write.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def compile_command(
    spec: str,
    target: str,
    construction: str,
    heads: str,
    layers_opt: str,
    margin: float | None,
    initial: str | None,
    output: str,
    as_json: bool,
) -> None:
    """Compile SPEC into exact weights for TARGET and write MODEL (safetensors with a JSON header)."""
    out_dir = Path(output).parent
    if not out_dir.is_dir():
        raise FsaError(f"cannot write {output!r}: the directory {str(out_dir)!r} does not exist")
    automaton = resolve_spec(spec)
    if target == "nfsm":
        from fsa2rnn.compiler import compile_nfsm

        if construction != "auto":
            raise ConstructionError("--construction applies to the householder and diagonal targets (nfsm: --heads)")
        model = compile_nfsm(automaton, heads=heads, layers=layers_opt, margin=margin, initial=initial)
    elif target == "householder":
        from fsa2rnn.compiler import compile_householder

        model = compile_householder(automaton, construction=construction, initial=initial)
    else:
        from fsa2rnn.compiler import compile_diagonal

        model = compile_diagonal(automaton, construction=construction, initial=initial)
    summary = model.summary
    if not summary.get("verified", False):
        why = summary.get("verification_failure", "")
        raise ConstructionError(
            f"the compiled model failed its exact check{': ' + why if why else ''}; nothing written"
        )
    if target == "nfsm":
        from fsa2rnn.realize.certificate import certificate_summary

        summary["certificate"] = certificate_summary(model)
    try:
        model.save(output)
    except OSError as exc:
        raise FsaError(f"cannot write {output!r}: {exc.strerror or exc}") from None
    summary["output"] = output
    if as_json:
        echo_json(summary)
        return
    certificate = summary.pop("certificate", {})
    echo_report(summary)
    for dtype, cert in certificate.items():
        click.echo(f"certificate {dtype}: {cert['statement']}")
