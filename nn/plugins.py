"""Plug-in architectures named by import path: ``--model package.module:Name`` (with ``--model-args JSON``).

A **plug-in layer** is a callable ``(d_model, **args)`` returning a ``torch.nn.Module`` that maps (B, T, d_model)
to (B, T, d_model) causally; it sits where a built-in layer sits (nn/model.py's pre-norm residual block). A
**plug-in whole model** is a callable ``(n_symbols, n_classes, **args)`` returning a module that maps symbol ids
(B, T) to per-position class logits (B, T, C); it is declared as such by the attribute
``fsa2rnn_whole_model = True`` on the callable (never guessed from a signature). What each tool needs from either
is the capabilities table of nn/capabilities.py.

A run records its plug-in in ``config.json`` (the model config's ``plugin``: :func:`plugin_record` — the import
path, the kind, the distribution's name and version and a hash of the module's source). **A run directory never
makes fsa2rnn import code on its own**: :func:`guard` refuses a recorded import path that the command line did not
name (``--model``) and that no installed package declares as an ``fsa2rnn.layers`` entry point, before anything is
imported; :func:`check_source` then refuses a module whose source changed since the run, unless asked
(``--allow-changed-plugin``). This module imports no torch.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import inspect
import json
import re
import sys
from collections.abc import Iterable
from typing import Any

from ..fsa.errors import PluginError, SpecError
from ..fsa.registry import resolve_ref

#: ``package.module:Name`` (Name may be dotted)
_REF = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
#: the attribute that declares a callable a whole model
WHOLE_MODEL = "fsa2rnn_whole_model"
#: the option that accepts a changed plug-in source
ALLOW_CHANGED = "--allow-changed-plugin"
#: the module prefix of fla's layers (nn/layers/fla_adapter.py adapts their forward)
FLA = "fla"


def is_ref(name: Any) -> bool:
    """Whether ``name`` names a plug-in by import path (``package.module:Name``)."""
    return isinstance(name, str) and ":" in name


def check_ref(name: str, option: str = "--model") -> str:
    """``name`` if it is of the form ``package.module:Name``; SpecError naming ``option`` otherwise (torch-free)."""
    if not _REF.match(name):
        raise SpecError(f"{option} {name!r} is not of the form package.module:Name (or a registered layer name)")
    return name


def parse_args(text: str | dict | None, option: str = "--model-args") -> dict[str, Any]:
    """The keyword arguments of ``--model-args`` (a JSON object with string keys); SpecError in one line."""
    if text is None:
        return {}
    if isinstance(text, dict):
        data: Any = text
    else:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            raise SpecError(f"{option} must be a JSON object such as '{{\"hidden\": 32}}', got {text!r}") from None
    if not isinstance(data, dict):
        raise SpecError(f"{option} must be a JSON object (keyword arguments), got {type(data).__name__}")
    if any(not k.isidentifier() for k in data):
        bad = next(k for k in data if not k.isidentifier())
        raise SpecError(f"{option}: {bad!r} is not a keyword argument name")
    return data


def load(ref: str) -> Any:
    """The callable named by ``ref``, imported (PluginError naming it: no import, no such name, not callable)."""
    check_ref(ref)
    if ref.split(":")[0].split(".")[0] == FLA:
        from .layers.fla_adapter import fla_factory

        return fla_factory(ref.split(":", 1)[1])
    obj = resolve_ref(ref, what="plug-in")
    if not callable(obj):
        raise PluginError(f"plug-in {ref!r} is {type(obj).__name__}, not a class or function")
    return obj


def kind_of(obj: Any) -> str:
    """``"model"`` for a callable declared a whole model (:data:`WHOLE_MODEL`), else ``"layer"``."""
    return "model" if getattr(obj, WHOLE_MODEL, False) is True else "layer"


def check_signature(ref: str, obj: Any, kind: str, args: dict[str, Any]) -> None:
    """The callable takes ``(d_model, **args)`` (a layer) or ``(n_symbols, n_classes, **args)`` (a whole model);
    PluginError naming the plug-in and its signature otherwise."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):  # a builtin without a signature: called and judged by its result
        return
    positional = (1,) if kind == "layer" else (1, 2)
    try:
        sig.bind(*positional, **args)
    except TypeError as exc:
        want = "(d_model, **args)" if kind == "layer" else "(n_symbols, n_classes, **args)"
        given = f" with --model-args {json.dumps(args)}" if args else ""
        raise PluginError(f"plug-in {ref!r}: its signature {sig} does not take {want}{given} ({exc})") from None


def distribution_of(module_name: str) -> tuple[str | None, str | None]:
    """(name, version) of the installed distribution that provides ``module_name``'s top-level package."""
    top = module_name.split(".")[0]
    try:
        names = importlib.metadata.packages_distributions().get(top) or []
    except Exception:  # a broken metadata directory elsewhere on sys.path must not stop a run
        names = []
    for name in names:
        try:
            return name, importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None, None


def source_hash(obj: Any) -> str | None:
    """sha256 (first 16 hex digits) of the source file of the module defining ``obj`` (None if it has none)."""
    module = sys.modules.get(getattr(obj, "__module__", "") or "")
    path = getattr(module, "__file__", None)
    if not path:
        return None
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()[:16]
    except OSError:
        return None


def plugin_record(ref: str, obj: Any) -> dict[str, Any]:
    """What a run records of its plug-in: ``{ref, kind, distribution, version, source_hash}``."""
    dist, version = distribution_of(ref.split(":")[0])
    return {"ref": ref, "kind": kind_of(obj), "distribution": dist, "version": version, "source_hash": source_hash(obj)}


def installed_refs() -> set[str]:
    """The import paths that installed packages declare as ``fsa2rnn.layers`` (or ``fsa2rnn.models``) entry
    points: these a run directory may name without ``--model``."""
    out: set[str] = set()
    for group in ("fsa2rnn.layers", "fsa2rnn.models"):
        try:
            out |= {ep.value.strip() for ep in importlib.metadata.entry_points(group=group)}
        except Exception:
            pass
    return out


def guard(ref: str, where: str, given: Iterable[str]) -> None:
    """Refuse, before importing anything, a plug-in that a run directory ``where`` names but the command line did
    not (``given``: the import paths named there) and no installed entry point declares."""
    if ref in set(given) or ref in installed_refs():
        return
    raise SpecError(
        f"{where} was trained with the plug-in {ref!r}, which fsa2rnn does not import because a run directory names "
        f"it: add --model {ref} to import it"
    )


def check_source(record: dict[str, Any], where: str, allow_changed: bool) -> None:
    """Refuse a plug-in whose module source changed since the run ``where`` recorded it (unless ``allow_changed``);
    imports it (call :func:`guard` first)."""
    obj = load(record["ref"])
    now = source_hash(obj)
    was = record.get("source_hash")
    if was and now and was != now and not allow_changed:
        raise SpecError(
            f"the plug-in {record['ref']!r} changed since {where} was trained (source hash {was}, now {now}): pass "
            f"{ALLOW_CHANGED} to use it anyway"
        )


__all__ = [
    "ALLOW_CHANGED",
    "WHOLE_MODEL",
    "check_ref",
    "check_signature",
    "check_source",
    "guard",
    "installed_refs",
    "is_ref",
    "kind_of",
    "load",
    "parse_args",
    "plugin_record",
    "source_hash",
]
