"""Stat scores of the classification room: option checks, input checks, formatting, TP / FP / TN / FN counting and
the precision / recall / F1 reduction — one path for the modules and the functions of
:mod:`gpumetrics.classification.prf`.

The counts are torchmetrics' (its ``*_stat_scores`` functions: the same integers, dtypes and shapes, tested), written
here so that the room depends on no private torchmetrics name:

* **binary** — ``preds`` labels, or float probabilities / logits thresholded at ``threshold`` (a sigmoid first
  unless every value of the batch lies in [0, 1]); positions whose target is ``ignore_index`` count nowhere. Global:
  four 0-d counts; samplewise: four ``[N]``.
* **multiclass** — :func:`gpumetrics.classification.stat_counts.multiclass_stat_counts` (scatter-adds, O(N + C)):
  ``[C]`` per class, four 0-d counts for top-1 ``average="micro"``, ``[N, C]`` samplewise.
* **multilabel** — as binary per label: ``[L]`` global, ``[N, L]`` samplewise (also for one sample).

No step reads a value on the host except :func:`check_inputs` (one read per call, ``validate_args=True`` only).
"""

from __future__ import annotations

from typing import Any, Optional

import torch
from torch import Tensor

from gpumetrics.classification.stat_counts import multiclass_stat_counts
from gpumetrics.core.checks import check_choice, check_holds_data

__all__ = [
    "AVERAGES", "MAX_CLASSES", "MULTIDIM_AVERAGES", "STATS", "binary_counts", "check_binary_args",
    "check_class_count", "check_inputs", "check_multiclass_args", "check_multilabel_args", "check_shapes",
    "check_top_k", "multiclass_counts", "multilabel_counts", "no_samples", "reduce_scores", "unscored_labels_to_zero",
    "zero_counts",
]

#: the ``average`` options of the multiclass / multilabel forms (``None`` is ``"none"``)
AVERAGES = ("micro", "macro", "weighted", "none", None)
MULTIDIM_AVERAGES = ("global", "samplewise")
#: the statistics :func:`reduce_scores` computes
STATS = ("precision", "recall", "f1")
MAX_CLASSES = 2**31 - 1  # per-class int64 statistics: four states of 16 GiB each at this count


# ------------------------------------------------------------------------------------------------------ option checks
def _check_common(multidim_average: Any, ignore_index: Any, zero_division: Any) -> None:
    check_choice(multidim_average, "multidim_average", MULTIDIM_AVERAGES)
    if ignore_index is not None and not isinstance(ignore_index, int):
        raise ValueError(f"Expected argument `ignore_index` to either be `None` or an integer, but got {ignore_index}")
    if zero_division not in (0, 1):  # 0.0, 1.0 and True compare equal, as in sklearn's check
        raise ValueError(f"Expected argument `zero_division` to be 0 or 1, but got {zero_division}.")


def _check_threshold(threshold: Any) -> None:
    if not (isinstance(threshold, float) and 0 <= threshold <= 1):
        raise ValueError(f"Expected argument `threshold` to be a float in the [0,1] range, but got {threshold}.")


def check_binary_args(threshold: Any, multidim_average: Any, ignore_index: Any, zero_division: Any) -> None:
    """``ValueError`` naming the option unless ``threshold`` is a float in [0, 1], ``multidim_average`` global /
    samplewise, ``ignore_index`` None or an int and ``zero_division`` 0 or 1.

    Example:
        >>> check_binary_args(1, "global", None, 0)
        Traceback (most recent call last):
        ...
        ValueError: Expected argument `threshold` to be a float in the [0,1] range, but got 1.
    """
    _check_threshold(threshold)
    _check_common(multidim_average, ignore_index, zero_division)


def check_multiclass_args(
    num_classes: Any, top_k: Any, average: Any, multidim_average: Any, ignore_index: Any, zero_division: Any,
) -> None:
    """:func:`check_top_k`, ``average`` one of :data:`AVERAGES`, and the options of :func:`check_binary_args` but
    ``threshold`` (``num_classes`` is checked apart, by :func:`check_class_count`, with or without validation)."""
    check_top_k(top_k, num_classes)
    check_choice(average, "average", AVERAGES)
    _check_common(multidim_average, ignore_index, zero_division)


