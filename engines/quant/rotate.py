"""Rotations that spread outliers: random Hadamard and random orthogonal matrices (QuaRot style).

Ashkboos et al., "QuaRot: Outlier-Free 4-Bit Inference in Rotated LLMs", NeurIPS'24,
arXiv 2404.00456 (spcl/QuaRot ``hadamard_utils.py``, ``rotation_utils.py``): for an orthogonal Q,
(X Q)(W Q)ᵀ = X Wᵀ, and a spike of size M becomes ±M/√n in every coordinate, so max/median → ~1.
Q is a Hadamard matrix times a random ±1 diagonal, divided by √n, or the Q factor of a Gaussian
matrix. Hadamard orders built here: 2^k (Sylvester), (q+1)·2^k for a prime q ≡ 3 mod 4 (Paley I)
and 2(q+1)·2^k for a prime q ≡ 1 mod 4 (Paley II) — e.g. 384 = 12·32, 576 = 36·16, 1536 = 12·128.
"""
from __future__ import annotations

from functools import lru_cache

from engines.core.errors import ValidationError, require_choice, require_int

KINDS = ("hadamard", "orthogonal")
MAX_ORTHOGONAL = 16384
"""Largest random orthogonal order: its float64 QR holds 2 GiB and takes O(n³) time."""


def _is_prime(q: int) -> bool:
    return q >= 2 and all(q % d for d in range(2, int(q ** 0.5) + 1))


def _jacobsthal(q: int):
    import numpy as np

    squares = {(i * i) % q for i in range(1, q)}
    chi = np.array([0] + [1 if a in squares else -1 for a in range(1, q)])
    i = np.arange(q)
    return chi[(i[None, :] - i[:, None]) % q]


def _paley(m: int):
    """A Hadamard matrix of order m by Paley I or II, or None."""
    import numpy as np

    q = m - 1
    if _is_prime(q) and q % 4 == 3:               # Paley I: H = I + [[0, 1ᵀ], [−1, Q]]
        S = np.zeros((m, m), dtype=np.int64)
        S[0, 1:] = 1
        S[1:, 0] = -1
        S[1:, 1:] = _jacobsthal(q)
        return np.eye(m, dtype=np.int64) + S
    if m % 2 == 0:
        q = m // 2 - 1
        if _is_prime(q) and q % 4 == 1:           # Paley II from the symmetric conference matrix
            C = np.zeros((q + 1, q + 1), dtype=np.int64)
            C[0, 1:] = 1
            C[1:, 0] = 1
            C[1:, 1:] = _jacobsthal(q)
            zero = np.array([[1, -1], [-1, -1]])
            one = np.array([[1, 1], [1, -1]])
            return np.block([[zero if c == 0 else c * one for c in row] for row in C])
    return None


@lru_cache(maxsize=16)
def hadamard(n: int):
    """An n × n ±1 Hadamard matrix (numpy int) or a ValidationError naming the orders supported."""
    import numpy as np

    n = require_int(n, "n", 1, 1 << 16)
    k = 0
    while n % (2 ** (k + 1)) == 0:
        k += 1
    for j in range(k, -1, -1):                    # largest power-of-two factor first
        m = n // 2 ** j
        base = np.array([[1]]) if m == 1 else _paley(m)
        if base is not None:
            H = base
            for _ in range(j):
                H = np.block([[H, H], [H, -H]])
            return H
    raise ValidationError("rotation", f"no Hadamard construction here for order {n}",
                          "2^k, (q+1)·2^k (prime q ≡ 3 mod 4), 2(q+1)·2^k (prime q ≡ 1 mod 4); "
                          "or use kind='orthogonal'")


def rotation_matrix(n: int, kind: str = "hadamard", seed: int = 0, device: str = "cpu"):
    """An orthogonal n × n float32 matrix: random Hadamard (H·diag(±1)/√n) or random orthogonal (QR)."""
    import torch

    require_choice(kind, "kind", KINDS)
    n = require_int(n, "n", 1, 1 << 16 if kind == "hadamard" else MAX_ORTHOGONAL)
    seed = require_int(seed, "seed", 0)
    gen = torch.Generator().manual_seed(seed)
    if kind == "hadamard":
        H = torch.from_numpy(hadamard(n)).to(torch.float64)
        signs = torch.randint(0, 2, (n,), generator=gen).to(torch.float64) * 2 - 1
        Q = H * signs[None, :] / n ** 0.5
    else:
        A = torch.randn(n, n, generator=gen, dtype=torch.float64)
        Q, R = torch.linalg.qr(A)
        Q = Q * torch.sign(torch.diagonal(R))[None, :]     # Haar-uniform
    return Q.to(torch.float32).to(device)


def rotate(x, w, kind: str = "hadamard", seed: int = 0):
    """Return (X Q, W Q, Q): the same product X Wᵀ, with outliers spread over all channels."""
    from engines.quant.affine import check_matrix

    x = check_matrix(x, "x")
    w = check_matrix(w, "w")
    if x.shape[1] != w.shape[1]:
        raise ValidationError("x", f"has {x.shape[1]} channels but w has {w.shape[1]} inputs",
                              f"(tokens, {w.shape[1]})")
    Q = rotation_matrix(w.shape[1], kind, seed, str(w.device))
    return x.float().to(w.device) @ Q, w.float() @ Q, Q
