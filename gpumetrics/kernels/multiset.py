"""Multiset (bag-of-ids) statistics over segmented id tensors, with one sort, no Python loops and no host
synchronisation when the caller bounds the ids."""

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
        id_bound: an upper bound of the ids when the caller knows one (then no host synchronisation at all); else
            read (one).

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
    # one sort; runs of equal keys are the (segment, id) entries; every size is L + R (no unique, no read-back)
    keys, perm = torch.sort(keys)
    size = keys.numel()
    first = torch.ones(1, dtype=torch.bool, device=device)
    run = torch.cumsum(torch.cat((first, keys[1:] != keys[:-1])), 0) - 1
    right = (perm >= left_ids.numel()).long()
    right_counts = torch.zeros(size, dtype=torch.long, device=device).index_add_(0, run, right)
    left_counts = torch.zeros(size, dtype=torch.long, device=device).index_add_(0, run, 1 - right)
    common = torch.minimum(left_counts, right_counts)  # 0 in the slots past the last run
    run_segment = torch.zeros(size, dtype=torch.long, device=device).scatter_(
        0, run, torch.div(keys, span, rounding_mode="floor")
    )
    return counts.index_add_(0, run_segment, common)