def check_multilabel_args(
    threshold: Any, average: Any, multidim_average: Any, ignore_index: Any, zero_division: Any,
) -> None:
    """The options of :func:`check_binary_args` and ``average`` one of :data:`AVERAGES`."""
    _check_threshold(threshold)
    check_choice(average, "average", AVERAGES)
    _check_common(multidim_average, ignore_index, zero_division)


def check_class_count(name: str, value: Any, validate_args: bool) -> None:
    """``ValueError`` naming ``name`` (``num_classes`` / ``num_labels``) unless it is an integer in
    ``[2, MAX_CLASSES]``; without ``validate_args`` an integer in ``[0, MAX_CLASSES]`` (anything else cannot size the
    states).

    Example:
        >>> check_class_count("num_classes", 10**10, validate_args=False)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: Expected argument `num_classes` to be an integer larger than 1 and at most 2**31 - 1 ...
    """
    integer = isinstance(value, int) and not isinstance(value, bool)
    if not integer or not 0 <= value <= MAX_CLASSES or (validate_args and value < 2):
        raise ValueError(f"Expected argument `{name}` to be an integer larger than 1 and at most 2**31 - 1 "
                         f"(per-class int64 statistics), but got {value!r}")


def check_top_k(top_k: Any, num_classes: Any) -> None:
    """``ValueError`` naming ``top_k`` unless it is an integer in ``[1, num_classes]``.

    Example:
        >>> check_top_k(0, 3)
        Traceback (most recent call last):
        ...
        ValueError: `top_k` must be an integer in [1, num_classes=3], got 0
    """
    high = num_classes if isinstance(num_classes, int) else top_k
    if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= high:
        raise ValueError(f"`top_k` must be an integer in [1, num_classes={num_classes}], got {top_k!r}")


# ------------------------------------------------------------------------------------------------------- input checks
def check_shapes(task: str, preds: tuple, target: tuple, classes: Optional[int]) -> None:
    """``ValueError`` naming both shapes unless they fit the task (sizes only: no host sync).

    binary: equal shapes ``[N, ...]``; multiclass: labels of equal shapes, or scores ``[N, C, ...]`` for targets
    ``[N, ...]`` with ``C = num_classes``; multilabel: equal shapes ``[N, L, ...]`` with ``L = num_labels``.

    Example:
        >>> check_shapes("multilabel", (4,), (4,), 3)
        Traceback (most recent call last):
        ...
        ValueError: multilabel `preds` and `target` must be both [N, num_labels=3, ...]; got preds (4,) and target (4,)
    """
    if task == "binary":
        ok, expected = preds == target and len(target) >= 1, "of one shape [N, ...]"
    elif task == "multiclass":
        scores = len(preds) == len(target) + 1 and len(target) >= 1 and preds[0] == target[0] and preds[1] == classes \
            and preds[2:] == target[1:]
        ok = (preds == target and len(target) >= 1) or scores
        expected = f"labels of one shape [N, ...], or scores [N, num_classes={classes}, ...] for target [N, ...]"
    else:
        ok = preds == target and len(target) >= 2 and target[1] == classes
        expected = f"both [N, num_labels={classes}, ...]"
    if not ok:
        raise ValueError(f"{task} `preds` and `target` must be {expected}; got preds {preds} and target {target}")


