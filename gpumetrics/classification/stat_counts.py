"""Per-class TP / FP / TN / FN of multiclass labels in O(N + C) memory: three label counts instead of a C × C matrix.

torchmetrics' ``_multiclass_stat_scores_update`` counts top-1 labels (``multidim_average="global"``, any average but
micro) through a confusion matrix, ``bincount(target * C + preds, minlength=C**2)``: C² int64 bins per update,
whatever the batch. A vocabulary-sized label set is an ordinary use (next-token F1 over 50,257 GPT-2 tokens: 20 GB
per update; 30,000 classes took 2.7 s for two samples on the 2-core VM, 100,000 could not be allocated). The
statistics need only the diagonal and the two marginals of that matrix:

    tp[c] = #{i: preds_i = target_i = c}    fp[c] = #{i: preds_i = c} - tp[c]
    fn[c] = #{i: target_i = c} - tp[c]      tn[c] = N - tp[c] - fp[c] - fn[c]

the same integers; top-k predictions reduce to one label per sample first (see :func:`multiclass_stat_counts`).
Ignored samples (``target == ignore_index``) are counted in an extra bin ``C`` that is dropped,
so no boolean-mask indexing is needed, and the counts are scatter-adds: no host sync on CUDA (torchmetrics' path
has one for its ``bincount`` and one for the mask). ``samplewise`` counts each sample's row the same way, in
``N × (C + 1)`` bins (torchmetrics: one-hot ``[N, X, C]`` tensors); top-1 ``micro`` needs only the number of matches
and of scored positions: four scalars.
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

__all__ = ["multiclass_stat_counts", "class_counts"]


def class_counts(labels: Tensor, num_bins: int) -> Tensor:
    """``LongTensor[num_bins]``: how often each value of ``labels`` (``LongTensor[N]`` in ``[0, num_bins)``) occurs.

    A ``scatter_add_`` of ones into ``num_bins`` zeros: no host sync on CUDA (``torch.bincount`` reads the largest
    label there to size its output) and a deterministic implementation under ``torch.use_deterministic_algorithms``
    (torchmetrics' fallback for that mode compares every label with every class: an ``[N, num_bins]`` tensor).

    Example:
        >>> class_counts(torch.tensor([2, 0, 2]), 4)
        tensor([1, 0, 2, 0])
    """
    counts = torch.zeros(num_bins, dtype=torch.long, device=labels.device)
    return counts.scatter_add_(0, labels, torch.ones_like(labels))


def multiclass_stat_counts(
    preds: Tensor, target: Tensor, num_classes: int, top_k: int, average: Optional[str], multidim_average: str,
    ignore_index: Optional[int],
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``(tp, fp, tn, fn)`` of formatted multiclass inputs, equal to torchmetrics' ``_multiclass_stat_scores_update``
    (same arguments, same integers, dtypes and shapes; tested against it).

    ``top_k > 1`` scores one label per sample, as torchmetrics does: the target where it is among the ``top_k``
    highest scores (``torch.topk``), else the top-1 class — so those labels are counted as top-1 labels are, in
    O(N · top_k + C) beyond the scores (torchmetrics: one-hot ``[N, C]`` int64 tensors of the predictions and the
    targets, several times the scores' own size).

    Args:
        preds: ``LongTensor[N, X]`` labels (top-1) or ``Tensor[N, C, X]`` scores (top-k), as torchmetrics'
            ``_multiclass_stat_scores_format`` leaves them (``X``: flattened extra dimensions) and
            :func:`gpumetrics.classification.stat_scores.multiclass_counts` formats them.
        target: ``LongTensor[N, X]`` labels.

    Returns:
        Four ``LongTensor[C]`` (global) or ``[N, C]`` (samplewise); 0-d for top-1 ``average="micro"`` (global).
    """
    if top_k != 1:
        ranked = torch.topk(preds, k=top_k, dim=1).indices  # [N, k, X]
        preds = torch.where((ranked == target.unsqueeze(1)).any(dim=1), target, ranked[:, 0])
    preds, target = preds.long(), target.long()
    dropped = num_classes  # the extra bin of ignored samples
    if ignore_index is not None:
        ignored = target == ignore_index
        preds, target = preds.masked_fill(ignored, dropped), target.masked_fill(ignored, dropped)
    # labels outside [0, C) (unchecked with validate_args=False) go to the dropped bin too: an index out of range would
    # be a device-side assert on CUDA. Such a prediction counts as wrong; such a target is not scored
    preds = preds.masked_fill((preds < 0) | (preds > dropped), dropped)
    target = target.masked_fill((target < 0) | (target > dropped), dropped)
    if multidim_average == "global" and top_k == 1 and average == "micro":
        scored = (target != dropped).sum()
        tp = ((preds == target) & (target != dropped)).sum()
        wrong = scored - tp
        return tp, wrong, num_classes * scored - (tp + 2 * wrong), wrong
    both = torch.where(preds == target, target, dropped)
    if multidim_average == "global":
        tp, predicted, actual = (class_counts(labels.reshape(-1), num_classes + 1)[:num_classes]
                                 for labels in (both, preds, target))
    else:  # one row of C + 1 bins per sample
        offset = torch.arange(target.shape[0], device=target.device).unsqueeze(1) * (num_classes + 1)
        tp, predicted, actual = (
            class_counts((labels + offset).reshape(-1), target.shape[0] * (num_classes + 1))
            .reshape(target.shape[0], num_classes + 1)[:, :num_classes]
            for labels in (both, preds, target)
        )
    fp, fn = predicted - tp, actual - tp
    scored = actual.sum(-1, keepdim=multidim_average != "global")  # the samples (of each row) that are not ignored
    return tp, fp, scored - (tp + fp + fn), fn
