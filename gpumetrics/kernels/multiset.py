"""Multiset (bag-of-ids) statistics over segmented id tensors, with ``unique`` + ``bincount``, no Python loops."""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor


def multiset_intersection_size(
    left_ids: Tensor,
    left_segments: Tensor,
    right_ids: Tensor,
    right_segments: Tensor,
    n_segments: int,
    id_bound: Optional[int] = None,
) -> Tensor:
    """Size of the multiset intersection of two bags per segment: ``Σ_t min(count_left(t), count_right(t))``.

    Args:
        left_ids: ``LongTensor[L]`` non-negative ids of the left bags, concatenated.
        left_segments: ``LongTensor[L]`` segment (bag) index in ``[0, n_segments)`` of each left id.
        right_ids: ``LongTensor[R]`` ids of the right bags.
        right_segments: ``LongTensor[R]`` segment index of each right id.
        n_segments: number of bag pairs.
        id_bound: an upper bound of the ids when the caller knows one (no host synchronisation); else read.

    Returns:
        ``LongTensor[n_segments]`` common-element counts, on the device of the inputs.

    Example:
        >>> ids = torch.tensor([1, 1, 2, 7])
        >>> multiset_intersection_size(ids, torch.tensor([0, 0, 0, 1]), torch.tensor([1, 3, 1, 7]),
        ...                            torch.tensor([0, 0, 0, 1]), 2)
        tensor([2, 1])
    """
    device = left_ids.device
    counts = torch.zeros(n_segments, dtype=torch.long, device=device)
    if left_ids.numel() == 0 or right_ids.numel() == 0:
        return counts
    span = id_bound if id_bound is not None else int(torch.maximum(left_ids.max(), right_ids.max()).item()) + 1
    keys = torch.cat([left_segments * span + left_ids, right_segments * span + right_ids])
    # return_counts selects torch's sort-based CPU path, ~10x faster than the inverse-only one
    unique_keys, inverse, _ = torch.unique(keys, sorted=True, return_inverse=True, return_counts=True)
    n_left = left_ids.numel()
    left_counts = torch.bincount(inverse[:n_left], minlength=unique_keys.numel())
    right_counts = torch.bincount(inverse[n_left:], minlength=unique_keys.numel())
    common = torch.minimum(left_counts, right_counts)
    return counts.index_add_(0, torch.div(unique_keys, span, rounding_mode="floor"), common)
