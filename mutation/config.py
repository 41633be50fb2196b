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
    # the exact interpreters and the compile targets (compiler/targets/<name>/)
    "2": [
        "compiler/targets/lrnn/exact.py",
        "compiler/targets/nfsm/exact.py",
        "compiler/targets/affine/exact.py",
        "compiler/targets/pdssm/exact.py",
        "compiler/targets/lrnn/cascade_to_householder.py",
        "compiler/targets/lrnn/group_to_householder.py",
        "compiler/targets/lrnn/cyclic_to_rotation.py",
        "compiler/targets/lrnn/diagonal.py",
        "compiler/targets/nfsm/automaton_to_nfsm.py",
        "compiler/targets/nfsm/heads.py",
        "compiler/targets/affine/definite_to_affine.py",
        "compiler/targets/pdssm/automaton_to_pdssm.py",
    ],
    # the transition monoid, Green's classes, D-classes, the holonomy decomposition
    "3": ["fsa/monoid.py", "fsa/green.py", "fsa/dclasses.py", "fsa/holonomy.py"],
    # the torch scans' chunk logic (the triton kernels and the C kernel are never mutated)
    "4": [
        "nn/ops/diag_scan/torch_scan.py",
        "nn/ops/diag_scan/selective.py",
        "nn/ops/lrnn_scan/torch_scan.py",
        "nn/ops/pd_scan/torch_scan.py",
        "nn/ops/delta_product/chunk.py",
        "compiler/scans/table_scan.py",
        "compiler/scans/affine_scan.py",
    ],
}

_EXACT = ["tests/compiler/test_exact_units.py", "tests/compiler/test_exact_check.py",
          "tests/contracts/test_conformance.py", "tests/compiler/test_model_integrity.py"]
_LRNN = ["tests/compiler/test_householder.py", "tests/compiler/test_householder_random.py",
         "tests/compiler/test_diagonal.py", "tests/compiler/test_gh.py",
         "tests/fsa/test_group_series.py", "tests/nn/test_lrnn.py"]  # fmt: skip
_NFSM = ["tests/compiler/test_nfsm.py", "tests/compiler/test_nfsm_multihead.py",
         "tests/compiler/test_nfsm_families.py", "tests/realize/test_extract.py"]
_MONOID = ["tests/fsa/test_monoid.py", "tests/fsa/test_green.py", "tests/fsa/test_dclasses.py",
           "tests/fsa/test_classify.py",
           "tests/fsa/test_holonomy_oracles.py", "tests/fsa/test_holonomy_skeleton.py",
           "tests/fsa/test_holonomy_emulation.py",
           "tests/fsa/test_cascade.py", "tests/fsa/test_group_budget.py",
           "tests/fsa/test_monoid_engine.py"]  # fmt: skip

#: the planners of the scans (chunk and tile lengths) against their documented contracts
_PLANS = "tests/nn/test_scan_plans.py"
_NUMPY_PLANS = "tests/compiler/test_scan_plans.py"  # also: affine_scan chunks words as lrnn_scan does

#: the table of work limits in docs/limits.md, read against the modules' MAX_… constants
_LIMITS = "tests/contracts/test_documented_limits.py"

