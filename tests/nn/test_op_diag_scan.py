"""diag_scan: every path against the sequential reference differentiated by autograd (naive), with the eigenvalues
the theory needs (a_t ∈ {−1, 0}, complex a_t on the unit circle), padded batches, low precision, gradcheck, the C
kernel (bit for bit in real dtypes, strided and conjugated views, its build and its fallback to the torch path),
the Triton kernels under the interpreter, bad input, and the ahead-of-time compilation of the GPU kernels."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from helpers import err_ratio

from fsa2rnn.fsa.errors import FsaError
from fsa2rnn.nn.ops import diag_scan
from fsa2rnn.nn.ops.diag_scan import cpu_kernel, torch_scan

pytestmark = pytest.mark.usefixtures("one_torch_thread")
ROOT = Path(__file__).resolve().parents[2]


def _has_triton() -> bool:
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return os.environ.get("TRITON_INTERPRET") == "1"


def _case(bsz, length, d, *, complex_=False, hard=False, seed=0):
    """a, b, h0 in float64/complex128 and lengths; ``hard`` samples a_t from {−1, 0, 1} and (complex) the unit
    circle, exactly, mixed with random values of modulus ≤ 1."""
    g = torch.Generator().manual_seed(seed)
    shape = (bsz, length, d)
    if complex_:
        theta = 2 * torch.pi * torch.rand(shape, generator=g, dtype=torch.float64)
        radius = torch.rand(shape, generator=g, dtype=torch.float64)
        if hard:
            radius = torch.where(torch.rand(shape, generator=g) < 0.7, 1.0, radius)  # mostly |a| = 1
        a = torch.polar(radius, theta)
        b = torch.complex(*(torch.randn(shape, generator=g, dtype=torch.float64) for _ in range(2)))
        h0 = torch.complex(*(torch.randn(bsz, d, generator=g, dtype=torch.float64) for _ in range(2)))
    else:
        a = 2 * torch.rand(shape, generator=g, dtype=torch.float64) - 1
        b = torch.randn(shape, generator=g, dtype=torch.float64)
        h0 = torch.randn(bsz, d, generator=g, dtype=torch.float64)
    if hard:
        pick = torch.randint(0, 4, shape, generator=g)
        special = torch.tensor([-1.0, 0.0, 1.0], dtype=torch.float64)[pick.clamp(max=2)].to(a.dtype)
        if complex_:
            special = torch.where(pick == 3, torch.tensor(1j, dtype=a.dtype), special)
        a = torch.where(torch.rand(shape, generator=g) < 0.5, special, a)
    lengths = torch.randint(0, length + 1, (bsz,), generator=g)
    lengths[0] = length
    return a, b, h0, lengths


def _run(impl, a, b, h0, lengths, cot, **kw):
    """Forward and every input's gradient (against the cotangent ``cot``)."""
    a, b, h0 = (x.detach().clone().requires_grad_() for x in (a, b, h0))
    if impl == "triton_chunk":
        from fsa2rnn.nn.ops.diag_scan.triton import triton_diag_scan

        h = triton_diag_scan(a, b, h0, lengths, chunk=kw["chunk"])
    else:
        h = diag_scan(a, b, h0, lengths=lengths, impl=impl)
    grads = torch.autograd.grad(h, (a, b, h0), cot)
    return (h.detach(), *grads)


def _assert_close(ref, got, tol):
    for name, r, x in zip(("h", "grad a", "grad b", "grad h0"), ref, got):
        assert err_ratio(x, r) <= tol, (name, err_ratio(x, r))


#: the CPU paths beside the reference: the chunked torch scan and the C kernel (the torch path where it cannot build)
CPU_IMPLS = ["torch", "cpu"]


