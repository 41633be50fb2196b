"""`fsa2rnn compile SPEC --target TARGET -o MODEL`: exact weights, checked, written atomically.

The targets, their constructions and their own options come from the target registry (fsa2rnn.compiler.registry):
a plug-in's target and options appear here as the built-ins' do. An option of another target is refused in one
line; a target whose plug-in is broken is reported by name when it is chosen and never hides the others.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..compiler.model import check_header_size
from ..compiler.registry import TARGETS, CompileOption, Target, get_target
from ..fsa.errors import ConstructionError, PluginError, SpecError
from ..fsa.library import resolve_spec
from ..fsa.registry import unknown_name_message
from ..realize.verify import NN_EXTRA
from .errors import echo_json, echo_report
from .options import MODEL_FORMATS, check_output, delivered, max_states_option


class TargetName(click.ParamType):
    """A registered target's name (read from the registry when the command line is parsed)."""

    name = "target"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(TARGETS.names()) + "]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        if value not in TARGETS:
            self.fail(unknown_name_message("target", value, TARGETS.names()), param, ctx)
        return value


def _loadable_targets() -> list[Target]:
    """The registered targets that load (a broken plug-in is left out here; choosing it reports it)."""
    out = []
    for name in TARGETS.names():
        try:
            out.append(TARGETS.get(name))
        except PluginError:
            continue
    return out


def target_options() -> dict[str, tuple[CompileOption, list[str]]]:
    """Every compile option the registered targets declare (the first declaration's help) and the targets taking
    it."""
    out: dict[str, tuple[CompileOption, list[str]]] = {}
    for target in _loadable_targets():
        for opt in target.options:
            out.setdefault(opt.name, (opt, []))[1].append(target.name)
    return out


def _construction_help() -> str:
    choices = "; ".join(f"{t.name} {'|'.join(t.constructions)}" for t in _loadable_targets())
    return f"How to build it (default: the target's first): {choices}."


def _with_target_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    for opt, owners in reversed(list(target_options().values())):
        help_ = f"{', '.join(owners)}: {opt.help}"
        fn = click.option(opt.flag, opt.name, default=None, help=help_)(fn)
    return fn


@click.command("compile")
@click.argument("spec")
@click.option("--target", type=TargetName(), required=True, help="Which architecture to compile to.")
@click.option("--construction", default=None, help=_construction_help())
@_with_target_options
@click.option("--initial", default=None, help="Initial state (name); needed when the spec has none.")
@click.option("-o", "--output", required=True, type=click.Path(), help="Model file to write.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@max_states_option
def compile_command(
    spec: str,
    target: str,
    construction: str | None,
    initial: str | None,
    output: str,
    as_json: bool,
    max_states: int,
    **options: str | None,
) -> None:
    """Compile SPEC into exact weights for TARGET and write MODEL (safetensors with a JSON header)."""
    check_output(output, "--output", MODEL_FORMATS, inputs=(spec,))
    chosen = get_target(target)
    chosen.check_members()  # a plug-in missing a member is reported before anything is compiled
    given = {name: value for name, value in options.items() if value is not None}
    for name in given:
        if chosen.option(name) is None:
            raise SpecError(chosen.refusal(name))
    automaton = resolve_spec(spec, max_states=max_states)
    check_header_size(automaton)
    model = chosen.compile_model(automaton, construction=construction, initial=initial, **given)
    summary = model.summary
    if not summary.get("verified", False):
        why = summary.get("verification_failure", "")
        raise ConstructionError(
            f"the compiled model failed its exact check{': ' + why if why else ''}; nothing written"
        )
    if chosen.compile_report is not None:  # what the target adds (an NFSM's certificates, a radius)
        try:
            summary.update(chosen.load("compile_report")(model))
        except ModuleNotFoundError as exc:  # the base install: the report runs the torch module
            if exc.name != "torch":
                raise
            summary["skipped"] = f"the {chosen.name} target's compile report (it runs the torch module: {NN_EXTRA})"
    summary["output"] = output
    with delivered(output, model.writer()):  # the file appears once the summary is printed
        if as_json:
            echo_json(summary)
            return
        certificate = summary.pop("certificate", {})
        echo_report(summary)
        for dtype, cert in certificate.items():
            click.echo(f"certificate {dtype}: {cert['statement']}")