def check_inputs(
    task: str, preds: Any, target: Any, classes: Optional[int] = None, ignore_index: Optional[int] = None,
    top_k: int = 1, multidim_average: str = "global", same_device: bool = True,
) -> None:
    """Reject what cannot be scored, naming the argument (one host sync per call).

    ``preds``/``target`` must be tensors (``TypeError``), ``target`` integer and multiclass scores ``[N, C, ...]``
    floating point (``TypeError``), both holding values (not on the ``meta`` device) and, unless ``same_device`` is
    False (a module moves both to its own), on one device (``ValueError``); shapes as :func:`check_shapes`;
    ``top_k > 1`` needs scores; ``samplewise`` needs the extra dimensions ``...`` (at least one); floating
    ``preds`` must be finite; labels must lie in their range — binary ``{0, 1}``, multiclass
    ``0 ≤ label < num_classes``, multilabel ``{0, 1}`` — where ``target`` is not ``ignore_index`` (those positions
    are not scored, so their values do not matter). ``ValueError`` names the
    argument and the allowed range.
    """
    for name, value in (("preds", preds), ("target", target)):
        if not isinstance(value, Tensor):
            raise TypeError(f"`{name}` must be a torch.Tensor, got {type(value).__name__}")
        check_holds_data(value, name)
    if same_device and preds.device != target.device:
        raise ValueError(f"`preds` and `target` must be on one device, got {preds.device} and {target.device}")
    if target.is_floating_point() or target.is_complex():
        raise TypeError(f"`target` must hold integer labels, got dtype {target.dtype}")
    check_shapes(task, tuple(preds.shape), tuple(target.shape), classes)
    if preds.shape != target.shape and not preds.is_floating_point():
        raise TypeError(
            f"multiclass `preds` of scores [N, num_classes, ...] must be floating point, got dtype {preds.dtype}"
        )
    if preds.is_complex():
        raise TypeError(f"`preds` must hold labels or real scores, got dtype {preds.dtype}")
    if top_k > 1 and preds.shape == target.shape:
        raise ValueError(f"`top_k={top_k}` needs scores [N, num_classes, ...] in `preds`, got labels of shape "
                         f"{tuple(preds.shape)}")
    least = 3 if task == "multilabel" else 2  # N, (L,) and one extra dimension
    if multidim_average == "samplewise" and target.ndim < least:
        raise ValueError(f"multidim_average='samplewise' scores each sample over its extra dimensions: {task} "
                         f"`target` must be at least {least}-D, got shape {tuple(target.shape)}")
    if preds.numel() == 0 or target.numel() == 0:
        return
    if ignore_index is not None and not -(2**63) <= ignore_index < 2**63:  # `target != ignore_index` would overflow
        raise ValueError(f"`ignore_index` must be an integer in int64's range, got {ignore_index}")
    high = classes if task == "multiclass" else 2
    allowed = f"0 ≤ label < {classes}" if task == "multiclass" else "{0, 1}"
    scored = target != ignore_index if ignore_index is not None else torch.ones_like(target, dtype=torch.bool)
    flags = [((target < 0) | (target >= high)) & scored]
    if preds.is_floating_point():
        flags.append(~torch.isfinite(preds))
    elif preds.shape == target.shape:  # labels (multiclass scores have an extra class dimension)
        flags.append(((preds < 0) | (preds >= high)) & scored)
    bad_target, bad_preds = (flag.any() for flag in flags)
    bad_target, bad_preds = torch.stack([bad_target, bad_preds]).tolist()
    if bad_target:
        found = target[((target < 0) | (target >= high)) & scored].unique()[:5].tolist()
        ignore = f" (or ignore_index={ignore_index})" if ignore_index is not None else ""
        raise ValueError(f"`target` labels must satisfy {allowed}{ignore}; found {found}")
    if bad_preds:
        if preds.is_floating_point():
            raise ValueError("`preds` holds NaN or infinite values; probabilities/logits must be finite")
        found = preds[((preds < 0) | (preds >= high)) & scored].unique()[:5].tolist()
        raise ValueError(f"`preds` labels must satisfy {allowed}; found {found}")


def unscored_labels_to_zero(preds: Any, target: Any, ignore_index: Optional[int]) -> Any:
    """Label ``preds`` with 0 where ``target`` is ``ignore_index`` (float scores and other shapes are returned as
    given): those positions are not scored, so their values must never matter — not even as an index of a
    scatter-add when validation is off."""
    if ignore_index is None or not isinstance(preds, Tensor) or not isinstance(target, Tensor):
        return preds
    if preds.is_floating_point() or preds.is_complex() or preds.shape != target.shape:
        return preds
    return preds.masked_fill(target == ignore_index, 0)


