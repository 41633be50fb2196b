"""dlr_kernel_conv: the FFT path against the direct O(L²) reference, and both against independent oracles — the DLR
run as a recurrence (diag_scan's sequential reference), the DFT at the paper's initialization, the DLR-prod kernel
as a DLR with N² eigenvalues (DLR §A.2), and the anti-causal half as the causal DLR on the reversed word."""

from __future__ import annotations

import pytest
import torch
from helpers import err_ratio

from fsa2rnn.fsa.errors import FsaError
from fsa2rnn.nn.ops import dlr_kernel_conv
from fsa2rnn.nn.ops.diag_scan import naive_diag_scan

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _params(h, n, *, bidirectional=False, seed=0, dtype=torch.complex128):
    """log λ = −a² + iθ (some |λ| = 1 exactly), w complex of scale 1/N, as in the paper."""
    g = torch.Generator().manual_seed(seed)
    lead = (2,) if bidirectional else ()
    a = 0.5 * torch.rand(*lead, h, n, generator=g, dtype=torch.float64)
    a = torch.where(torch.rand(a.shape, generator=g) < 0.25, 0.0, a)
    theta = 2 * torch.pi * torch.rand(*lead, h, n, generator=g, dtype=torch.float64)
    log_lambda = torch.complex(-(a**2), theta)
    w = torch.complex(*(torch.randn(*lead, h, n, generator=g, dtype=torch.float64) for _ in range(2))) / n
    return log_lambda.to(dtype), w.to(dtype)


def _grads(impl, log_lambda, w, u, cot, **kw):
    ins = [x.detach().clone().requires_grad_() for x in (log_lambda, w, u)]
    y = dlr_kernel_conv(*ins, impl=impl, **kw)
    return (y.detach(), *torch.autograd.grad(y, ins, cot, allow_unused=True, materialize_grads=True))


def _assert_close(ref, got, tol):
    for name, r, x in zip(("y", "grad log_lambda", "grad w", "grad u"), ref, got):
        assert err_ratio(x, r) <= tol, (name, err_ratio(x, r))


