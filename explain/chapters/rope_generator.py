"""RoPE's "why block-diagonal?" panel: any rotation that depends only on position is the exponential of
a skew-symmetric generator, and a real orthogonal change of basis makes that generator block-diagonal
(2 × 2 blocks) — RoPE's frequency pairs, in some basis. The numbers the panel shows: a random
generator, its real canonical form (checked against scipy's real Schur form in tests/test_rope.py),
and the exponential compared with RoPE's rotation in the new basis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from encoders.rope import (
    rotation_matrix,
)
from explain.bounds import bounded

SKEW_D = 6  # the random skew-symmetric generator of "why block-diagonal?"
SKEW_M = 5  # the position at which its exponential is compared


def random_skew(d: int, seed: int) -> np.ndarray:
    """A seeded random real skew-symmetric d×d matrix, (G − Gᵀ)/2 with G standard normal."""
    g = np.random.default_rng(seed).standard_normal((d, d))
    skew: np.ndarray = (g - g.T) / 2
    return skew


def real_canonical_form(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An orthogonal Q and frequencies θ (d/2,), descending, with QᵀAQ = ⊕_f θ_f J,
    J = [[0, −1], [1, 0]], for a real skew-symmetric A of even size d.

    That such a Q exists is the spectral theorem for normal matrices (here: the real Schur form of
    a skew-symmetric matrix is block-diagonal). This finds one: A² = −AᵀA is symmetric with
    eigenvalues −θ_f², each twice. For a unit eigenvector u with θ > 0, v = Au/θ is a unit vector
    orthogonal to u, and Au = θv, Av = A²u/θ = −θu: in the basis (u, v) A acts as θJ. The plane
    (u, v) is invariant under A, hence so is its orthogonal complement, where the next u is taken.
    """
    d = a.shape[0]
    if d % 2 or a.shape != (d, d):
        raise ValueError("need a square matrix of even size")
    if not np.allclose(a, -a.T, atol=1e-12):
        raise ValueError("the matrix is not skew-symmetric")
    squared, vectors = np.linalg.eigh(-(a @ a))  # θ² ascending, orthonormal eigenvectors
    order = np.argsort(-squared, kind="stable")
    # θ below this is rounding of a zero frequency (eigh leaves ~1e-16 in θ², i.e. ~1e-8 in θ)
    zero = 1e-7 * max(1.0, math.sqrt(max(float(squared.max()), 0.0)))
    basis: list[np.ndarray] = []
    thetas: list[float] = []
    for k in order:
        if len(basis) == d:
            break
        u = _orthogonalised(vectors[:, k], basis)
        norm = float(np.linalg.norm(u))
        if norm < 1e-3:  # already in the span of the planes chosen so far
            continue
        u = u / norm
        theta = math.sqrt(max(float(squared[k]), 0.0))
        if theta > zero:
            v = _orthogonalised(a @ u / theta, [*basis, u])  # a unit vector already, up to rounding
            v = v / np.linalg.norm(v)
        else:  # a null direction: its partner is any other null direction orthogonal to everything so far
            theta = 0.0
            v = _orthogonal_partner(vectors, [*basis, u])
        basis += [u, v]
        thetas.append(theta)
    return np.stack(basis, axis=1), np.asarray(thetas)


def _orthogonalised(x: np.ndarray, chosen: list[np.ndarray]) -> np.ndarray:
    """x minus its parts along the orthonormal vectors `chosen` (Gram–Schmidt, twice for rounding)."""
    for _ in range(2):
        x = x - sum(((w @ x) * w for w in chosen), np.zeros(x.size))
    return x


def _orthogonal_partner(vectors: np.ndarray, chosen: list[np.ndarray]) -> np.ndarray:
    """The first column of `vectors` with a part orthogonal to `chosen`, normalised."""
    for x in vectors.T:
        r = _orthogonalised(x, chosen)
        if np.linalg.norm(r) > 1e-3:
            partner: np.ndarray = r / np.linalg.norm(r)
            return partner
    raise ValueError("no direction left")  # cannot happen for an even size


def block_generator(thetas: np.ndarray) -> np.ndarray:
    """⊕_f θ_f J, (d, d)."""
    d = 2 * thetas.size
    out = np.zeros((d, d))
    for f, th in enumerate(thetas):
        out[2 * f, 2 * f + 1], out[2 * f + 1, 2 * f] = -th, th
    return out


def block_rotation(thetas: np.ndarray, m: float) -> np.ndarray:
    """⊕_f R(mθ_f), (d, d): RoPE's interleaved R_m with these frequencies."""
    return rotation_matrix(m, 2 * thetas.size, inv_freq=torch.from_numpy(np.asarray(thetas, dtype=np.float64))).numpy()


@dataclass(frozen=True)
class SkewView:
    generator: np.ndarray  # (d, d) A, random skew-symmetric
    basis: np.ndarray  # (d, d) Q, orthonormal columns
    blocks: np.ndarray  # (d, d) QᵀAQ
    frequencies: np.ndarray  # (d/2,) θ_f, descending
    m: int  # the position at which e^{mA} is compared
    off_block: float  # largest |entry of QᵀAQ outside its 2×2 diagonal blocks|
    block_gap: float  # largest |QᵀAQ − ⊕ θ_f J|
    orthogonality_gap: float  # largest |QᵀQ − I|
    exponential_gap: float  # largest |e^{mA} − Q(⊕ R(mθ_f))Qᵀ|, e^{mA} by torch.linalg.matrix_exp
    relative_gap: float  # largest |R_mᵀR_n − R_(n−m)| for R_p = e^{pA}, p = 0 … 7

    @property
    def frequencies_text(self) -> str:
        return ", ".join(f"{v:.3f}" for v in self.frequencies)


@bounded(32)
def skew_view(seed: int, d: int = SKEW_D, m: int = SKEW_M) -> SkewView:
    """A random skew-symmetric generator A, its block-diagonal form QᵀAQ, and the checks that
    e^{mA} is RoPE's rotation in the basis Q (every number float64)."""
    a = random_skew(d, seed)
    q, thetas = real_canonical_form(a)
    blocks = q.T @ a @ q
    mask = np.zeros((d, d), dtype=bool)  # True on the 2×2 diagonal blocks
    for f in range(d // 2):
        mask[2 * f : 2 * f + 2, 2 * f : 2 * f + 2] = True

    def exp(p: float) -> np.ndarray:
        e: np.ndarray = torch.linalg.matrix_exp(torch.from_numpy(p * a)).numpy()
        return e

    rel = max(float(np.abs(exp(i).T @ exp(j) - exp(j - i)).max()) for i in range(8) for j in range(8))
    return SkewView(
        a,
        q,
        blocks,
        thetas,
        m,
        float(np.abs(blocks[~mask]).max(initial=0.0)),
        float(np.abs(blocks - block_generator(thetas)).max()),
        float(np.abs(q.T @ q - np.eye(d)).max()),
        float(np.abs(exp(m) - q @ block_rotation(thetas, m) @ q.T).max()),
        rel,
    )
