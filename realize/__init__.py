"""Realization checks: exact (rational) checks, agreement at a dtype and length, margin certificates, extraction of
the automaton a model implements (white-box tables, samples, L*), trained versus compiled, η-trajectories and
Theorem 4.1's conditions.

The public names are exported here and loaded on first use (fsa2rnn.fsa.lazy), so that ``fsa2rnn verify`` at
float64 and the base install never import torch through this package:

- :func:`verify_model` (verify.py), :func:`margin_certificate` (certificate.py);
- :func:`extract`, :func:`extract_and_compare` (extract.py), :func:`compare_lstar` (lstar.py), :func:`relate`,
  :func:`task_target`, :class:`MooreMachine` (moore.py);
- :func:`compare`, :func:`plot_spectra` (compare.py);
- :func:`stepper_for` (steppers.py), :func:`l_max`, :func:`drift`, :func:`plot_drift`, :func:`one_thread`
  (robust.py), :func:`check_conditions`, :func:`robust_report` (conditions.py).

``extract`` and ``compare`` are functions here, also after their modules are imported (:func:`exports_win`).
"""

from __future__ import annotations

from ..fsa.lazy import exports_win, lazy_getattr

_NAMES = {
    "verify_model": ("verify", "verify_model"),
    "automaton_from_model": ("verify", "automaton_from_model"),
    "margin_certificate": ("certificate", "margin_certificate"),
    "extract": ("extract", "extract"),
    "extract_and_compare": ("extract", "extract_and_compare"),
    "Extraction": ("extract", "Extraction"),
    "compare_lstar": ("lstar", "compare_lstar"),
    "MooreMachine": ("moore", "MooreMachine"),
    "relate": ("moore", "relate"),
    "task_target": ("moore", "task_target"),
    "compare": ("compare", "compare"),
    "plot_spectra": ("compare", "plot_spectra"),
    "stepper_for": ("steppers", "stepper_for"),
    "Stepper": ("steppers", "Stepper"),
    "l_max": ("robust", "l_max"),
    "drift": ("robust", "drift"),
    "plot_drift": ("robust", "plot_drift"),
    "one_thread": ("robust", "one_thread"),
    "check_conditions": ("conditions", "check_conditions"),
    "robust_report": ("conditions", "robust_report"),
}
__getattr__ = lazy_getattr(__name__, _NAMES)
exports_win(__name__, ("extract", "compare"))
__all__ = sorted(_NAMES)
