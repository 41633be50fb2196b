"""The fused CPU kernel of the diagonal scan (diag_scan.c), compiled on first use, loaded with ctypes.

h_t = a_t ⊙ h_{t−1} + b_t in one pass over memory: per sequence, per block of 256 lanes, sequentially over t
(README.md, "Fused CPU kernel"). The kernel replaces :func:`torch_scan.scan_into` — forward, and the reverse scan
of the backward — inside the same autograd function, whose backward is reused unchanged.

Build: ``$CC`` (or ``cc``) ``-O3 -std=c99 -fPIC -shared -ffp-contract=off``: no ``-march=native`` (the file may be
shared between machines), no ``-ffast-math`` and no contraction into FMA, so that every step rounds a_t·h_{t−1} and
then the sum as the sequential reference does: real results equal ``impl="naive"`` bit for bit (the tests check
it); complex ones agree to rounding (torch's own complex product rounds differently in the few lanes its vector
loop leaves to a scalar tail). The library goes to ``$FSA2RNN_CACHE/kernels`` (default ``~/.cache/fsa2rnn/kernels``)
under a name hashing the source, the flags and the compiler's identity, written to a temporary file in that folder
and renamed onto its name: processes compiling at once each rename a complete file, and a reader never sees a
partial one. No compiler, a failed build or ``FSA2RNN_NO_CKERNEL=1``: :func:`load` returns None (one warning for a
failure) and the callers use the torch path.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import shlex
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

import torch

from . import torch_scan

_log = logging.getLogger(__name__)
SOURCE = Path(__file__).with_name("diag_scan.c")
FLAGS = ("-O3", "-std=c99", "-fPIC", "-shared", "-ffp-contract=off")
#: the kernel of each dtype (float16 and bfloat16 are computed in float32 by the caller)
SYMBOLS = {
    torch.float32: "diag_scan_f32",
    torch.float64: "diag_scan_f64",
    torch.complex64: "diag_scan_c64",
    torch.complex128: "diag_scan_c128",
}
_I64, _PTR, _INT = ctypes.c_int64, ctypes.c_void_p, ctypes.c_int
#: (bsz, len, d, a, a_sb, a_st, b, b_sb, b_st, h0, h_sb, out, o_sb, o_st, reverse, conj_a): diag_scan.c's signature
_ARGTYPES = [_I64] * 3 + [_PTR, _I64, _I64] * 2 + [_PTR, _I64] + [_PTR, _I64, _I64] + [_INT, _INT]

#: the loaded library's functions by dtype, None when unavailable; unset until the first :func:`load`
_loaded: dict | None = None
_tried = False


def compiler() -> list[str] | None:
    """The C compiler command: ``$CC`` split into words, else ``cc``, its program resolved on PATH; None if absent."""
    words = shlex.split(os.environ.get("CC", "")) or ["cc"]
    found = shutil.which(words[0])
    return [found, *words[1:]] if found else None


def cache_dir() -> Path:
    """Where compiled kernels are kept: ``$FSA2RNN_CACHE/kernels``, default ``~/.cache/fsa2rnn/kernels``."""
    root = os.environ.get("FSA2RNN_CACHE") or Path.home() / ".cache" / "fsa2rnn"
    return Path(root) / "kernels"


def build(cc: list[str]) -> Path:
    """The compiled library for compiler ``cc``, compiled into :func:`cache_dir` unless already there. Raises
    OSError or subprocess.SubprocessError when compiling fails."""
    version = subprocess.run([*cc, "--version"], capture_output=True, timeout=30).stdout
    key = hashlib.sha256(SOURCE.read_bytes() + "\0".join([*cc, *FLAGS]).encode() + b"\0" + version).hexdigest()
    target = cache_dir() / f"diag_scan-{key[:24]}.so"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".diag_scan-", suffix=".so", dir=target.parent)
    os.close(fd)
    try:
        res = subprocess.run([*cc, *FLAGS, "-o", tmp, str(SOURCE)], capture_output=True, text=True, timeout=120)
        if res.returncode != 0:
            raise subprocess.SubprocessError(f"{shlex.join(cc)} exited with {res.returncode}: {res.stderr[-500:]}")
        os.replace(tmp, target)  # atomic: a concurrent build replaces a complete file by an identical one
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def load() -> dict | None:
    """The kernels by dtype, compiling them on the first call; None when disabled (``FSA2RNN_NO_CKERNEL=1``), when
    no compiler is found, or when compiling or loading fails (warned once)."""
    global _loaded, _tried
    if os.environ.get("FSA2RNN_NO_CKERNEL", "") not in ("", "0"):
        return None
    if _tried:
        return _loaded
    _tried = True
    cc = compiler()
    if cc is None:
        _log.debug("diag_scan: no C compiler found, using the torch path")
        return None
    try:
        lib = ctypes.CDLL(str(build(cc)))
        kernels = {}
        for dtype, name in SYMBOLS.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = _ARGTYPES, None
            kernels[dtype] = fn
    except (OSError, subprocess.SubprocessError, AttributeError) as err:
        warnings.warn(f"diag_scan: the C kernel is unavailable, using the torch path ({err})", stacklevel=2)
        return None
    _loaded = kernels
    return kernels


def available() -> bool:
    """Whether :func:`load` gives the kernels (compiling them if needed)."""
    return load() is not None


def reset() -> None:
    """Forget the loaded kernels, so that the next :func:`load` looks again (tests)."""
    global _loaded, _tried
    _loaded, _tried = None, False


def _lanes(x: torch.Tensor) -> torch.Tensor:
    """``x`` with its conjugate/negative bits resolved and contiguous lanes (last axis); copied only if needed."""
    x = x.resolve_neg()
    if x.stride(-1) != 1 and x.shape[-1] > 1:
        x = x.contiguous()
    return x


def scan_into(
    a: torch.Tensor, b: torch.Tensor, h: torch.Tensor, out: torch.Tensor, *, reverse: bool = False
) -> torch.Tensor:
    """:func:`torch_scan.scan_into`'s contract (``out`` (B, T, D) ← h_t = a_t ⊙ h_{t−1} + b_t from ``h``; returns
    the last state computed) by the C kernel; the torch path when the kernel or the dtype is not available or the
    tensors are not on the CPU. Views are passed by their strides; a tensor whose last axis is not contiguous is
    copied first (``out`` is then written through a contiguous buffer). A lazily conjugated ``a`` is read as it is
    stored, the kernel conjugating it (no copy)."""
    kernels = load()
    fn = kernels.get(a.dtype) if kernels is not None else None
    if fn is None or a.device.type != "cpu":
        return torch_scan.scan_into(a, b, h, out, reverse=reverse)
    bsz, length, d = a.shape
    if length == 0:
        return h
    conj = a.is_conj()
    a = _lanes(a.conj() if conj else a)  # a.conj() of a conjugate view: the stored values
    b, h = (_lanes(x.resolve_conj()) for x in (b, h))
    dst = out if out.stride(-1) == 1 or d <= 1 else torch.empty(out.shape, dtype=out.dtype)
    if bsz and d:
        views = [(x.data_ptr(), x.stride(0), x.stride(1)) for x in (a, b)]
        fn(bsz, length, d, *views[0], *views[1], h.data_ptr(), h.stride(0), dst.data_ptr(), dst.stride(0),
           dst.stride(1), int(reverse), int(conj))  # fmt: skip
    if dst is not out:
        out.copy_(dst)
    return out[:, 0] if reverse else out[:, -1]


def cpu_diag_scan(
    a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None, lengths: torch.Tensor | None = None
) -> torch.Tensor:
    """Same contract as :func:`naive_diag_scan`, by the C kernel (the torch path when it is unavailable); float16
    and bfloat16 are computed in float32."""
    return torch_scan.torch_diag_scan(a, b, h0, lengths, scan=scan_into)
