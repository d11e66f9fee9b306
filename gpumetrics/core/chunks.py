"""Row-wise work in chunks under a working-memory budget: one mechanism for functions whose temporaries grow with
the rows they see at once (Shapley value functions scoring batches of coalitions)."""

from __future__ import annotations

from typing import Callable

import torch
from torch import Tensor

__all__ = ["WORKING_BYTES", "rows_per_chunk", "map_row_chunks"]

WORKING_BYTES = 1 << 28  # 256 MiB of temporaries per chunk (read at call time: tests lower it)


def rows_per_chunk(bytes_per_row: int, budget: int | None = None) -> int:
    """How many rows of ``bytes_per_row`` bytes of working memory fit the budget (``WORKING_BYTES``); at least 1."""
    return max(1, (WORKING_BYTES if budget is None else budget) // max(1, bytes_per_row))


def map_row_chunks(fn: Callable[[Tensor], Tensor], rows: Tensor, chunk: int) -> Tensor:
    """``fn`` on ``rows: Tensor[C, ...]`` in chunks of at most ``chunk`` rows, results concatenated on dim 0.

    ``fn`` must treat rows independently (row ``i`` of its result depends on row ``i`` only); one call when
    ``C ≤ chunk`` (including ``C = 0``).

    Example:
        >>> map_row_chunks(lambda x: x.sum(1), torch.arange(6).view(3, 2), chunk=2).tolist()
        [1, 5, 9]
    """
    if rows.shape[0] <= chunk:
        return fn(rows)
    return torch.cat([fn(rows[start:start + chunk]) for start in range(0, rows.shape[0], chunk)])