@pytest.mark.parametrize("length", [1, 63, 100, 1000])
@pytest.mark.parametrize("kernel", ["re", "prod"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_fft_matches_naive_float64(length, kernel, bidirectional):
    log_lambda, w = _params(2, 5, bidirectional=bidirectional, seed=length)
    g = torch.Generator().manual_seed(1)
    u = torch.randn(2, length, 2, generator=g, dtype=torch.float64)
    cot = torch.randn(u.shape, generator=g, dtype=torch.float64)
    kw = dict(kernel=kernel, bidirectional=bidirectional)
    _assert_close(_grads("naive", log_lambda, w, u, cot, **kw), _grads("fft", log_lambda, w, u, cot, **kw), 1e-10)


@pytest.mark.parametrize("kernel", ["re", "prod"])
def test_float32_within_1e5(kernel):
    log_lambda, w = _params(3, 8, bidirectional=True, seed=2)
    g = torch.Generator().manual_seed(3)
    u = torch.randn(2, 1000, 3, generator=g, dtype=torch.float64)
    cot = torch.randn(u.shape, generator=g, dtype=torch.float64)
    kw = dict(kernel=kernel, bidirectional=True)
    lo = [log_lambda.to(torch.complex64), w.to(torch.complex64), u.float()]
    ref = _grads("naive", *(x.to(torch.complex128 if x.is_complex() else torch.float64) for x in lo), cot, **kw)
    _assert_close(ref, _grads("fft", *lo, cot.float(), **kw), 1e-5)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_input_within_1e2(dtype):
    """u in half precision (parameters complex64, computed in float32), against float64 on the same rounded u."""
    log_lambda, w = _params(2, 6, seed=4, dtype=torch.complex64)
    u = torch.randn(2, 300, 2, generator=torch.Generator().manual_seed(5)).to(dtype)
    y = dlr_kernel_conv(log_lambda, w, u)
    assert y.dtype == dtype
    ref = dlr_kernel_conv(log_lambda.to(torch.complex128), w.to(torch.complex128), u.double(), impl="naive")
    assert err_ratio(y, ref) <= 1e-2


@pytest.mark.parametrize("impl", ["naive", "fft"])
@pytest.mark.parametrize("kernel,bidirectional", [("re", False), ("prod", True)])
def test_gradcheck(impl, kernel, bidirectional):
    log_lambda, w = _params(2, 3, bidirectional=bidirectional, seed=6)
    u = torch.randn(2, 6, 2, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    ins = tuple(x.clone().requires_grad_() for x in (log_lambda, w, u))

    def fn(log_lambda, w, u):
        return dlr_kernel_conv(log_lambda, w, u, kernel=kernel, bidirectional=bidirectional, impl=impl)

    assert torch.autograd.gradcheck(fn, ins)


def test_equals_the_recurrence():
    """A DLR is the linear RNN x_k = Λ x_{k−1} + u_k with output Re⟨w, x_k⟩ (eq. (1)): run it with diag_scan's
    sequential reference, one state per (channel, n)."""
    h, n = 3, 4
    log_lambda, w = _params(h, n, seed=8)
    u = torch.randn(2, 200, h, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    lam = torch.exp(log_lambda).reshape(1, 1, h * n).expand(2, 200, h * n)
    x = naive_diag_scan(lam, u.to(torch.complex128).repeat_interleave(n, dim=2))
    y = (x.view(2, 200, h, n) * w).sum(-1).real
    assert err_ratio(dlr_kernel_conv(log_lambda, w, u), y) <= 1e-10


def test_initialization_gives_the_dft():
    """log λ_n = 2πi·n/N and L = N: K = DFT·w (the paper's initialization), read off as the response to a unit
    impulse."""
    n = 16
    log_lambda = torch.complex(
        torch.zeros(1, n, dtype=torch.float64), 2 * torch.pi * torch.arange(n, dtype=torch.float64)[None] / n
    )
    w = torch.complex(*torch.randn(2, 1, n, generator=torch.Generator().manual_seed(10), dtype=torch.float64))
    impulse = torch.zeros(1, n, 1, dtype=torch.float64)
    impulse[0, 0, 0] = 1
    dft = n * torch.fft.ifft(w[0])  # Σ_n w_n e^{2πi nk/N}
    assert err_ratio(dlr_kernel_conv(log_lambda, w, impulse)[0, :, 0], dft.real) <= 1e-12
    prod = dlr_kernel_conv(log_lambda, w, impulse, kernel="prod")[0, :, 0]
    assert err_ratio(prod, dft.real * dft.imag) <= 1e-12


def test_prod_kernel_is_a_dlr_with_n_squared_eigenvalues():
    """Re K · Im K = Im(K²)/2 = Re Σ_ij (−i/2) w_i w_j (λ_i λ_j)^k: the kernel of a DLR with eigenvalues λ_i λ_j
    (DLR §A.2)."""
    h, n = 2, 5
    log_lambda, w = _params(h, n, seed=11)
    u = torch.randn(3, 150, h, generator=torch.Generator().manual_seed(12), dtype=torch.float64)
    big_log = (log_lambda[:, :, None] + log_lambda[:, None, :]).reshape(h, n * n)
    big_w = (-0.5j * w[:, :, None] * w[:, None, :]).reshape(h, n * n)
    want = dlr_kernel_conv(big_log, big_w, u, kernel="re", impl="naive")
    for impl in ("naive", "fft"):
        assert err_ratio(dlr_kernel_conv(log_lambda, w, u, kernel="prod", impl=impl), want) <= 1e-10


def test_bidirectional_is_two_dlrs_one_per_direction():
    log_lambda, w = _params(2, 4, bidirectional=True, seed=13)
    u = torch.randn(2, 77, 2, generator=torch.Generator().manual_seed(14), dtype=torch.float64)
    causal = dlr_kernel_conv(log_lambda[0], w[0], u, impl="naive")
    anti = dlr_kernel_conv(log_lambda[1], w[1], u.flip(1), impl="naive").flip(1)
    got = dlr_kernel_conv(log_lambda, w, u, bidirectional=True)
    assert err_ratio(got, causal + anti) <= 1e-10


_LL, _W = _params(2, 3, dtype=torch.complex64)
_U = torch.zeros(1, 5, 2)


@pytest.mark.parametrize(
    "args,kw,match",
    [
        ((_LL.real, _W, _U), {}, r"log_lambda has dtype float32, expected complex64 or complex128"),
        ((_LL, _W[:, :2], _U), {}, r"w has shape \(2, 2\), expected \(2, 3\)"),
        ((_LL, _W.to(torch.complex128), _U), {}, r"w has dtype complex128, expected complex64"),
        ((_LL, _W, torch.zeros(1, 5, 3)), {}, r"u has shape \(1, 5, 3\), expected \(B, L, 2\)"),
        ((_LL, _W, _U.double()), {}, r"u has dtype float64, expected float32 or float16 or bfloat16"),
        ((_LL, _W, _U[0]), {}, r"u has shape \(5, 2\), expected 3 dimensions"),
        ((_LL, _W, _U), {"bidirectional": True}, r"log_lambda has shape \(2, 3\), expected 3 dimensions"),
        ((_LL[None].repeat(3, 1, 1), _W, _U), {"bidirectional": True}, r"expected \(2, H, N\)"),
        ((_LL, _W, _U), {"kernel": "im"}, r"unknown kernel 'im'"),
        ((_LL, _W, _U), {"impl": "triton"}, r"unknown impl 'triton'"),
    ],
)
def test_bad_input(args, kw, match):
    with pytest.raises(ValueError, match=match) as err:
        dlr_kernel_conv(*args, **kw)
    assert isinstance(err.value, FsaError) and err.value.args[0].startswith("dlr_kernel_conv: ")
