"""The compile targets: one :class:`Target` per folder of compiler/targets/ (or per plug-in), in one registry.

A target says everything the rest of fsa2rnn needs to compile to it, run what it compiled and check it:

- ``compile`` — ``compile(automaton, *, construction, initial, **options)`` → CompiledModel, its ``constructions``
  (the first is the default) and its ``options`` (:class:`CompileOption`: what ``fsa2rnn compile`` offers beyond
  ``--construction`` and ``--initial``; an option of another target is refused);
- ``program`` — the :class:`~fsa2rnn.compiler.program.Program` subclass that reads its models (``parse``);
- its executors per backend: ``numpy_executor`` (an :class:`~fsa2rnn.compiler.executor.Executor` subclass, built
  from the CompiledModel: what ``fsa2rnn run`` runs at float64), ``exact_interpreter`` (built from the program:
  integer arithmetic) and ``torch_module`` (nn/compiled/<name>.py: every dtype, and the recurrent form ``initial``,
  ``step``, ``decode``, ``read`` with its numpy twin ``numpy_step``);
- ``stepper`` — what perturbs the recurrent form (realize/steppers.py ``Stepper`` by default);
- its checks: ``check`` (the exact check ``verify`` runs: ``check(model, automaton, dtype=…)`` → (report entries,
  ok)), ``robustness`` (the (R1)–(R3) verdict of realize/conditions.py; None: no robustness check),
  ``realized_automaton`` (the automaton the model's exact dynamics realize), ``extraction`` (the exact Moore machine
  a model implements, where its configurations can be enumerated; None: sample-based extraction through the
  module's ``hidden`` states), ``compile_report`` (summary entries ``fsa2rnn compile`` adds) and ``sequence_model``
  (the conversion into a trainable SequenceModel; None: none);
- ``torch_variants`` — the keyword sets of the torch module's ``predict_states`` the conformance test runs.

Members are objects or ``"package.module:attr"`` strings. compiler/ stays torch-free: the members from higher layers
(the torch module in nn/, the stepper and the checks in realize/) are strings, resolved only by nn/, realize/ and
cli/ through :func:`~fsa2rnn.fsa.registry.resolve_ref` (:meth:`Target.load`); tests/contracts/test_layering.py
checks where each string points. Built-in targets are declared as entry points of the ``fsa2rnn.targets`` group in
pyproject.toml, exactly as a plug-in declares its own; scripts and notebooks call :func:`register_target`.
Outside this module and the targets' own folders no code branches on a target's name
(tests/contracts/test_target_branches.py).
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from ..fsa.automaton import Automaton
from ..fsa.errors import ConstructionError, FsaError, ModelFileError, PluginError, SpecError
from ..fsa.registry import Registry, resolve_ref
from .model import CompiledModel
from .program import Program

#: the entry-point group of compile targets
GROUP = "fsa2rnn.targets"


@dataclass(frozen=True)
class CompileOption:
    """A target's compile option: the keyword ``name`` of its compile function, ``fsa2rnn compile --name`` (``_`` as
    ``-``). ``kind`` converts the command line's text (str, int or float); ``choices`` names the values allowed in
    the help (the compile function itself refuses any other, with its own message)."""

    name: str
    help: str
    kind: type = str
    choices: tuple[str, ...] | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def convert(self, value: Any) -> Any:
        """The option's value from text (or a Python value); SpecError naming the flag when it is not a number a
        numeric option needs."""
        if isinstance(value, str) and self.kind is not str:
            try:
                return self.kind(value)
            except ValueError:
                raise SpecError(f"{self.flag} takes a {self.kind.__name__}, got {value!r}") from None
        return value


#: members that name a higher layer's object: strings only (compiler/ never imports them)
HIGHER_MEMBERS = (
    "torch_module",
    "stepper",
    "check",
    "robustness",
    "realized_automaton",
    "extraction",
    "compile_report",
    "sequence_model",
)


@dataclass(frozen=True)
class Target:
    """One compile target (module docstring). Members given as ``"module:attr"`` strings are resolved on first use
    by :meth:`load`."""

    name: str
    description: str
    compile: Any
    constructions: tuple[str, ...]
    program: Any
    numpy_executor: Any
    exact_interpreter: Any
    torch_module: str
    check: str
    options: tuple[CompileOption, ...] = ()
    stepper: str = "fsa2rnn.realize.steppers:Stepper"
    robustness: str | None = None
    realized_automaton: str | None = None
    extraction: str | None = None
    compile_report: str | None = None
    sequence_model: str | None = None
    torch_variants: tuple[Mapping[str, Any], ...] = ({},)
    docs: str | None = None  #: the target's page in the docs (relative to docs/)
    check_summary: str = "its exact check"  #: what ``check`` does, in a few words (``verify`` says it when skipped)
    _loaded: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def load(self, member: str) -> Any:
        """The object of ``member`` (a string member resolved through ``resolve_ref`` once, then checked for what
        it must provide); None when unset. A broken member raises PluginError naming the target and the member."""
        if member not in self._loaded:
            value = getattr(self, member)
            what = f"target {self.name!r} {member}"
            if self.name in TARGETS and not TARGETS.is_builtin(self.name):
                what += f" (from {TARGETS.origin(self.name)})"
            obj = resolve_ref(value, what=what) if isinstance(value, str) else value
            if obj is not None:
                _check_member(what, member, obj)
            with _LOCK:
                self._loaded[member] = obj
        return self._loaded[member]

    def check_members(self) -> None:
        """Load every compiler-level member (compile function, program, numpy executor, exact interpreter): a
        plug-in that lacks one, or a method of one, is reported (PluginError) before anything is compiled with it."""
        for member in ("compile", "program", "numpy_executor", "exact_interpreter"):
            self.load(member)

    def option(self, name: str) -> CompileOption | None:
        return next((o for o in self.options if o.name == name), None)

    def compile_model(
        self,
        automaton: Automaton,
        *,
        construction: str | None = None,
        initial: int | str | None = None,
        **options: Any,
    ) -> CompiledModel:
        """Compile ``automaton`` with a construction of this target (default: its first) and its own options; a
        construction or option it does not have is refused in one line naming what it has."""
        construction = self.constructions[0] if construction is None else construction
        if construction not in self.constructions:
            raise ConstructionError(
                f"unknown construction {construction!r} for target {self.name!r} (choose from "
                f"{', '.join(self.constructions)})"
            )
        values = {}
        for name, value in options.items():
            opt = self.option(name)
            if opt is None:
                raise SpecError(self.refusal(name))
            values[name] = opt.convert(value)
        return self.load("compile")(automaton, construction=construction, initial=initial, **values)

    def refusal(self, option: str) -> str:
        """The one-line message for an option this target does not take."""
        own = ", ".join(o.flag for o in self.options) or "none beyond --construction and --initial"
        flag = "--" + option.replace("_", "-")
        return f"{flag} does not apply to target {self.name!r} (its options: {own})"


_LOCK = threading.RLock()


#: what a member must provide once loaded: callable, and these methods (None: callable only)
_NEEDS: dict[str, tuple[str, ...]] = {
    "compile": (),
    "program": ("parse",),
    "numpy_executor": ("predict_states", "predict_accept"),
    "exact_interpreter": (),
    "torch_module": ("predict_states", "predict_accept", "initial", "step", "decode", "read", "code_blocks"),
    "stepper": (),
    "check": (),
    "robustness": (),
    "realized_automaton": (),
    "extraction": (),
    "compile_report": (),
    "sequence_model": (),
}


def _check_member(what: str, member: str, obj: Any) -> None:
    if not callable(obj):
        raise PluginError(f"{what} is a {type(obj).__name__}, not callable")
    missing = [m for m in _NEEDS.get(member, ()) if not callable(getattr(obj, m, None))]
    if missing:
        raise PluginError(f"{what} has no method {', '.join(m + '()' for m in missing)}")
    if member == "program" and not (inspect.isclass(obj) and issubclass(obj, Program)):
        raise PluginError(f"{what} is not a subclass of fsa2rnn.compiler.program.Program")


def _check_target(name: str, obj: Any) -> Target:
    """What the registry accepts: a :class:`Target` named ``name`` whose members are well formed (the members are
    imported and checked when first used, :meth:`Target.load`)."""
    if not isinstance(obj, Target):
        raise PluginError(f"is a {type(obj).__name__}, not an fsa2rnn.compiler.Target")
    if obj.name != name:
        raise PluginError(f"is registered as {name!r} but names itself {obj.name!r}")
    if not obj.constructions or not all(isinstance(c, str) for c in obj.constructions):
        raise PluginError("has no constructions (a tuple of names, the default first)")
    for member in ("compile", "program", "numpy_executor", "exact_interpreter", "torch_module", "check"):
        if getattr(obj, member) is None:
            raise PluginError(f"has no {member}")
    for member in HIGHER_MEMBERS:
        value = getattr(obj, member)
        if value is not None and not isinstance(value, str):
            raise PluginError(f"{member} must be a 'module:attr' string (a higher layer's object), got {value!r}")
    return obj


#: the registry of compile targets (entry points of the ``fsa2rnn.targets`` group, and ``register_target``)
TARGETS: Registry[Target] = Registry(GROUP, "target", check=_check_target, unknown=SpecError)


def register_target(target: Target | str, *, name: str | None = None, replace: bool = False) -> None:
    """Register a :class:`Target` (or a ``"module:attr"`` reference to one) for scripts and notebooks; installed
    packages declare an entry point of the ``fsa2rnn.targets`` group instead."""
    TARGETS.register(name or getattr(target, "name", None) or "", target, replace=replace)


def get_target(name: str) -> Target:
    """The target called ``name``; SpecError naming the registered ones, PluginError for a broken plug-in."""
    return TARGETS.get(name)


def target_names() -> list[str]:
    """Every registered target's name (built-ins first); nothing is imported."""
    return TARGETS.names()