@pytest.mark.parametrize("impl", CPU_IMPLS)
@pytest.mark.parametrize("length", [1, 63, 100, 1000])
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("hard", [False, True])
def test_torch_matches_naive_float64(impl, length, complex_, hard):
    a, b, h0, lengths = _case(3, length, 4, complex_=complex_, hard=hard, seed=length)
    cot = torch.randn_like(b)
    ref = _run("naive", a, b, h0, lengths, cot)
    got = _run(impl, a, b, h0, lengths, cot)
    _assert_close(ref, got, 1e-10)
    # final values: the state at each sequence's last valid position, zeros after it
    for i, n in enumerate(lengths.tolist()):
        if n:
            assert err_ratio(got[0][i, n - 1], ref[0][i, n - 1]) <= 1e-10
        assert torch.all(got[0][i, n:] == 0)


@pytest.mark.parametrize("chunk", [2, 4, 16])
def test_every_chunking_matches_naive(monkeypatch, chunk):
    """Force the chunk length (the cost model's choice must not matter): a tail that is not a multiple of the
    chunk, and the recursive carry (chunked again), forward and backward."""
    monkeypatch.setattr(torch_scan, "choose_chunk", lambda length, lanes: chunk if length >= 2 * chunk else length)
    a, b, h0, lengths = _case(2, 203, 3, complex_=True, hard=True, seed=chunk)
    cot = torch.randn_like(b)
    _assert_close(_run("naive", a, b, h0, lengths, cot), _run("torch", a, b, h0, lengths, cot), 1e-10)



@pytest.mark.parametrize(("tile", "chunk"), [(7, 2), (16, 4), (50, 3), (64, 16)])
def test_tiled_schedule_matches_naive(monkeypatch, tile, chunk):
    """Force the tile and chunk lengths: tiles not a multiple of the chunk, a last tile shorter than the others,
    complex a_t on the unit circle, a padded batch, forward and backward (the backward is the reverse scan)."""
    monkeypatch.setattr(torch_scan, "choose_tile", lambda length, lanes, itemsize: tile)
    monkeypatch.setattr(torch_scan, "choose_chunk", lambda length, lanes: chunk if length >= 2 * chunk else length)
    a, b, h0, lengths = _case(3, 203, 3, complex_=True, hard=True, seed=tile)
    cot = torch.randn_like(b)
    _assert_close(_run("naive", a, b, h0, lengths, cot), _run("torch", a, b, h0, lengths, cot), 1e-10)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_into_tiles_both_directions(monkeypatch, reverse):
    """scan_into itself against a loop written here, in both directions, with tiles of 10 steps over 95."""
    monkeypatch.setattr(torch_scan, "choose_tile", lambda length, lanes, itemsize: 10)
    monkeypatch.setattr(torch_scan, "choose_chunk", lambda length, lanes: 3 if length >= 6 else length)
    a, b, h0, _ = _case(2, 95, 4, hard=True, seed=7)
    out = torch.empty_like(b)
    last = torch_scan.scan_into(a, b, h0, out, reverse=reverse)
    ref, h = torch.empty_like(b), h0
    for t in range(94, -1, -1) if reverse else range(95):
        h = a[:, t] * h + b[:, t]
        ref[:, t] = h
    assert err_ratio(out, ref) <= 1e-12 and err_ratio(last, h) <= 1e-12