def no_samples(preds: Tensor, target: Tensor) -> bool:
    """Both batches hold zero samples (nothing to count; their statistics are :func:`zero_counts`)."""
    return preds.ndim > 0 and target.ndim > 0 and preds.shape[0] == 0 and target.shape[0] == 0


def zero_counts(n: int, multidim_average: str, device: torch.device) -> Tensor:
    """The statistics of zero samples: ``LongTensor[n]`` (global) or ``LongTensor[0, n]`` (samplewise)."""
    return torch.zeros((n,) if multidim_average == "global" else (0, n), dtype=torch.long, device=device)


# ---------------------------------------------------------------------------------------------------------- counting
def _positive(preds: Tensor, target: Tensor, threshold: float) -> Tensor:
    """``BoolTensor`` of the positive predictions: scores above ``threshold`` — after a sigmoid unless every score of
    the batch lies in [0, 1] (then they are probabilities; chosen on the device, no host read) — or labels. A label
    outside {0, 1} (possible with ``validate_args=False`` only) is counted wrong, as torchmetrics counts it: positive
    against a target 0, negative against a target 1."""
    if not preds.is_floating_point():
        return torch.where(target == 1, preds == 1, preds != 0)
    probabilities = ((preds >= 0) & (preds <= 1)).all()
    return torch.where(probabilities, preds > threshold, preds.sigmoid() > threshold)


def _label_counts(positive: Tensor, target: Tensor, ignore_index: Optional[int], dims: list[int]):
    """TP / FP / TN / FN of boolean predictions against {0, 1} targets, summed over ``dims``; ignored positions
    (target ``ignore_index``) count nowhere."""
    actual = target == 1
    negative = target == 0
    if ignore_index is not None:  # ignore_index may be 0 or 1: those positions are neither
        scored = target != ignore_index
        actual, negative = actual & scored, negative & scored
    tp = (positive & actual).sum(dims)
    fn = (actual & ~positive).sum(dims)
    fp = (positive & negative).sum(dims)
    tn = (negative & ~positive).sum(dims)
    return tp, fp, tn, fn


