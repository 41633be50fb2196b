"""Each piece of what a compiled model computes has one definition, found by the text of its code — the copies these
pieces used to have used other names, so a name-based check would not see them. The key codec, the cascade wiring,
the symbol-id check, the accepting mask, the nearest-code bias and the affine decode are written once for numpy and
torch alike (compiler/xp.py's array functions and Python's operators); the lookups and scans keep one definition
per backend where torch needs its own.

Each row: what it is, a regular expression matching its defining code, and the files (relative to the package)
allowed to hold a match. A second copy anywhere in the package fails the test with the file that holds it; each
row is shown failing on a planted copy (the old copy's code where there was one).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: where compiled models are executed (fsa cannot import the compiler, so its own lookups are its own algorithms')
PACKAGE_DIRS = ("compiler", "nn", "realize", "cli")
#: the rows whose one definition lives in fsa/, below the compiler: searched in fsa/ too
WITH_FSA = ("fsa", *PACKAGE_DIRS)

ENCODE = r"def encode\(|mult \*= |\* int\(r\) \+ "
DECODE = r"^\s*\w+\[[^\]]*\] = (\w+) % [^\n]*\n\s*\1 (//= |= \1 // )"
WIRING = r"def layer_keys\(|def causal_shift\(|\w+ \* (\w+\.)?\w*weights?\w*(\[\w+\])?\[0\]|out\[:, 0\] = start"
SYMBOL_IDS = r"def check_symbol_ids\(|def check_id_range\(|symbol id[^'\"\n]* out of range|\bids\.min\(\)\)? < 0"

SINGLE = [
    ("the mixed-radix encoder (both digit orders, numpy and torch)", ENCODE, {"compiler/keys.py"}),
    ("the mixed-radix decoder (both digit orders, numpy and torch)", DECODE, {"compiler/keys.py"}),
    ("the cascade wiring: key = x·w₀ + Σ upper·wᵢ, the causal shift", WIRING, {"compiler/wiring.py"}),
    ("the symbol-id check and its message", SYMBOL_IDS, {"fsa/inputs.py"}),
    (
        "the accepting mask and accepted states",
        r"def accepting_mask\(|def accepted\(|\(states >= 0\) &",
        {"compiler/program.py"},
    ),
    ("the nearest-code bias ½‖c‖²", r"0\.5 \* \([\w.]+ \* [\w.]+\)\.sum\(-1\)", {"compiler/program.py"}),
    ("the affine decode: nearest of {0, e_x}", r"2 \* .*- 1 > 0", {"compiler/targets/affine/executor.py"}),
    ("the dense-table threshold", r"^\s*DENSE_(KEYS|READOUT\w*)\s*=", {"compiler/keys.py"}),
    ("the dense-table decision", r"<=\s*DENSE_|def dense_keys\(", {"compiler/keys.py"}),
    ("the key-space limit", r"^MAX_KEY_SPACE\s*=|>=?\s*2\s*\*\*\s*62", {"compiler/keys.py"}),
    ("key lookup (numpy, torch)", r"^class (KeyLookup|KeyTable)\b", {"compiler/keys.py", "nn/compiled/keys.py"}),
    (
        "sorted-key search (numpy, torch)",
        r"searchsorted\((sorted_keys|self\.keys|codes)",
        {"compiler/keys.py", "nn/compiled/keys.py"},
    ),
    (
        "hash readout Σ (h_i − 1) nⁱ: its powers and code points",
        r"width \*\* (np|torch)\.arange\((self\.)?width",
        {"compiler/targets/lrnn/program.py"},
    ),
    ("the validity mask (numpy)", r"\bbad \|=", {"compiler/targets/lrnn/executor.py"}),
    ("the validity mask (torch)", r"valid = _and\(", {"nn/compiled/lrnn.py"}),
    ("the chunked affine scan (numpy)", r"^def affine_scan\(", {"compiler/scans/affine_scan.py"}),
    ("the chunked affine scan (torch)", r"^def parallel_scan_lrnn\(", {"nn/ops/lrnn_scan/torch_scan.py"}),
    (
        "NFSM argmax tables (numpy, torch)",
        r"bank\[.*\]\s*=.*argmax",
        {"compiler/targets/nfsm/logits.py", "nn/nfsm.py"},
    ),
    (
        "the configuration-graph BFS of linear RNNs",
        r"def configuration_graph\(",
        {"compiler/targets/lrnn/exact.py", "realize/spectral.py"},
    ),
]

#: a copy of each row's code as it used to be written elsewhere (or, where there was none, a plain second copy)
PLANTED = {
    SINGLE[0][0]: "def encode_rows(cols, radix):\n    key, mult = cols[0], int(radix[0])\n"
    "    for c, r in zip(cols[1:], radix[1:]):\n        key = key + c * mult\n        mult *= int(r)\n",
    SINGLE[1][0]: "def _digits(codes, dims):\n    rest = codes.copy()\n    for i in range(len(dims) - 1, -1, -1):\n"
    "        out[..., i] = rest % dims[i]\n        rest //= dims[i]\n",
    SINGLE[2][0]: "key = ids * weights[0] + causal_shift(part, start)\n",
    SINGLE[3][0]: "if ids.size and (ids.min() < 0 or ids.max() >= n):\n    raise ValueError('symbol id out of range')",
    SINGLE[4][0]: "def accepted(states, mask):\n    return (states >= 0) & mask[np.maximum(states, 0)]\n",
    SINGLE[5][0]: "half = 0.5 * (self.codes * self.codes).sum(-1)\n",
    SINGLE[6][0]: "digit = torch.where(2 * best - 1 > 0, x + 1, torch.zeros_like(x))\n",
}


def _sources(extra: dict[str, str] | None = None, dirs: tuple[str, ...] = PACKAGE_DIRS) -> dict[str, str]:
    out = {str(p.relative_to(ROOT)): p.read_text() for d in dirs for p in sorted((ROOT / d).rglob("*.py"))}
    return {**out, **(extra or {})}


def _dirs(allowed: set[str]) -> tuple[str, ...]:
    return WITH_FSA if any(path.startswith("fsa/") for path in allowed) else PACKAGE_DIRS


def _found(pattern: str, sources: dict[str, str]) -> set[str]:
    rx = re.compile(pattern, re.MULTILINE)
    return {path for path, text in sources.items() if rx.search(text)}


@pytest.mark.parametrize("what, pattern, allowed", SINGLE, ids=[s[0] for s in SINGLE])
def test_one_definition(what, pattern, allowed):
    found = _found(pattern, _sources(dirs=_dirs(allowed)))
    assert found, f"{what}: its definition is gone (update the table)"
    assert found <= allowed, f"{what}: copies in {sorted(found - allowed)}"


@pytest.mark.parametrize("what, pattern, allowed", SINGLE, ids=[s[0] for s in SINGLE])
def test_a_planted_copy_is_found(what, pattern, allowed):
    copy = PLANTED.get(what)
    if copy is None:  # a second copy of the definition itself, in a module of another package
        (path,) = sorted(allowed)[:1]
        copy = (ROOT / path).read_text()
    found = _found(pattern, _sources({"nn/planted_copy.py": copy}, _dirs(allowed)))
    assert "nn/planted_copy.py" in found, f"{what}: a planted copy goes unnoticed"


def test_spectral_reuses_the_exact_interpreters_bfs():
    """realize/spectral.configuration_graph is a wrapper: it holds no search of its own."""
    text = (ROOT / "realize/spectral.py").read_text()
    assert "exact_interpreter(model).configuration_graph" in text and "deque()" not in text.split("def shortest")[0]


def test_only_the_programs_read_the_header_of_a_model():
    """Header dicts of a compiled model are read by the targets' programs (compiler/targets/<name>/program.py; the
    compilers write them; the model file validates them); every other reader goes through the program's typed
    views."""
    rx = re.compile(r'header\[\s*"(layers|readout)"\s*\]')
    readers = {path for path, text in _sources().items() if rx.search(text)}
    programs = {str(p.relative_to(ROOT)) for p in (ROOT / "compiler/targets").glob("*/program.py")}
    assert readers <= {"compiler/model.py"} | programs, readers - programs