def test_choose_tile_fits_the_cache():
    """Tiles of equal length whose a, b and out stay within _TILE_BYTES; one tile when everything fits."""
    assert torch_scan.choose_tile(100, 64, 4) == 100
    t = torch_scan.choose_tile(2048, 2048, 4)
    assert 3 * t * 2048 * 4 <= torch_scan._TILE_BYTES and -(-2048 // t) * t - 2048 < -(-2048 // t)

def test_hard_eigenvalues_exact():
    """a_t = 0 resets (h_t = b_t exactly, and no gradient reaches earlier steps); a_t = −1 flips the sign; no NaN
    (a backward that divided by a_t, or took log a_t, would produce them here)."""
    a = torch.tensor([[[0.5], [0.0], [-1.0], [-1.0], [1j]]], dtype=torch.complex128).requires_grad_()
    b = torch.tensor([[[1.0], [2.0], [0.0], [0.0], [0.0]]], dtype=torch.complex128).requires_grad_()
    h0 = torch.tensor([[3.0]], dtype=torch.complex128).requires_grad_()
    for impl in ("naive", *CPU_IMPLS):
        h = diag_scan(a, b, h0, impl=impl)
        assert h[0, :, 0].tolist() == [2.5, 2.0, -2.0, 2.0, 2j]
        ga, gb, gh0 = torch.autograd.grad(h[0, -1, 0].real, (a, b, h0))
        assert not any(torch.isnan(x).any() for x in (ga, gb, gh0))
        assert gh0.abs().sum() == 0 and gb[0, 0].abs() == 0  # blocked by the a_t = 0 at the second step
        # ∂L/∂a_T = conj(h_{T−1}) · ∂L/∂h_T = conj(2) · 1, PyTorch's convention for complex inputs
        assert torch.allclose(ga[0, -1], torch.tensor([2.0], dtype=torch.complex128))


@pytest.mark.parametrize("impl", CPU_IMPLS)
def test_padded_batch_equals_each_word_alone(impl):
    a, b, h0, lengths = _case(4, 50, 3, hard=True, seed=5)
    lengths = torch.tensor([50, 17, 1, 0])
    cot = torch.randn_like(b)
    h, ga, gb, gh0 = _run(impl, a, b, h0, lengths, cot)
    for i, n in enumerate(lengths.tolist()):
        assert torch.all(h[i, n:] == 0) and torch.all(ga[i, n:] == 0) and torch.all(gb[i, n:] == 0)
        if n == 0:
            assert torch.all(gh0[i] == 0)
            continue
        one = _run("naive", a[i : i + 1, :n], b[i : i + 1, :n], h0[i : i + 1], None, cot[i : i + 1, :n])
        assert err_ratio(h[i, :n], one[0][0]) <= 1e-12
        assert err_ratio(ga[i, :n], one[1][0]) <= 1e-12
        assert err_ratio(gb[i, :n], one[2][0]) <= 1e-12
        assert err_ratio(gh0[i], one[3][0]) <= 1e-12


@pytest.mark.parametrize("impl", CPU_IMPLS)
@pytest.mark.parametrize("complex_", [False, True])
def test_float32_within_1e5(impl, complex_):
    a, b, h0, lengths = _case(2, 1000, 8, complex_=complex_, hard=True, seed=11)
    low = torch.complex64 if complex_ else torch.float32
    a, b, h0 = (x.to(low) for x in (a, b, h0))
    cot = torch.randn_like(b)
    ref = _run("naive", *(x.to(torch.complex128 if complex_ else torch.float64) for x in (a, b, h0)), lengths, cot.to(
        torch.complex128 if complex_ else torch.float64))  # fmt: skip
    _assert_close(ref, _run(impl, a, b, h0, lengths, cot), 1e-5)


@pytest.mark.parametrize("impl", CPU_IMPLS)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_within_1e2(impl, dtype):
    """Against the float64 reference run on the same rounded inputs (fla's get_err_ratio)."""
    a, b, h0, lengths = _case(2, 300, 8, hard=True, seed=3)
    a, b, h0 = (x.to(dtype) for x in (a, b, h0))
    cot = torch.randn(b.shape, dtype=torch.float64).to(dtype)
    ref = _run("naive", a.double(), b.double(), h0.double(), lengths, cot.double())
    _assert_close(ref, _run(impl, a, b, h0, lengths, cot), 1e-2)


@pytest.mark.parametrize("impl", ["naive", *CPU_IMPLS])
@pytest.mark.parametrize("complex_", [False, True])
def test_gradcheck(impl, complex_):
    a, b, h0, lengths = _case(2, 9, 2, complex_=complex_, hard=True, seed=2)
    lengths = torch.tensor([9, 5])
    ins = tuple(x.clone().requires_grad_() for x in (a, b, h0))
    assert torch.autograd.gradcheck(lambda a, b, h0: diag_scan(a, b, h0, lengths=lengths, impl=impl), ins)


def test_gradcheck_chunked(monkeypatch):
    monkeypatch.setattr(torch_scan, "choose_chunk", lambda length, lanes: 3 if length >= 6 else length)
    a, b, h0, _ = _case(1, 14, 2, complex_=True, hard=True, seed=4)
    ins = tuple(x.clone().requires_grad_() for x in (a, b, h0))
    assert torch.autograd.gradcheck(lambda a, b, h0: diag_scan(a, b, h0, impl="torch"), ins)


@pytest.mark.parametrize("impl", CPU_IMPLS)
def test_no_h0_and_empty(impl):
    a, b, _, _ = _case(2, 20, 3, seed=1)
    assert torch.equal(diag_scan(a, b, impl=impl), diag_scan(a, b, torch.zeros(2, 3, dtype=a.dtype), impl=impl))
    assert err_ratio(diag_scan(a, b, impl=impl), diag_scan(a, b, impl="naive")) <= 1e-12
    for shape in ((2, 0, 3), (0, 5, 3), (2, 5, 0)):  # no steps, no sequences, no lanes
        empty = torch.zeros(shape, requires_grad=True)
        h = diag_scan(empty, empty, impl=impl)
        assert h.shape == shape
        assert torch.autograd.grad(h.sum(), empty)[0].shape == shape


def _need_kernel(monkeypatch):
    """Skip without the kernel; with it, make the torch scan unreachable, so that the test sees the kernel's work."""
    if not cpu_kernel.available():
        pytest.skip("the C kernel did not build here (no C compiler?)")

    def unreachable(*args, **kwargs):
        raise AssertionError("the C kernel fell back to the torch scan")

    monkeypatch.setattr(torch_scan, "scan_into", unreachable)


@pytest.fixture
def fresh_kernel():
    """The kernel forgotten before and after the test, so that its environment decides the next load."""
    cpu_kernel.reset()
    yield
    cpu_kernel.reset()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cpu_kernel_equals_naive_bit_for_bit(monkeypatch, dtype):
    """Real dtypes: the C kernel rounds every step as the reference does (-ffp-contract=off, no FMA), so forward and
    every gradient are equal, not just close — over two lane blocks (D = 300 > 256, not a multiple of a cache
    line's lanes), the hard eigenvalues and a padded batch."""
    _need_kernel(monkeypatch)
    a, b, h0, lengths = _case(3, 70, 300, hard=True, seed=9)
    a, b, h0 = (x.to(dtype) for x in (a, b, h0))
    cot = torch.randn(b.shape, dtype=torch.float64).to(dtype)
    for r, x in zip(_run("naive", a, b, h0, lengths, cot), _run("cpu", a, b, h0, lengths, cot)):
        assert torch.equal(r, x)


@pytest.mark.parametrize("complex_", [False, True])
def test_cpu_kernel_strided_and_conjugated_inputs(monkeypatch, complex_):
    """Views go to the kernel by their strides (a time slice, an expanded batch axis: no copy); lanes that are not
    contiguous (a transposed tensor) are copied first; a lazily conjugated a is read as stored and conjugated by
    the kernel. Forward and gradients against the reference."""
    _need_kernel(monkeypatch)
    a, b, h0, lengths = _case(2, 40, 6, complex_=complex_, hard=True, seed=13)
    variants = {
        "time slice": (a[:, ::2], b[:, ::2], h0),
        "expanded batch": (a[:1].expand(2, -1, -1), b, h0),
        "transposed lanes": tuple(x.transpose(-1, -2).contiguous().transpose(-1, -2) for x in (a, b, h0)),
        "conjugate view": (a.conj(), b.conj(), h0),
    }
    for name, (x, y, z) in variants.items():
        n = x.shape[1]
        lens = lengths.clamp(max=n)
        cot = torch.randn(y.shape, dtype=y.dtype)
        assert not x.is_contiguous() or name == "conjugate view", name
        ref = _run("naive", x.resolve_conj().contiguous(), y.resolve_conj().contiguous(), z, lens, cot)
        got = _run("cpu", x, y, z, lens, cot)
        _assert_close(ref, got, 1e-12)


@pytest.mark.parametrize("reverse", [False, True])
def test_cpu_scan_into_both_directions(monkeypatch, reverse):
    """cpu_kernel.scan_into against a loop written here, forward and in reverse, with a conjugated coefficient
    (as the adjoint passes it), strided views of a, b and out, and an out whose lanes are not contiguous."""
    _need_kernel(monkeypatch)
    a, b, h0, _ = _case(2, 31, 5, complex_=True, hard=True, seed=17)
    out = torch.zeros(2, 5, 31, dtype=b.dtype).transpose(1, 2)  # lanes strided: written through a buffer
    last = cpu_kernel.scan_into(a.conj(), b, h0, out, reverse=reverse)
    ref, h = torch.empty_like(b), h0
    for t in range(30, -1, -1) if reverse else range(31):
        h = a[:, t].conj() * h + b[:, t]
        ref[:, t] = h
    assert err_ratio(out, ref) <= 1e-12 and err_ratio(last, h) <= 1e-12


def test_cpu_kernel_builds_into_the_cache_atomically(monkeypatch, tmp_path, fresh_kernel):
    """A fresh cache folder: the kernel is compiled there under a hashed name, with no temporary file left over
    (the build writes a temporary file and renames it); a second load finds it without compiling."""
    if cpu_kernel.compiler() is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("FSA2RNN_CACHE", str(tmp_path))
    assert cpu_kernel.available()
    built = sorted(p.name for p in (tmp_path / "kernels").iterdir())
    assert len(built) == 1 and built[0].startswith("diag_scan-") and built[0].endswith(".so")
    mtime = (tmp_path / "kernels" / built[0]).stat().st_mtime_ns
    cpu_kernel.reset()
    assert cpu_kernel.available()
    assert (tmp_path / "kernels" / built[0]).stat().st_mtime_ns == mtime


def _same_as_torch_path():
    a, b, h0, lengths = _case(2, 30, 3, hard=True, seed=19)
    cot = torch.randn_like(b)
    for r, x in zip(_run("torch", a, b, h0, lengths, cot), _run("cpu", a, b, h0, lengths, cot)):
        assert torch.equal(r, x)  # the very same computation: the torch path
    assert torch.equal(diag_scan(a, b, h0, impl="auto"), diag_scan(a, b, h0, impl="torch"))


def test_cpu_kernel_falls_back_without_a_compiler(monkeypatch, tmp_path, fresh_kernel):
    monkeypatch.setenv("FSA2RNN_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    assert cpu_kernel.compiler() is None and not cpu_kernel.available()
    _same_as_torch_path()


def test_cpu_kernel_falls_back_when_the_build_fails(monkeypatch, tmp_path, fresh_kernel):
    """A compiler that fails: one warning, the torch path, nothing left in the cache folder."""
    fail = tmp_path / "failing-cc"
    fail.write_text("#!/bin/sh\necho broken >&2\nexit 1\n")
    fail.chmod(0o755)
    monkeypatch.setenv("FSA2RNN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CC", str(fail))
    with pytest.warns(UserWarning, match="C kernel is unavailable.*broken"):
        assert not cpu_kernel.available()
    assert not any((tmp_path / "cache" / "kernels").iterdir())
    _same_as_torch_path()


def test_cpu_kernel_disabled_by_the_environment(monkeypatch, fresh_kernel):
    monkeypatch.setenv("FSA2RNN_NO_CKERNEL", "1")
    assert not cpu_kernel.available()
    _same_as_torch_path()


@pytest.mark.skipif(not _has_triton(), reason="triton not installed")
@pytest.mark.parametrize(
    "complex_,chunk,dtype",
    [(False, 4, torch.float64), (True, None, torch.float64), (True, 4, torch.float64), (False, 4, torch.bfloat16)],
)
def test_triton_matches_naive_under_interpreter(complex_, chunk, dtype):
    a, b, h0, lengths = _case(2, 10, 3, complex_=complex_, hard=True, seed=7)
    lengths = torch.tensor([10, 6])
    cot = torch.randn_like(b)
    ref = _run("naive", a, b, h0, lengths, cot)
    if dtype == torch.bfloat16:
        a, b, h0, cot = (x.to(dtype) for x in (a, b, h0, cot))
        ref = _run("naive", a.double(), b.double(), h0.double(), lengths, cot.double())
    got = _run("triton_chunk", a, b, h0, lengths, cot, chunk=chunk)
    _assert_close(ref, got, 1e-10 if dtype == torch.float64 else 1e-2)


@pytest.mark.parametrize(
    "args,kw,match",
    [
        ((torch.zeros(2, 3), torch.zeros(2, 3)), {}, r"a has shape \(2, 3\), expected 3 dimensions"),
        ((torch.zeros(2, 3, 4), torch.zeros(2, 3, 5)), {}, r"b has shape \(2, 3, 5\), expected \(2, 3, 4\)"),
        ((torch.zeros(2, 3, 4), torch.zeros(2, 3, 4, dtype=torch.float64)), {}, r"b has dtype float64, expected"),
        ((torch.zeros(2, 3, 4, dtype=torch.long),) * 2, {}, r"a has dtype int64"),
        ((torch.zeros(2, 3, 4), torch.zeros(2, 3, 4), torch.zeros(3, 4)), {}, r"h0 has shape \(3, 4\), expected"),
        ((torch.zeros(2, 3, 4), torch.zeros(2, 3, 4)), {"lengths": torch.tensor([1, 4])}, r"lengths must lie in"),
        ((torch.zeros(2, 3, 4), torch.zeros(2, 3, 4)), {"lengths": torch.tensor([1])}, r"lengths has shape \(1,\)"),
        ((torch.zeros(2, 3, 4), torch.zeros(2, 3, 4)), {"impl": "magic"}, r"unknown impl 'magic'"),
    ],
)
def test_bad_input(args, kw, match):
    with pytest.raises(ValueError, match=match) as err:
        diag_scan(*args, **kw)
    assert isinstance(err.value, FsaError) and err.value.args[0].startswith("diag_scan: ")


def test_importing_ops_does_not_import_triton():
    code = "import sys, fsa2rnn.nn.ops as ops; ops.diag_scan; ops.dlr_kernel_conv; assert 'triton' not in sys.modules"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]


@pytest.mark.skipif(not _has_triton(), reason="triton not installed")
def test_gpu_kernels_compile_for_the_h200():
    """Ahead-of-time compilation of the ops' GPU kernels for sm_90 down to cubin (no GPU needed), in a fresh process
    without the interpreter; skipped when this triton cannot compile for CUDA ahead of time."""
    try:
        from triton.backends.compiler import GPUTarget  # noqa: F401
        from triton.compiler import ASTSource  # noqa: F401
    except ImportError:
        pytest.skip("triton has no ahead-of-time compile API")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_DEFAULT_FP_FUSION"] = "1"
    res = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gpu_ops.py"), "--compile-only", "--smoke"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if res.returncode != 0 and "ptxas" in res.stderr and "not found" in res.stderr.lower():
        pytest.skip("no CUDA toolchain (ptxas) for ahead-of-time compilation")
    assert res.returncode == 0, res.stderr[-2000:]
    assert "kernel variants for sm_90" in res.stdout
