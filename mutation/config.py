"""What the mutation runs mutate, and which test files may kill each module's mutants (the module → tests map).

Per mutant the runner narrows a module's test files down to the tests that execute the mutated lines (a line trace of
the unmutated module, run once and cached), fastest first, and stops at the first failure. Tests slower than
``MAX_TEST_SECONDS`` under the trace are left out of the runs (the report names them)."""

from __future__ import annotations

#: the modules of each phase, by path relative to the repository root
PHASES: dict[str, list[str]] = {
    "1": [
        "realize/certificate.py",
        "realize/conditions.py",
        "realize/spectral.py",
        "realize/compare.py",
        "realize/extract.py",
        "realize/steppers.py",
    ],
}

#: test files whose tests may kill a module's mutants (a superset: the trace keeps those that run the lines)
TESTS: dict[str, list[str]] = {
    "realize/certificate.py": [
        "tests/test_certificate.py",
        "tests/test_nfsm.py",
        "tests/test_nfsm_multihead.py",
        "tests/test_theorems.py",
        "tests/test_theorem_mutants.py",
    ],
    "realize/conditions.py": [
        "tests/test_robust.py",
        "tests/test_affine.py",
        "tests/test_theorems.py",
        "tests/test_theorem_mutants.py",
        "tests/test_hostile_inputs.py",
    ],
    "realize/spectral.py": [
        "tests/test_spectral_branch.py",
        "tests/test_robust.py",
        "tests/test_affine.py",
        "tests/test_theorems.py",
        "tests/test_theorem_mutants.py",
    ],
    "realize/compare.py": [
        "tests/test_extract_models.py",
        "tests/test_pdssm_target.py",
        "tests/test_hostile_inputs.py",
    ],
    "realize/extract.py": [
        "tests/test_extract.py",
        "tests/test_extract_models.py",
        "tests/test_nfsm.py",
        "tests/test_certificate.py",
        "tests/test_table_predict.py",
        "tests/test_theorem_mutants.py",
    ],
    "realize/steppers.py": [
        "tests/test_robust.py",
        "tests/test_trajectory.py",
        "tests/test_conformance.py",
        "tests/test_theorems.py",
        "tests/test_theorem_mutants.py",
    ],
}

#: tests slower than this (seconds, under the line trace) are not run per mutant
MAX_TEST_SECONDS = 10.0
