"""The program of compiled PD-SSMs (target "pdssm"): one layer h_t = P(x_t) D(x_t) h_{t−1}, P(x) as index arrays, and
the one-hot readout of each coordinate (automaton_to_pdssm.py here)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....fsa.errors import ModelFileError
from ...model import CompiledModel
from ...program import HeaderReader, Program


@dataclass(frozen=True, eq=False)
class PDSSMProgram(Program):
    """Target "pdssm": h_t = P(x_t) D(x_t) h_{t−1} from ``h0`` (N,), ``P`` (|Σ|, N) int (column j of P(x) has its one
    in row P[x, j]), ``D`` (|Σ|, N) the diagonals; ``readout`` (N,) the state each coordinate reads as (argmax h)."""

    P: np.ndarray
    D: np.ndarray
    h0: np.ndarray
    readout: np.ndarray

    @property
    def width(self) -> int:
        return int(self.P.shape[1])

    def symbol_spectra(self) -> dict[str, np.ndarray]:
        """The eigenvalues of A(x) = P(x) D(x) for every symbol x (:func:`pd_spectrum`, without forming A)."""
        return {self.symbols[x]: pd_spectrum(self.P[x], self.D[x]) for x in range(self.n_symbols)}

    @classmethod
    def parse(cls, model: CompiledModel) -> PDSSMProgram:
        r = HeaderReader(model)
        common = cls._common(model)
        layers = model.header["layers"]
        if not isinstance(layers, list) or len(layers) != 1:
            raise ModelFileError("model header: a pdssm model has exactly one layer")
        entry = layers[0]
        P = r.tensor(r.entry(entry, "P", "layer 0"), 2, int)
        D = r.tensor(r.entry(entry, "D", "layer 0"), 2, float)
        h0 = r.tensor(r.entry(entry, "h0", "layer 0"), 1, float)
        readout = r.tensor(r.entry(model.header["readout"], "states", "readout"), 1, int)
        s, n = len(common["symbols"]), P.shape[1]
        if P.shape != (s, n) or D.shape != (s, n) or h0.shape != (n,) or readout.shape != (n,):
            raise ModelFileError(f"model header: the PD-SSM's tensors do not match |Σ| = {s} and N = {n}")
        if P.size and (P.min() < 0 or P.max() >= n):
            raise ModelFileError(f"model header: P's row indices must lie in [0, {n})")
        if readout.size and (readout.min() < 0 or readout.max() >= len(common["states"])):
            raise ModelFileError("model header: the readout names a state out of range")
        return cls(**common, P=P, D=D, h0=h0, readout=readout)


def pd_spectrum(idx: np.ndarray, diag: np.ndarray) -> np.ndarray:
    """Eigenvalues of A = P D, P column one-hot (column j → row idx[j]), without forming A: the points off the cycles
    of j ↦ idx[j] give 0, and a cycle c of length ℓ gives the ℓ-th roots of Π_{j ∈ c} diag[j] (A^ℓ restricted to
    the cycle is that product times the identity)."""
    idx = np.asarray(idx, dtype=np.int64)
    n = len(idx)
    g = idx.copy()
    for _ in range(max(1, int(n).bit_length())):  # g = idx^(2^k) with 2^k ≥ n: its image is the cyclic points
        g = g[g]
    on_cycle = np.zeros(n, dtype=bool)
    on_cycle[g] = True
    eig: list[complex] = [0j] * int(n - on_cycle.sum())
    seen = ~on_cycle
    for start in np.flatnonzero(on_cycle).tolist():
        if seen[start]:
            continue
        cycle, j = [], start
        while not seen[j]:
            seen[j] = True
            cycle.append(j)
            j = int(idx[j])
        prod = complex(np.prod(np.asarray(diag)[cycle]))
        ell = len(cycle)
        root = abs(prod) ** (1 / ell) * np.exp(1j * np.angle(prod) / ell)
        eig.extend((root * np.exp(2j * np.pi * np.arange(ell) / ell)).tolist())
    return np.asarray(eig, dtype=np.complex128)


__all__ = ["PDSSMProgram", "pd_spectrum"]