#: test files whose tests may kill a module's mutants (a superset: the trace keeps those that run the lines)
TESTS: dict[str, list[str]] = {
    "realize/certificate.py": [
        "tests/realize/test_certificate.py",
        "tests/compiler/test_nfsm.py",
        "tests/compiler/test_nfsm_multihead.py",
        "tests/realize/test_theorems.py",
        "tests/realize/test_theorem_mutants.py",
    ],
    "realize/conditions.py": [
        "tests/realize/test_robust.py",
        "tests/realize/test_robust_report.py",
        "tests/realize/test_spectral_branch.py",
        "tests/compiler/test_affine.py",
        "tests/realize/test_theorems.py",
        "tests/realize/test_theorem_mutants.py",
        "tests/contracts/test_hostile_inputs.py",
    ],
    "realize/spectral.py": [
        "tests/realize/test_spectral_branch.py",
        "tests/realize/test_robust.py",
        "tests/compiler/test_affine.py",
        "tests/realize/test_theorems.py",
        "tests/realize/test_theorem_mutants.py",
    ],
    "realize/compare.py": [
        "tests/realize/test_compare.py",
        "tests/realize/test_extract_models.py",
        "tests/compiler/test_pdssm_target.py",
        "tests/contracts/test_hostile_inputs.py",
    ],
    "realize/extract.py": [
        "tests/realize/test_extract_units.py",
        "tests/realize/test_extract.py",
        "tests/realize/test_extract_models.py",
        "tests/compiler/test_nfsm.py",
        "tests/realize/test_certificate.py",
        "tests/nn/test_table_predict.py",
        "tests/realize/test_theorem_mutants.py",
    ],
    "realize/steppers.py": [
        "tests/realize/test_steppers.py",
        "tests/realize/test_robust.py",
        "tests/realize/test_trajectory.py",
        "tests/contracts/test_conformance.py",
        "tests/realize/test_theorems.py",
        "tests/realize/test_theorem_mutants.py",
    ],
    "compiler/targets/lrnn/exact.py": [*_EXACT, *_LRNN, "tests/compiler/test_lrnn_exact_units.py", _LIMITS],
    "compiler/targets/nfsm/exact.py": [*_EXACT, *_NFSM],
    "compiler/targets/affine/exact.py": [*_EXACT, "tests/compiler/test_affine.py"],
    "compiler/targets/pdssm/exact.py": [*_EXACT, "tests/compiler/test_pdssm_target.py"],
    "compiler/targets/lrnn/cascade_to_householder.py": [*_LRNN, "tests/compiler/test_cascade_units.py",
                                                        "tests/contracts/test_conformance.py"],
    "compiler/targets/lrnn/group_to_householder.py": [*_LRNN, "tests/fsa/test_permutation_rep.py"],
    "compiler/targets/lrnn/cyclic_to_rotation.py": _LRNN,
    "compiler/targets/lrnn/diagonal.py": [*_LRNN, "tests/contracts/test_conformance.py",
                                          "tests/compiler/test_diagonal_units.py"],
    "compiler/targets/nfsm/automaton_to_nfsm.py": [*_NFSM, "tests/contracts/test_conformance.py"],
    "compiler/targets/nfsm/heads.py": [*_NFSM, "tests/contracts/test_conformance.py",
                                       "tests/compiler/test_nfsm_plans.py"],
    "compiler/targets/affine/definite_to_affine.py": ["tests/compiler/test_affine.py",
                                                      "tests/compiler/test_affine_units.py",
                                                      "tests/realize/test_robust.py",
                                                      "tests/compiler/test_runtime.py",
                                                      "tests/realize/test_trajectory.py"],
    "compiler/targets/pdssm/automaton_to_pdssm.py": ["tests/compiler/test_pdssm_target.py",
                                                     "tests/compiler/test_runtime.py", *_EXACT],
    "fsa/monoid.py": _MONOID,
    "fsa/green.py": [*_MONOID, "tests/fsa/test_green_units.py"],
    "fsa/dclasses.py": [*_MONOID, "tests/fsa/test_dclasses_units.py"],
    "fsa/holonomy.py": _MONOID,
    "nn/ops/diag_scan/torch_scan.py": ["tests/nn/test_op_diag_scan.py", "tests/nn/test_op_selective_scan.py",
        _PLANS],
    "nn/ops/diag_scan/selective.py": ["tests/nn/test_op_selective_scan.py", "tests/nn/test_op_diag_scan.py",
        _PLANS],
    "nn/ops/lrnn_scan/torch_scan.py": ["tests/nn/test_lrnn_scan.py", "tests/nn/test_lrnn.py", _PLANS,
                                       _NUMPY_PLANS],
    "nn/ops/pd_scan/torch_scan.py": ["tests/nn/test_op_pd_scan.py", "tests/compiler/test_pdssm_target.py",
        _PLANS],
    "nn/ops/delta_product/chunk.py": ["tests/nn/test_op_delta_product.py", _PLANS],
    "compiler/scans/table_scan.py": ["tests/compiler/test_table_scan.py", "tests/nn/test_op_st_table_scan.py",
                                     _NUMPY_PLANS],
    "compiler/scans/affine_scan.py": ["tests/compiler/test_runtime.py", "tests/compiler/test_affine.py",
                                      _NUMPY_PLANS],
}

# a module's limits are read against docs/limits.md by one more test file
TESTS = {module: [*files, _LIMITS] for module, files in TESTS.items()}
#: test files that read a module's constants without running its lines (the trace cannot see them): every
#: module-level mutant runs them as well
CONSTANT_TESTS = (_LIMITS,)

#: tests slower than this (seconds, under the line trace) are not run per mutant
MAX_TEST_SECONDS = 10.0
