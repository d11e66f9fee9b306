"""numba's own ``np.argsort`` (kind ``"quicksort"``) of many rows in one compiled call — the sort ranx's ``Run`` uses.

Imported only when ``ties="ranx"`` meets a query of 16 or more documents with equal scores, and only when numba is
installed (ranx needs it, so anyone comparing with ranx has it). The function is compiled on first use (about a
second) and cached on disk where numba finds a writable cache directory.
"""

from __future__ import annotations

import numba
import numpy as np


def _argsort_rows(values, lengths):  # pragma: no cover - compiled by numba
    out = np.zeros(values.shape, dtype=np.int64)
    for row in range(values.shape[0]):
        n = lengths[row]
        out[row, :n] = np.argsort(values[row, :n])  # numba's default kind: its quicksort (numba/misc/quicksort.py)
    return out


try:
    argsort_rows = numba.njit(cache=True)(_argsort_rows)
except RuntimeError:  # no writable cache location: compile in memory
    argsort_rows = numba.njit(cache=False)(_argsort_rows)
