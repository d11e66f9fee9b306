"""Per-class TP / FP / TN / FN of multiclass labels in O(N + C) memory: three label counts instead of a C × C matrix.

torchmetrics' ``_multiclass_stat_scores_update`` counts top-1 labels (``multidim_average="global"``, any average but
micro) through a confusion matrix, ``bincount(target * C + preds, minlength=C**2)``: C² int64 bins per update,
whatever the batch. A vocabulary-sized label set is an ordinary use (next-token F1 over 50,257 GPT-2 tokens: 20 GB
per update; 30,000 classes took 2.7 s for two samples on the 2-core VM, 100,000 could not be allocated). The
statistics need only the diagonal and the two marginals of that matrix:

    tp[c] = #{i: preds_i = target_i = c}    fp[c] = #{i: preds_i = c} - tp[c]
    fn[c] = #{i: target_i = c} - tp[c]      tn[c] = N - tp[c] - fp[c] - fn[c]

the same integers. Ignored samples (``target == ignore_index``) are counted in an extra bin ``C`` that is dropped,
so no boolean-mask indexing (a host sync on CUDA) is needed. The other branches (top-k > 1, ``samplewise``, micro)
are torchmetrics' own: they are O(N · C) at most.
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor
from torchmetrics.functional.classification.stat_scores import _multiclass_stat_scores_update

__all__ = ["multiclass_stat_counts", "class_counts", "sorted_counts"]


def class_counts(labels: Tensor, num_bins: int) -> Tensor:
    """``LongTensor[num_bins]``: how often each value of ``labels`` (``LongTensor[N]`` in ``[0, num_bins)``) occurs.

    ``torch.bincount`` on the CPU and on CUDA; where it is not allowed (CUDA with deterministic algorithms) or not
    implemented (MPS and other devices), a sort and ``searchsorted`` — O(N log N + num_bins), deterministic
    (torchmetrics' fallback compares every label with every class: an ``[N, num_bins]`` tensor).

    Example:
        >>> class_counts(torch.tensor([2, 0, 2]), 4)
        tensor([1, 0, 2, 0])
    """
    device = labels.device
    if device.type == "cpu" or (device.type == "cuda" and not torch.are_deterministic_algorithms_enabled()):
        return torch.bincount(labels, minlength=num_bins)
    return sorted_counts(labels, num_bins)


def sorted_counts(labels: Tensor, num_bins: int) -> Tensor:
    """:func:`class_counts` by a sort and ``searchsorted``, on any device (deterministic)."""
    ordered = labels.sort().values
    return torch.searchsorted(ordered, torch.arange(num_bins + 1, device=labels.device)).diff()


def multiclass_stat_counts(
    preds: Tensor, target: Tensor, num_classes: int, top_k: int, average: Optional[str], multidim_average: str,
    ignore_index: Optional[int],
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``(tp, fp, tn, fn)`` of formatted multiclass inputs, equal to torchmetrics' ``_multiclass_stat_scores_update``
    (same arguments, same integers and shapes).

    Args:
        preds: ``LongTensor[N, ...]`` labels (top-1) or ``Tensor[N, C, ...]`` scores (top-k), as torchmetrics'
            ``_multiclass_stat_scores_format`` leaves them.
        target: ``LongTensor[N, ...]`` labels.

    Returns:
        Four ``LongTensor[C]`` (global) or ``[N, C]`` (samplewise); 0-d for ``average="micro"`` (global).
    """
    if multidim_average == "samplewise" or top_k != 1 or average == "micro":
        return _multiclass_stat_scores_update(preds, target, num_classes, top_k, average, multidim_average,
                                              ignore_index)
    preds, target = preds.reshape(-1).long(), target.reshape(-1).long()
    dropped = num_classes  # the extra bin of ignored samples
    if ignore_index is not None:
        ignored = target == ignore_index
        preds, target = preds.masked_fill(ignored, dropped), target.masked_fill(ignored, dropped)
    both = torch.where(preds == target, target, dropped)
    tp, predicted, actual = (class_counts(labels, num_classes + 1)[:num_classes] for labels in (both, preds, target))
    fp, fn = predicted - tp, actual - tp
    scored = actual.sum()  # the samples that are not ignored
    return tp, fp, scored - (tp + fp + fn), fn
