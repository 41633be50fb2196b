"""`fsa2rnn compile SPEC --target householder|nfsm|diagonal|affine|pdssm -o MODEL`: exact weights, checked, written
atomically."""

from __future__ import annotations

import click

from fsa2rnn.compiler import compile_diagonal, compile_householder, compile_nfsm, compile_pdssm
from fsa2rnn.compiler.definite_to_affine import compile_affine
from fsa2rnn.compiler.model import check_header_size
from fsa2rnn.fsa.errors import ConstructionError
from fsa2rnn.fsa.library import resolve_spec
from fsa2rnn.realize.verify import NN_EXTRA, optional_torch

from .errors import echo_json, echo_report
from .options import MODEL_FORMATS, check_output, delivered, max_states_option

TARGETS = ("householder", "nfsm", "diagonal", "affine", "pdssm")


@click.command("compile")
@click.argument("spec")
@click.option("--target", type=click.Choice(TARGETS), required=True, help="Which architecture to compile to.")
@click.option(
    "--construction",
    default="auto",
    show_default=True,
    help="householder: auto|permutation|rotation|reflections2|cascade; diagonal: auto|group|cascade|series; "
    "affine: auto|shift_register.",
)
@click.option("--heads", default="auto", show_default=True, help="nfsm: auto|single|multi.")
@click.option("--layers", "layers_opt", default="auto", show_default=True, help="nfsm: auto|single|stacked.")
@click.option("--margin", type=float, default=None, help="nfsm: logit margin.")
@click.option("--initial", default=None, help="Initial state (name); needed when the spec has none.")
@click.option("-o", "--output", required=True, type=click.Path(), help="Model file to write.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@max_states_option
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
    max_states: int,
) -> None:
    """Compile SPEC into exact weights for TARGET and write MODEL (safetensors with a JSON header)."""
    check_output(output, "--output", MODEL_FORMATS, inputs=(spec,))
    automaton = resolve_spec(spec, max_states=max_states)
    check_header_size(automaton)
    if target == "nfsm":
        if construction != "auto":
            raise ConstructionError("--construction applies to the householder and diagonal targets (nfsm: --heads)")
        model = compile_nfsm(automaton, heads=heads, layers=layers_opt, margin=margin, initial=initial)
    elif target == "householder":
        model = compile_householder(automaton, construction=construction, initial=initial)
    elif target == "affine":  # definite automata only; Theorem 4.1 refuses the rest

        if construction not in ("auto", "shift_register"):
            raise ConstructionError(f"the affine target has one construction, shift_register (got {construction!r})")
        model = compile_affine(automaton, initial=initial)
    elif target == "pdssm":  # any automaton: P(x) = δ_x as index arrays (compiler/automaton_to_pdssm.py)

        if construction not in ("auto", "one_hot"):
            raise ConstructionError(f"the pdssm target has one construction, one_hot (got {construction!r})")
        model = compile_pdssm(automaton, initial=initial)
    else:
        model = compile_diagonal(automaton, construction=construction, initial=initial)
    summary = model.summary
    if not summary.get("verified", False):
        why = summary.get("verification_failure", "")
        raise ConstructionError(
            f"the compiled model failed its exact check{': ' + why if why else ''}; nothing written"
        )
    if target == "nfsm":
        if optional_torch() is None:  # the base install: the float certificate runs the torch module
            summary["skipped"] = f"the float certificate (it runs the torch module: {NN_EXTRA})"
        else:
            from fsa2rnn.realize.certificate import certificate_summary

            summary["certificate"] = certificate_summary(model)
    if target == "affine":
        from fsa2rnn.realize.conditions import check_conditions

        radius = check_conditions(model, 0.0, simulate=False)["radius"]
        summary["robust"] = f"certified robust for every η < {radius:.6g} (Theorems 3.2 and 4.1 (ii))"
    summary["output"] = output
    with delivered(output, model.writer()):  # the file appears once the summary is printed
        if as_json:
            echo_json(summary)
            return
        certificate = summary.pop("certificate", {})
        echo_report(summary)
        for dtype, cert in certificate.items():
            click.echo(f"certificate {dtype}: {cert['statement']}")
