"""Symmetric matrix kernels: ``tr √(Σ₁Σ₂)`` for PSD matrices without complex arithmetic, covariance from sums.

``tr √(Σ₁Σ₂)`` is the sum of the square roots of the eigenvalues of ``Σ₁Σ₂``. For ``Σ₁ = F Fᵀ`` those are the
eigenvalues of the *symmetric* PSD matrix ``Fᵀ Σ₂ F`` (similar to ``Σ₁Σ₂`` up to a change of basis), so one
``eigvalsh`` gives them, real by construction; the rare tiny negative round-off eigenvalues are clamped at 0.

Factor ``F``: the Cholesky factor of ``Σ₁`` when it is positive definite (cheap: n³/3 flops), else — rank-deficient
covariance, e.g. fewer samples than dimensions — ``V Λ₊^½`` from ``eigh(Σ₁)`` with negative eigenvalues clamped,
which is the exact PSD square root of the clamped matrix. This replaces scipy's ``sqrtm`` (Schur form in complex
arithmetic, which can return complex or NaN results and needs an ``eps`` offset on singular input) and
torchmetrics' ``eigvals(Σ₁Σ₂)`` (general, complex eigenvalue problem).
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor


def psd_tolerance(d: int, dtype: torch.dtype) -> float:
    """Relative tolerance of the symmetric-PSD checks for a ``d × d`` matrix that was given in ``dtype``.

    Round-off of a covariance computed in ``dtype`` (or stored in it) leaves negative eigenvalues of order
    ``d · eps · λ_max``; the streaming float64 covariance of offset-dominated features loses more (up to ~1e-7
    relative where ``gpumetrics`` warns about it). A matrix that is not a covariance misses by far more than that.

    Example:
        >>> psd_tolerance(2048, torch.float64), round(psd_tolerance(2048, torch.float32), 6)
        (1e-06, 0.001953)
    """
    return max(1e-6, 8 * d * torch.finfo(dtype).eps)


def check_symmetric(sigma: Tensor, name: str, rtol: float) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``max |Σ − Σᵀ| ≤ rtol · max |Σ|`` (``sigma: Tensor[d, d]``)."""
    asymmetry, scale = torch.stack([(sigma - sigma.mT).abs().amax(), sigma.abs().amax()]).tolist()
    if asymmetry > rtol * scale:
        raise ValueError(
            f"`{name}` must be a symmetric covariance matrix: max |{name} − {name}ᵀ| = {asymmetry:.3g} exceeds "
            f"{rtol:g} × max |{name}| = {rtol * scale:.3g}"
        )


def _check_eigenvalues(values: Tensor, name: str, rtol: float) -> None:
    lowest, highest = torch.stack([values.min(), values.abs().max()]).tolist()
    if lowest < -rtol * highest:
        raise ValueError(
            f"`{name}` must be positive semi-definite (a covariance): its smallest eigenvalue is {lowest:.6g} "
            f"against a largest |eigenvalue| of {highest:.6g}, beyond the round-off tolerance −{rtol:g} × "
            f"{highest:.3g}"
        )


def check_psd(sigma: Tensor, name: str, rtol: float) -> None:
    """Raise ``ValueError`` naming ``name`` unless the symmetric ``sigma: Tensor[d, d]`` is PSD up to round-off.

    A Cholesky factorisation that succeeds proves positive definiteness (``n³/3`` flops); otherwise the smallest
    eigenvalue must be ``≥ −rtol · max |λ|``.
    """
    _, info = torch.linalg.cholesky_ex(sigma)
    if int(info) != 0:
        _check_eigenvalues(torch.linalg.eigvalsh(sigma), name, rtol)


def psd_factor(sigma: Tensor, name: Optional[str] = None, rtol: float = 1e-6) -> tuple[Tensor, bool]:
    """A factor ``F`` with ``F Fᵀ = Σ`` for a symmetric PSD ``Σ``.

    Args:
        sigma: ``Tensor[d, d]`` symmetric positive semi-definite.
        name: when given, a ``Σ`` whose smallest eigenvalue is below ``−rtol · max |λ|`` raises a ``ValueError``
            naming it (else negative eigenvalues are clamped at 0 whatever their size).
        rtol: relative round-off tolerance of that check (see ``psd_tolerance``).

    Returns:
        ``(F, is_cholesky)``: ``Tensor[d, d]``; ``is_cholesky`` is False when ``Σ`` is not positive definite and
        the clamped eigen-decomposition was used.

    Raises:
        ValueError: ``name`` given and ``Σ`` not PSD beyond round-off.

    Example:
        >>> f, chol = psd_factor(torch.eye(3, dtype=torch.float64) * 4)
        >>> chol, f.diagonal().tolist()
        (True, [2.0, 2.0, 2.0])
    """
    factor, info = torch.linalg.cholesky_ex(sigma)
    if int(info) == 0:
        return factor, True
    values, vectors = torch.linalg.eigh(sigma)
    if name is not None:
        _check_eigenvalues(values, name, rtol)
    return vectors * values.clamp(min=0).sqrt().unsqueeze(0), False


def covariance_from_sums(total: Tensor, outer: Tensor, count: Tensor) -> tuple[Tensor, Tensor]:
    """Mean and unbiased (n − 1) covariance from ``Σx``, ``Σxxᵀ`` and ``n``, as ``np.cov(rowvar=False)``.

    Args:
        total: ``Tensor[d]`` sum of the samples.
        outer: ``Tensor[d, d]`` sum of outer products.
        count: number of samples ``n ≥ 2``.

    Returns:
        ``(mu: Tensor[d], sigma: Tensor[d, d])`` in the dtype of the sums.

    Example:
        >>> x = torch.tensor([[1.0, 2.0], [3.0, 5.0], [4.0, 4.0]], dtype=torch.float64)
        >>> mu, sigma = covariance_from_sums(x.sum(0), x.T @ x, torch.tensor(3))
        >>> [[round(v, 6) for v in row] for row in sigma.tolist()]
        [[2.333333, 1.833333], [1.833333, 2.333333]]
    """
    n = count.to(total.dtype)
    mu = total / n
    sigma = (outer - n * torch.outer(mu, mu)) / (n - 1)
    return mu, (sigma + sigma.mT) / 2