def binary_counts(
    preds: Tensor, target: Tensor, threshold: float = 0.5, multidim_average: str = "global",
    ignore_index: Optional[int] = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``(tp, fp, tn, fn)`` of a binary batch: four ``LongTensor[]`` (global) or ``[N]`` (samplewise).

    Args:
        preds: ``Tensor[N, ...]`` labels in {0, 1} or float probabilities / logits.
        target: ``LongTensor[N, ...]`` in {0, 1} (or ``ignore_index``).

    Example:
        >>> binary_counts(torch.tensor([0.9, 0.2, 0.7]), torch.tensor([1, 1, 0]))
        (tensor(1), tensor(1), tensor(0), tensor(1))
    """
    positive = _positive(preds, target, threshold).reshape(preds.shape[0], -1)
    target = target.reshape(target.shape[0], -1)
    return _label_counts(positive, target, ignore_index, [0, 1] if multidim_average == "global" else [1])


def multilabel_counts(
    preds: Tensor, target: Tensor, num_labels: int, threshold: float = 0.5, multidim_average: str = "global",
    ignore_index: Optional[int] = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``(tp, fp, tn, fn)`` per label: four ``LongTensor[L]`` (global) or ``[N, L]`` (samplewise, one sample too).

    Args:
        preds: ``Tensor[N, L, ...]`` labels in {0, 1} or float probabilities / logits.
        target: ``LongTensor[N, L, ...]`` in {0, 1} (or ``ignore_index``).

    Example:
        >>> multilabel_counts(torch.tensor([[1, 0], [1, 1]]), torch.tensor([[1, 1], [0, 1]]), 2)
        (tensor([1, 1]), tensor([1, 0]), tensor([0, 0]), tensor([0, 1]))
    """
    positive = _positive(preds, target, threshold).reshape(preds.shape[0], num_labels, -1)
    target = target.reshape(target.shape[0], num_labels, -1)
    return _label_counts(positive, target, ignore_index, [0, 2] if multidim_average == "global" else [2])


def multiclass_counts(
    preds: Tensor, target: Tensor, num_classes: int, top_k: int = 1, average: Optional[str] = "macro",
    multidim_average: str = "global", ignore_index: Optional[int] = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``(tp, fp, tn, fn)`` of a multiclass batch (see :func:`multiclass_stat_counts` for the shapes).

    Args:
        preds: ``LongTensor[N, ...]`` labels or ``Tensor[N, C, ...]`` scores (argmax; top-k when ``top_k > 1``).
        target: ``LongTensor[N, ...]``.

    Example:
        >>> multiclass_counts(torch.tensor([0, 1, 1]), torch.tensor([0, 1, 2]), 3)
        (tensor([1, 1, 0]), tensor([0, 1, 0]), tensor([2, 1, 2]), tensor([0, 0, 1]))
    """
    if preds.ndim == target.ndim + 1:
        if top_k == 1:
            preds = preds.argmax(dim=1).reshape(preds.shape[0], -1)
        else:
            preds = preds.reshape(*preds.shape[:2], -1)
    else:
        preds = preds.reshape(preds.shape[0], -1)
    target = target.reshape(target.shape[0], -1)
    return multiclass_stat_counts(preds, target, num_classes, top_k, average, multidim_average, ignore_index)


# --------------------------------------------------------------------------------------------------------- reduction
def _safe_divide(num: Tensor, denom: Tensor, zero_division: float) -> Tensor:
    num, denom = num.float(), denom.float()
    return torch.where(denom != 0, num / denom, torch.full((), float(zero_division), device=num.device))


def reduce_scores(
    stat: str, tp: Tensor, fp: Tensor, fn: Tensor, average: Optional[str], multidim_average: str,
    multilabel: bool, top_k: int, zero_division: float,
) -> Tensor:
    """``float32`` precision / recall / F1 of the counts, averaged as sklearn averages.

    ``average="binary"`` (binary task) and ``"micro"`` score the summed counts; ``"none"`` / None every class;
    ``"weighted"`` weighs by the support TP + FN; ``"macro"`` averages the multiclass classes present (TP + FP + FN >
    0; for ``top_k > 1`` precision / recall: TP + FN > 0 — torchmetrics' rule) and every multilabel label. When every
    weight is zero the average is the plain mean of the per-class scores (sklearn's ``_nanaverage``).

    Args:
        tp, fp, fn: ``LongTensor[C]`` (global) or ``[N, C]`` (samplewise); binary ``[]`` / ``[1]`` or ``[N]``.

    Example:
        >>> reduce_scores("f1", torch.tensor([1, 0]), torch.tensor([1, 0]), torch.tensor([0, 0]), "macro", "global",
        ...               False, 1, 0)
        tensor(0.6667)
    """
    if average == "micro":
        dim = 0 if multidim_average == "global" else 1
        tp, fp, fn = tp.sum(dim), fp.sum(dim), fn.sum(dim)
    if stat == "precision":
        score = _safe_divide(tp, tp + fp, zero_division)
    elif stat == "recall":
        score = _safe_divide(tp, tp + fn, zero_division)
    else:
        score = _safe_divide(2 * tp, 2 * tp + fp + fn, zero_division)
    if average in ("binary", "micro", "none", None):
        return score
    if average == "weighted":
        weights = (tp + fn).to(score.dtype)
    else:
        weights = torch.ones_like(score)
        if not multilabel:
            # torchmetrics' F-beta reduce ignores top_k here; precision/recall use it
            absent = tp + fp + fn == 0 if top_k == 1 or stat == "f1" else tp + fn == 0
            weights = weights.masked_fill(absent, 0.0)
    total = weights.sum(-1, keepdim=True)
    weights = torch.where(total == 0, torch.ones_like(weights), weights)
    return (weights * score).sum(-1) / weights.sum(-1)
