"""Claims of Gupta, Mehta & Berant, "Simplifying and Understanding State Space Models with Diagonal Linear RNNs"."""

from __future__ import annotations

import numpy as np
import torch

from ...nn.layers import DLR
from ...nn.ops import dlr_kernel_conv
from ...nn.ops.dlr import fft_kernel
from ...nn.ops.dlr.naive import naive_kernel
from .claims import Part, checked, require, theorem

SRC = "Gupta, Mehta & Berant, Simplifying and Understanding State Space Models with Diagonal Linear RNNs"


def _impulse_response(log_lambda: torch.Tensor, w: torch.Tensor, length: int, kernel: str) -> np.ndarray:
    """κ (H, L) as the op computes it: the response of dlr_kernel_conv to a unit impulse at position 0."""
    u = torch.zeros(1, length, log_lambda.shape[-2], dtype=torch.float64)
    u[0, 0] = 1.0
    return dlr_kernel_conv(log_lambda, w, u, kernel=kernel).numpy()[0].T


@theorem(
    "dlr.init_dft",
    f"{SRC}, §2.1 (parameterization and initialization)",
    "with θ_n = 2πn/N, a = 0 and L = N the DLR kernel K_k = Σ_n w_n λ_n^k is DFT·w",
    "equivalence",
)
def init_dft(thorough: bool) -> Part:
    worst_exact, worst_init, bound_init = 0.0, 0.0, 0.0
    sizes = (4, 16, 64, 256) if thorough else (4, 16, 64)
    for n in sizes:
        torch.manual_seed(n)
        layer = DLR(3, state_size=n, decay_init="zero").double()
        require(bool((layer.a == 0).all()), "decay_init='zero' does not start at a = 0")
        k, m = np.arange(n)[:, None], np.arange(n)[None, :]
        dft = np.exp(2j * np.pi * k * m / n)  # F[k, n] = e^{2πikn/N} = λ_n^k
        exact_theta = 2 * np.pi * np.arange(n) / n
        # the layer as initialized: θ stored in float32, so λ^k is off by k·|δθ| at most
        log_lambda, w = (t.detach() for t in layer.params(torch.float64))
        want = w.numpy() @ dft.T  # (H, L): K_k = Σ_n w_n F[k, n]
        dtheta = float(np.abs(layer.theta.detach().numpy() - exact_theta).max())
        bound_init = max(bound_init, n * dtheta * float(np.abs(w.numpy()).sum(-1).max()) + 1e-12)
        for got in (naive_kernel(log_lambda, w, n).numpy(), _impulse_response(log_lambda, w, n, "re")):
            part = want if np.iscomplexobj(got) else want.real
            worst_init = max(worst_init, float(np.abs(got - part).max()))
        require(worst_init <= bound_init, f"N = {n}: kernel off DFT·w by {worst_init:.3g} > {bound_init:.3g}")
        # θ exactly 2πn/N in float64: the equivalence itself
        with torch.no_grad():
            layer.theta.copy_(torch.from_numpy(np.broadcast_to(exact_theta, layer.theta.shape).copy()))
        log_lambda, w = (t.detach() for t in layer.params(torch.float64))
        for got in (naive_kernel(log_lambda, w, n).numpy(), _impulse_response(log_lambda, w, n, "re")):
            part = want if np.iscomplexobj(got) else want.real
            worst_exact = max(worst_exact, float(np.abs(got - part).max() / max(1.0, np.abs(want).max())))
    require(worst_exact <= 1e-10, f"kernel differs from DFT·w by {worst_exact:.3g} with exact θ")
    return checked(
        f"with θ_n = 2πn/N the kernel (and the op's impulse response) equals DFT·w to {worst_exact:.2g}; as "
        f"initialized (θ stored in float32) within {worst_init:.2g} ≤ L·|δθ|·Σ|w| = {bound_init:.2g}",
        cases=f"N = L ∈ {list(sizes)}, a = 0, 3 channels",
        tolerance="1e-10 relative (exact θ); L·|δθ|·Σ|w| (float32 θ)",
    )


