"""pytorch-fid 0.3.0 (the FID oracle) on SciPy ≥ 1.18, whose ``sqrtm`` no longer takes the ``disp`` argument.

pytorch-fid's Fréchet step calls ``scipy.linalg.sqrtm(sigma1 @ sigma2, disp=False)`` and unpacks ``(root, error)``;
SciPy 1.18 (Python ≥ 3.12: the GPU machine's image) removed ``disp`` and raises ``TypeError``. Inside
:func:`sqrtm_accepting_disp` pytorch-fid's own code runs unchanged: ``sqrtm`` takes ``disp`` again and, for
``disp=False``, returns ``(root, None)`` (pytorch-fid discards the error estimate, so none is computed). On a SciPy
that still has ``disp`` nothing is replaced.
"""

from __future__ import annotations

import contextlib
import inspect
from typing import Any, Iterator
from unittest import mock

__all__ = ["sqrtm_accepting_disp", "pytorch_fid_frechet_distance"]


@contextlib.contextmanager
def sqrtm_accepting_disp() -> Iterator[None]:
    """While active, ``scipy.linalg.sqrtm(A, disp=...)`` works on every SciPy (see the module docstring)."""
    from scipy import linalg

    sqrtm = linalg.sqrtm
    if "disp" in inspect.signature(sqrtm).parameters:
        yield
        return

    def sqrtm_with_disp(matrix: Any, disp: bool = True, **options: Any) -> Any:
        root = sqrtm(matrix, **options)
        return root if disp else (root, None)

    with mock.patch.object(linalg, "sqrtm", sqrtm_with_disp):
        yield


def pytorch_fid_frechet_distance(mu1: Any, sigma1: Any, mu2: Any, sigma2: Any) -> float:
    """pytorch-fid's ``calculate_frechet_distance`` (its code, scipy's ``sqrtm``) on any SciPy.

    Example:
        >>> import numpy as np
        >>> round(pytorch_fid_frechet_distance(np.zeros(2), np.eye(2), np.ones(2), np.eye(2)), 6)
        2.0
    """
    from pytorch_fid.fid_score import calculate_frechet_distance

    with sqrtm_accepting_disp():
        return float(calculate_frechet_distance(mu1, sigma1, mu2, sigma2))
