"""Each piece of what a compiled model computes has one definition per backend (numpy, torch), found by the text
of its code — the copies these pieces used to have used other names, so a name-based check would not see them.

Each row: what it is, a regular expression matching its defining code, and the files (relative to the package)
allowed to hold a match: the numpy definition and, where the torch executors need their own, the torch one. A
second copy anywhere in the package fails the test with the file that holds it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: where compiled models are executed (fsa cannot import the compiler, so its own lookups are its own algorithms')
PACKAGE_DIRS = ("compiler", "runtime", "nn", "realize", "cli")

SINGLE = [
    ("row keys, first digit least significant (linear RNNs)", r"^def encode_keys\(", {"compiler/keys.py"}),
    ("row keys, first digit most significant (NFSM)", r"^def mixed_radix\(", {"compiler/keys.py"}),
    ("row keys in torch", r"^def encode_rows\(", {"nn/compiled/lrnn_model.py"}),
    ("the dense-table threshold", r"^\s*DENSE_(KEYS|READOUT\w*)\s*=", {"compiler/keys.py"}),
    ("the dense-table decision", r"<=\s*DENSE_|def dense_keys\(", {"compiler/keys.py"}),
    ("the key-space limit", r"^MAX_KEY_SPACE\s*=|>=?\s*2\s*\*\*\s*62", {"compiler/keys.py"}),
    ("key lookup (numpy, torch)", r"^class (KeyLookup|KeyTable)\b", {"compiler/keys.py", "nn/compiled/lrnn.py"}),
    (
        "sorted-key search (numpy, torch)",
        r"searchsorted\((sorted_keys|self\.keys|codes)",
        {"compiler/keys.py", "nn/compiled/lrnn.py"},
    ),
    (
        "nearest-code readout ½‖c‖² (numpy, torch; the steppers' NFSM attractors; the conversion's classifier)",
        r"0\.5 \* \(\w+ \* \w+\)\.sum\(-1\)",
        {"runtime/lrnn.py", "nn/compiled/lrnn.py", "realize/steppers.py", "nn/from_compiled.py"},
    ),
    (
        "hash readout Σ (h_i − 1) nⁱ: its powers and code points",
        r"width \*\* (np|torch)\.arange\((self\.)?width",
        {"compiler/program.py"},
    ),
    (
        "the cascade's causal shift (numpy, torch)",
        r"^def causal_shift\(",
        {"runtime/executor.py", "nn/compiled/inputs.py"},
    ),
    ("the validity mask (numpy)", r"\bbad \|=", {"runtime/lrnn.py"}),
    ("the validity mask (torch)", r"valid = _and\(", {"nn/compiled/lrnn_model.py"}),
    ("the chunked affine scan (numpy)", r"^def affine_scan\(", {"runtime/affine_scan.py"}),
    ("the chunked affine scan (torch)", r"^def parallel_scan_lrnn\(", {"nn/ops/lrnn_scan/torch_scan.py"}),
    ("NFSM argmax tables (numpy, torch)", r"bank\[.*\]\s*=.*argmax", {"compiler/nfsm_logits.py", "nn/nfsm.py"}),
    (
        "the affine decode: nearest of {0, e_x} (numpy, torch)",
        r"2 \* .*- 1 > 0",
        {"runtime/affine.py", "nn/compiled/affine_model.py"},
    ),
    ("the accepting mask", r"def accepting_mask\(", {"compiler/program.py"}),
    ("accepted states (numpy, torch)", r"^def accepted\(", {"runtime/executor.py", "nn/compiled/inputs.py"}),
    ("the symbol-id check", r"def check_symbol_ids\(|def _check_ids\(", {"compiler/inputs.py"}),
    (
        "the symbol-id range message",
        r"is out of range \(ids are",
        {"compiler/inputs.py"},
    ),
    (
        "the configuration-graph BFS of linear RNNs",
        r"def configuration_graph\(",
        {"compiler/exact/lrnn.py", "realize/spectral.py"},
    ),
]


def _sources() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text() for d in PACKAGE_DIRS for p in sorted((ROOT / d).rglob("*.py"))}


@pytest.mark.parametrize("what, pattern, allowed", SINGLE, ids=[s[0] for s in SINGLE])
def test_one_definition(what, pattern, allowed):
    rx = re.compile(pattern, re.MULTILINE)
    found = {path for path, text in _sources().items() if rx.search(text)}
    assert found, f"{what}: its definition is gone (update the table)"
    assert found <= allowed, f"{what}: copies in {sorted(found - allowed)}"


def test_spectral_reuses_the_exact_interpreters_bfs():
    """realize/spectral.configuration_graph is a wrapper: it holds no search of its own."""
    text = (ROOT / "realize/spectral.py").read_text()
    assert "exact_interpreter(model).configuration_graph" in text and "deque()" not in text.split("def shortest")[0]


def test_only_the_program_reads_the_header_of_a_model():
    """Header dicts of a compiled model are read in compiler/program.py (the compilers write them; the model file
    validates them). The conversion into trainable layers (nn/from_compiled.py) and one theorem check still read
    them: named here until they move to the program."""
    rx = re.compile(r'header\[\s*"(layers|readout)"\s*\]')
    readers = {path for path, text in _sources().items() if rx.search(text)}
    assert readers <= {"compiler/program.py", "compiler/model.py", "nn/from_compiled.py", "realize/theorems/grazzi.py"}
