"""One exception hierarchy for fsa2rnn (automata-lib style).

Every error a user can cause derives from :class:`FsaError`; the CLI maps it to one line on stderr and exit code 2.
Messages name the offending key, symbol, state or size (and the limit, for :class:`LimitExceededError`).
This module holds every exception class of the package: the modules that raise one import it from here (so the
paths users' scripts know keep working where the class is used, e.g. ``fsa2rnn.nn.layers.ConfigError``,
``fsa2rnn.fsa.aalpy_interop.MissingDependencyError``, ``fsa2rnn.nn.train.trainer.Interrupted``).
"""

from __future__ import annotations


class FsaError(Exception):
    """Root of every error caused by bad input or an inapplicable request."""


class SpecError(FsaError):
    """A malformed automaton spec or spec string (bad JSON, unknown key, wrong type, duplicate name, ...)."""


class UnknownSymbolError(FsaError):
    """A word or a spec refers to a symbol the automaton does not have."""


class SymbolIdError(UnknownSymbolError):
    """A word given to ``Automaton.run`` or to a compiled model's executor (numpy, torch, exact or stepper) is not a
    word (T,) or a batch (B, T) of symbol ids in 0..|Σ|−1 (or names of the alphabet) within each word's length, or
    the lengths do not fit the batch. Raised by ``fsa2rnn.fsa.inputs.check_symbol_ids``, the one check they all run."""


class UnknownStateError(FsaError):
    """A spec or a call refers to a state the automaton does not have."""


class MissingTransitionError(SpecError):
    """A symbol has no transition for some state, or a symbol has no transitions at all."""


class UnknownBuiltinError(SpecError):
    """A spec string names no builtin automaton."""


class LimitExceededError(FsaError):
    """The requested work exceeds a stated limit; the message gives the size and the limit."""


class NotAGroupError(FsaError):
    """A construction that needs a group (every symbol a permutation) got an automaton that is not one."""


class ConstructionError(FsaError):
    """A compiler construction does not apply to the given automaton (the message says why)."""


class OutputFileError(FsaError):
    """An output path cannot be written: empty, not a regular file, in a missing directory, or not writable."""


class DirectoryLockedError(FsaError):
    """A run directory or reproduction folder is held by another process (fsa2rnn.fsa.lock); the message names it."""


class ModelFileError(FsaError):
    """A model file is unreadable, malformed or has been tampered with."""


class ConfigError(FsaError, ValueError):
    """A layer or model configuration is invalid (the message names the field, its value and what is allowed)."""


class OpInputError(FsaError, ValueError):
    """A tensor passed to an op has the wrong shape, dtype or values (the message names it)."""


class MissingDependencyError(FsaError):
    """An optional dependency (AALpy, …) is not installed; the message says how to install it."""


class PluginError(FsaError):
    """A registered extension (a target, layer, task or table from an installed package or a ``register_*`` call)
    cannot be used: it does not import, lacks what its registry requires, or reuses a name. The message names the
    plug-in and where it came from."""


class UnknownTheoremError(FsaError, KeyError):
    """No registered claim has this id."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class CheckFailed(Exception):
    """A theorem check found the claim not to hold on its instances; the message is the evidence (internal to the
    theorem registry: it reports a failed claim, it is not bad input)."""


class ExactnessError(Exception):
    """A model's weights or dynamics fail the exact check (the message says where); raised by the exact interpreters
    and reported by their callers (``verify``, the exact check): a finding about the model, not bad input."""


class RunsFailed(Exception):
    """Some of a batch of independent runs failed (``fsa2rnn train --seeds … --jobs N``); each was reported as it
    happened, with its folder and the first line of its error. ``failed``: their folders; ``total``: the runs."""

    def __init__(self, failed: list[str], total: int) -> None:
        super().__init__(f"{len(failed)} of {total} runs failed: {', '.join(failed)}")
        self.failed, self.total = failed, total


class Interrupted(Exception):
    """Training stopped by Ctrl-C (SIGINT) or SIGTERM (``signum``); the message says where the run stands. ``main``:
    raised on rank 0 (the process that reports it). ``fsa2rnn train`` prints how to resume and exits with status
    128 + ``signum`` (130 for SIGINT, 143 for SIGTERM; fsa2rnn.fsa.signals)."""

    def __init__(self, message: str, main: bool = True, signum: int = 2) -> None:
        super().__init__(message)
        self.main = main
        self.signum = signum