def _prod_as_dlr(lam: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 4N² eigenvalues and weights of a DLR whose kernel Re(K') is Re(K)·Im(K) (DLR §A.2):
    Re K_k = ½Σ_i (w_i λ_i^k + w̄_i λ̄_i^k), Im K_k = (1/2i)Σ_j (w_j λ_j^k − w̄_j λ̄_j^k), so the product is
    Σ_{i,j} of four terms with eigenvalues λ_iλ_j, λ̄_iλ_j, λ_iλ̄_j, λ̄_iλ̄_j and weights (1/4i)(±…)."""
    li, lj = lam[..., :, None], lam[..., None, :]
    wi, wj = w[..., :, None], w[..., None, :]
    mu = np.concatenate([(li * lj), (li.conj() * lj), (li * lj.conj()), (li.conj() * lj.conj())], axis=-1)
    coef = np.concatenate([wi * wj, wi.conj() * wj, -(wi * wj.conj()), -(wi.conj() * wj.conj())], axis=-1) / 4j
    h = lam.shape[0]
    return mu.reshape(h, -1), coef.reshape(h, -1)


@theorem(
    "dlr.prod",
    f"{SRC}, §2.1 and appendix A.2",
    "DLR-prod's kernel Re(K)·Im(K) is the kernel of a DLR with at most 4N² eigenvalues",
    "equivalence",
)
def prod(thorough: bool) -> Part:
    worst, checked_ = 0.0, []
    for n, length in ((2, 64), (8, 256), (16, 512)) + (((32, 2048),) if thorough else ()):
        torch.manual_seed(n)
        layer = DLR(4, state_size=n, kernel="prod").double()
        log_lambda, w = (t.detach() for t in layer.params(torch.float64))
        kappa = _impulse_response(log_lambda, w, length, "prod")
        mu, coef = _prod_as_dlr(torch.exp(log_lambda).numpy(), w.numpy())
        require(mu.shape[-1] <= 4 * n * n and np.abs(mu).max() <= 1 + 1e-12, "the product DLR is not a DLR of ≤ 4N²")
        big = _impulse_response(torch.from_numpy(np.log(mu)), torch.from_numpy(coef), length, "re")
        scale = max(1e-300, float(np.abs(kappa).max()))
        worst = max(worst, float(np.abs(kappa - big).max() / scale))
        checked_.append(f"N={n}, L={length}")
    require(worst <= 1e-9, f"the kernels differ by {worst:.3g} (relative)")
    # the general Kronecker product: K(λ, w)·K(μ, v) = K(λ ⊗ μ, w ⊗ v), for two unrelated random DLRs
    rng = np.random.default_rng(5)
    worst_k = 0.0
    for n1, n2, length in ((3, 5, 128), (8, 4, 256)):
        lam = np.exp(-rng.uniform(0, 0.05, (2, n1)) + 1j * rng.uniform(0, 2 * np.pi, (2, n1)))
        mu = np.exp(-rng.uniform(0, 0.05, (2, n2)) + 1j * rng.uniform(0, 2 * np.pi, (2, n2)))
        w, v = (rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape) for x in (lam, mu))
        kron_l = (lam[:, :, None] * mu[:, None, :]).reshape(2, -1)
        kron_w = (w[:, :, None] * v[:, None, :]).reshape(2, -1)
        k = np.arange(length)
        direct = (w[..., None] * lam[..., None] ** k).sum(1) * (v[..., None] * mu[..., None] ** k).sum(1)

        got = fft_kernel(torch.from_numpy(np.log(kron_l)), torch.from_numpy(kron_w), length).numpy()
        worst_k = max(worst_k, float(np.abs(got - direct).max() / np.abs(direct).max()))
    require(worst_k <= 1e-9, f"K(λ⊗μ, w⊗v) differs from K(λ, w)·K(μ, v) by {worst_k:.3g} (relative)")
    return checked(
        f"Re K·Im K of DLR-prod equals the re-kernel of the 4N²-eigenvalue DLR (max rel. error {worst:.2g}); the "
        f"general Kronecker product K(λ⊗μ, w⊗v) = K(λ, w)·K(μ, v) for unrelated DLRs (max rel. error {worst_k:.2g})",
        cases=", ".join(checked_) + "; Kronecker N1×N2 ∈ {3×5 (L = 128), 8×4 (L = 256)}, 2 channels, seed 5",
        tolerance="1e-9 relative",
    )


def _sequential(lam: np.ndarray, w: np.ndarray, u: np.ndarray, part: str) -> np.ndarray:
    """The DLR as its recurrence, in numpy: x_t = λ x_(t−1) + u_t, y_t = part(Σ_n w_n x_t[n]) (H, L) from u (H, L)."""
    h, length = u.shape
    x = np.zeros(lam.shape, dtype=np.complex128)
    y = np.zeros((h, length))
    for t in range(length):
        x = lam * x + u[:, t : t + 1]
        z = (w * x).sum(-1)
        y[:, t] = z.real if part == "re" else z.imag
    return y


@theorem(
    "dlr.conv",
    f"{SRC}, §2 (eq. 4) and §2.1 (bidirectional)",
    "the DLR recurrence x_t = Λx_(t−1) + u_t, y_t = Re⟨w, x_t⟩ equals the convolution y = K ∗ u (K_k = Σ w_n λ_n^k), "
    "and the bidirectional DLR equals the causal one plus the anti-causal one run on the reversed input",
    "equivalence",
)
def conv(thorough: bool) -> Part:
    rng = np.random.default_rng(7)
    worst, cases = 0.0, []
    for n, length in ((4, 64), (16, 300)) + (((32, 2048),) if thorough else ()):
        h = 3
        lam = np.exp(-rng.uniform(0, 0.02, (2, h, n)) + 1j * rng.uniform(0, 2 * np.pi, (2, h, n)))
        w = rng.standard_normal((2, h, n)) + 1j * rng.standard_normal((2, h, n))
        u = rng.standard_normal((2, length, h))
        ll, ww, uu = torch.from_numpy(np.log(lam)), torch.from_numpy(w), torch.from_numpy(u)
        for b in range(2):
            want = _sequential(lam[0], w[0], u[b].T, "re")
            for impl in ("fft", "naive"):
                got = dlr_kernel_conv(ll[0], ww[0], uu, impl=impl).numpy()[b].T
                worst = max(worst, float(np.abs(got - want).max() / np.abs(want).max()))
            # bidirectional: causal on u plus the second DLR on the reversed input, reversed back
            back = _sequential(lam[1], w[1], u[b, ::-1].T, "re")[:, ::-1]
            for impl in ("fft", "naive"):
                got = dlr_kernel_conv(ll, ww, uu, bidirectional=True, impl=impl).numpy()[b].T
                worst = max(worst, float(np.abs(got - (want + back)).max() / np.abs(want + back).max()))
        cases.append(f"N = {n}, L = {length}")
    require(worst <= 1e-9, f"the convolution differs from the recurrence by {worst:.3g} (relative)")
    return checked(
        f"the op (fft of size 2L, and naive Toeplitz) equals the recurrence run step by step in numpy, causal and "
        f"bidirectional, on random inputs: max rel. error {worst:.2g}",
        cases="; ".join(cases) + "; 3 channels, 2 random input words each, seed 7",
        tolerance="1e-9 relative",
    )