def target_of(model: CompiledModel) -> Target:
    """The target of a compiled model (its header's ``target``); ModelFileError when none is registered."""
    name = model.header.get("target")
    if not isinstance(name, str) or name not in TARGETS:
        raise ModelFileError(f"unknown model target {name!r} (registered: {', '.join(TARGETS.names())})")
    return TARGETS.get(name)


def program_of(model: CompiledModel, *, integrity: bool = True, expect: type[Program] | None = None) -> Program:
    """The parsed, validated program of a compiled model; its integrity hash is checked when it carries one
    (``integrity=False``: not — the exact check judges edited weights by what they compute). ``expect``: the
    program class a caller needs (ModelFileError naming the model's target otherwise)."""
    if integrity:
        model.check_integrity()
    target = target_of(model)
    parse: Callable[[CompiledModel], Program] = target.load("program").parse
    try:
        program = parse(model)
    except FsaError:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ModelFileError(f"model header of target {target.name!r} is malformed: {exc!r}") from None
    if expect is not None and not isinstance(program, expect):
        raise ModelFileError(f"a model of target {target.name!r} is not what this needs ({expect.__name__})")
    return program


def load_executor(source: str | Path | CompiledModel) -> Any:
    """The numpy executor of a model file or CompiledModel (a file must pass ``CompiledModel.load``'s checks):
    ``predict_states(ids, lengths=None)`` and ``predict_accept`` at float64, without torch (``fsa2rnn run``)."""
    model = source if isinstance(source, CompiledModel) else CompiledModel.load(source)
    model.check_integrity()
    return target_of(model).load("numpy_executor")(model)


def exact_executor(model: CompiledModel) -> Any:
    """The exact interpreter of a compiled model (``predict_states(ids, lengths=None)`` in integer arithmetic)."""
    program = program_of(model)
    return target_of(model).load("exact_interpreter")(program)


def compile_model(automaton: Automaton, target: str, **kwargs: Any) -> CompiledModel:
    """Compile ``automaton`` to the target called ``target`` (:meth:`Target.compile_model`: ``construction``,
    ``initial`` and the target's own options)."""
    return get_target(target).compile_model(automaton, **kwargs)


def member_names() -> list[str]:
    """The members of a Target (for the docs and the layering test)."""
    return [f.name for f in fields(Target) if not f.name.startswith("_")]


__all__ = [
    "GROUP",
    "HIGHER_MEMBERS",
    "TARGETS",
    "CompileOption",
    "Target",
    "compile_model",
    "exact_executor",
    "get_target",
    "load_executor",
    "member_names",
    "program_of",
    "register_target",
    "target_names",
    "target_of",
]
