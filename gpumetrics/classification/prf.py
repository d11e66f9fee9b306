"""Precision, recall and F1 (binary / multiclass / multilabel; micro, macro, weighted) — torchmetrics' statistics,
sklearn's averaging.

The modules are thin subclasses of torchmetrics' classification metrics that also derive from
:class:`gpumetrics.core.Metric`, so they gain gpumetrics' all-reduce DDP reducer and a ``signature()``; statistics,
validation and formulas are torchmetrics' own, except that multiclass top-1 counts take O(N + C) memory instead of a
C × C confusion matrix per update (:mod:`gpumetrics.classification.stat_counts`; the same integers). The functions
are torchmetrics' functional forms, re-exported.

Parity (tests/classification/test_prf.py) is with ``sklearn.metrics.precision_score`` / ``recall_score`` /
``f1_score`` including ``zero_division`` (0 or 1), with these known differences:

* results are ``float32`` tensors (sklearn: float64), so they agree to ~1e-7, not bit for bit;
* multiclass ``macro`` averages over the classes that occur in ``target`` or ``preds`` — sklearn's default
  ``labels=None``; with an explicit ``labels=range(num_classes)`` sklearn also averages the absent classes (each
  scored ``zero_division``) and the two differ. ``average="none"`` returns every class (sklearn with
  ``labels=range(C)``);
* no ``average="samples"`` for multilabel (``multidim_average="samplewise"`` is a different, per-sample-row view);
* ``ignore_index`` drops those samples (sklearn: filter them out first);
* ``top_k > 1`` scores the target when it is among the ``top_k`` highest scores, else the top-1 class: micro is
  ``sklearn.metrics.top_k_accuracy_score``, per-class scores are sklearn's on those labels, macro precision / recall
  average over the classes in ``target``; tied scores follow ``torch.topk`` (unspecified order; sklearn ranks the
  higher class index first).

One reduction is ours rather than torchmetrics': when every averaging weight is zero (``weighted`` with no positive
label in ``target`` anywhere — an all-negative multilabel batch — or ``macro``/``weighted`` on zero samples) the
average is the plain mean of the per-class scores, as sklearn's ``_nanaverage`` does (so ``zero_division`` shows
through), where torchmetrics returns 0. sklearn raises on zero samples; we return that same mean.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import torch
import torchmetrics
from torch import Tensor
from torchmetrics import classification as _tm
from torchmetrics.functional import classification as _tmf
from torchmetrics.functional.classification.stat_scores import (
    _binary_stat_scores_arg_validation,
    _binary_stat_scores_tensor_validation,
    _multiclass_stat_scores_arg_validation,
    _multiclass_stat_scores_format,
    _multiclass_stat_scores_tensor_validation,
    _multilabel_stat_scores_arg_validation,
    _multilabel_stat_scores_format,
    _multilabel_stat_scores_tensor_validation,
    _multilabel_stat_scores_update,
)
from torchmetrics.utilities.compute import _safe_divide

from gpumetrics.classification.stat_counts import multiclass_stat_counts
from gpumetrics.core import Metric, keep_sample_dim
from gpumetrics.core.checks import check_holds_data
from gpumetrics.core.transfer import upload

__all__ = [
    "BinaryPrecision", "BinaryRecall", "BinaryF1Score",
    "MulticlassPrecision", "MulticlassRecall", "MulticlassF1Score",
    "MultilabelPrecision", "MultilabelRecall", "MultilabelF1Score",
    "binary_precision", "binary_recall", "binary_f1_score",
    "multiclass_precision", "multiclass_recall", "multiclass_f1_score",
    "multilabel_precision", "multilabel_recall", "multilabel_f1_score",
]


def _signature_fields(metric: Any, task: str) -> dict[str, Any]:
    """Every option that changes the number, in a fixed order; ``None`` entries are left out of the signature."""
    return {
        "task": task,
        "average": getattr(metric, "average", "binary"),
        "num_classes": getattr(metric, "num_classes", None),
        "num_labels": getattr(metric, "num_labels", None),
        "threshold": getattr(metric, "threshold", None),
        "top_k": getattr(metric, "top_k", None),
        "multidim_average": metric.multidim_average,
        "ignore_index": metric.ignore_index,
        "zero_division": metric.zero_division,
        "impl": f"torchmetrics-{torchmetrics.__version__}",
    }


def _reduce(
    stat: str, tp: Tensor, fp: Tensor, fn: Tensor, average: str | None, multidim_average: str,
    multilabel: bool, top_k: int, zero_division: float,
) -> Tensor:
    """Per-class scores averaged as sklearn: all-zero weights fall back to the unweighted mean."""
    if average == "micro":
        dim = 0 if multidim_average == "global" else 1
        tp, fp, fn = tp.sum(dim), fp.sum(dim), fn.sum(dim)
    if stat == "precision":
        score = _safe_divide(tp, tp + fp, zero_division)
    elif stat == "recall":
        score = _safe_divide(tp, tp + fn, zero_division)
    else:
        score = _safe_divide(2 * tp, 2 * tp + fp + fn, zero_division)
    if average in ("micro", "none", None):
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


def _check_shapes(task: str, preds: tuple, target: tuple, classes: int | None) -> None:
    """``ValueError`` naming both shapes unless they fit the task (sizes only: no host sync).

    binary: equal shapes ``[N, ...]``; multiclass: labels of equal shapes, or scores ``[N, C, ...]`` for targets
    ``[N, ...]`` with ``C = num_classes``; multilabel: equal shapes ``[N, L, ...]`` with ``L = num_labels``.

    Example:
        >>> _check_shapes("multilabel", (4,), (4,), 3)
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


MAX_CLASSES = 2**31 - 1  # per-class int64 statistics: four states of 16 GiB each at this count


def _check_class_count(name: str, value: Any, validate_args: bool) -> None:
    """``ValueError`` naming ``name`` (``num_classes`` / ``num_labels``) unless it is an integer in
    ``[2, MAX_CLASSES]`` (without ``validate_args`` only a negative count or one past the bound is refused: either
    would otherwise end in torch's allocation error or an unnamed overflow ``TypeError``).

    Example:
        >>> _check_class_count("num_classes", 10**10, validate_args=False)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: Expected argument `num_classes` to be an integer larger than 1 and at most 2**31 - 1 ...
    """
    integer = isinstance(value, int) and not isinstance(value, bool)
    if (integer and not 0 <= value <= MAX_CLASSES) or (validate_args and not (integer and value >= 2)):
        raise ValueError(f"Expected argument `{name}` to be an integer larger than 1 and at most 2**31 - 1 "
                         f"(per-class int64 statistics), but got {value!r}")


def _check_top_k(top_k: Any, num_classes: Any) -> None:
    """``ValueError`` naming ``top_k`` unless it is an integer in ``[1, num_classes]``.

    torchmetrics' own check (``not isinstance(top_k, int) and top_k < 1``) lets 0, negative and float values through:
    they failed deep inside, or — ``top_k=0`` on as many samples as classes — returned a number.

    Example:
        >>> _check_top_k(0, 3)
        Traceback (most recent call last):
        ...
        ValueError: `top_k` must be an integer in [1, num_classes=3], got 0
    """
    high = num_classes if isinstance(num_classes, int) else top_k
    if not isinstance(top_k, int) or not 1 <= top_k <= high:
        raise ValueError(f"`top_k` must be an integer in [1, num_classes={num_classes}], got {top_k!r}")


def _check_inputs(
    task: str, preds: Any, target: Any, classes: int | None = None, ignore_index: int | None = None, top_k: int = 1,
    same_device: bool = True,
) -> None:
    """Reject what torchmetrics would score silently or fail on deep inside (one host sync per call).

    ``preds``/``target`` must be tensors (``TypeError``), ``target`` integer and multiclass scores ``[N, C, ...]``
    floating point (``TypeError``), both holding values (not on the ``meta`` device) and, unless ``same_device`` is
    False (a module moves both to its own), on one device (``ValueError``); ``top_k > 1`` needs scores; floating
    ``preds`` must be finite; labels must lie in their range — binary ``{0, 1}``, multiclass
    ``0 ≤ label < num_classes``, multilabel ``{0, 1}`` — where ``target`` is not ``ignore_index`` (those positions
    are not scored, so their values do not matter). ``ValueError`` names the argument and the allowed range.
    Shapes, dtypes and options are then checked by torchmetrics' own validation.
    """
    for name, value in (("preds", preds), ("target", target)):
        if not isinstance(value, Tensor):
            raise TypeError(f"`{name}` must be a torch.Tensor, got {type(value).__name__}")
        check_holds_data(value, name)
    if same_device and preds.device != target.device:
        raise ValueError(f"`preds` and `target` must be on one device, got {preds.device} and {target.device}")
    if target.is_floating_point() or target.is_complex():
        raise TypeError(f"`target` must hold integer labels, got dtype {target.dtype}")
    _check_shapes(task, tuple(preds.shape), tuple(target.shape), classes)
    if preds.shape != target.shape and not preds.is_floating_point():
        raise TypeError(
            f"multiclass `preds` of scores [N, num_classes, ...] must be floating point, got dtype {preds.dtype}"
        )
    if top_k > 1 and preds.shape == target.shape:
        raise ValueError(f"`top_k={top_k}` needs scores [N, num_classes, ...] in `preds`, got labels of shape "
                         f"{tuple(preds.shape)}")
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


def _unscored_labels_to_zero(preds: Any, target: Any, ignore_index: int | None) -> Any:
    """Label ``preds`` with 0 where ``target`` is ``ignore_index`` (float scores and other shapes are returned as
    given).

    Those positions are not scored, so their values must not matter (docs/metrics/classification.md), but
    torchmetrics still reads them: its validation counts their distinct values (``RuntimeError`` for binary /
    multilabel labels outside {0, 1}, or more than ``num_classes + 1`` distinct multiclass labels) and its samplewise
    one-hot encoding fails on a label outside ``[0, num_classes)`` when ``ignore_index`` is a class.
    """
    if ignore_index is None or not isinstance(preds, Tensor) or not isinstance(target, Tensor):
        return preds
    if preds.is_floating_point() or preds.is_complex() or preds.shape != target.shape:
        return preds
    return preds.masked_fill(target == ignore_index, 0)


def _no_samples(preds: Tensor, target: Tensor) -> bool:
    """Both batches hold zero samples (torchmetrics' formatting cannot reshape them: handled before it)."""
    return preds.ndim > 0 and target.ndim > 0 and preds.shape[0] == 0 and target.shape[0] == 0


def _zero_counts(n: int, multidim_average: str, device: torch.device) -> Tensor:
    """The statistics of zero samples: ``LongTensor[n]`` (global) or ``LongTensor[0, n]`` (samplewise)."""
    return torch.zeros((n,) if multidim_average == "global" else (0, n), dtype=torch.long, device=device)


def _multiclass(
    stat: str, preds: Tensor, target: Tensor, num_classes: int, average: str | None = "macro", top_k: int = 1,
    multidim_average: str = "global", ignore_index: int | None = None, validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    _check_class_count("num_classes", num_classes, validate_args)
    if validate_args:
        _check_top_k(top_k, num_classes)
        _multiclass_stat_scores_arg_validation(num_classes, top_k, average, multidim_average, ignore_index,
                                               zero_division)
        _check_inputs("multiclass", preds, target, num_classes, ignore_index, top_k)
    preds = _unscored_labels_to_zero(preds, target, ignore_index)
    if validate_args:
        _multiclass_stat_scores_tensor_validation(preds, target, num_classes, multidim_average, ignore_index)
    if _no_samples(preds, target):
        tp = fp = fn = _zero_counts(num_classes, multidim_average, preds.device)
    else:
        preds, target = _multiclass_stat_scores_format(preds, target, top_k)
        tp, fp, _, fn = multiclass_stat_counts(
            preds, target, num_classes, top_k, average, multidim_average, ignore_index
        )
    return _reduce(stat, tp, fp, fn, average, multidim_average, False, top_k, zero_division)


def _multilabel(
    stat: str, preds: Tensor, target: Tensor, num_labels: int, threshold: float = 0.5,
    average: str | None = "macro", multidim_average: str = "global", ignore_index: int | None = None,
    validate_args: bool = True, zero_division: float = 0,
) -> Tensor:
    _check_class_count("num_labels", num_labels, validate_args)
    if validate_args:
        _multilabel_stat_scores_arg_validation(num_labels, threshold, average, multidim_average, ignore_index,
                                               zero_division)
        _check_inputs("multilabel", preds, target, num_labels, ignore_index)
    preds = _unscored_labels_to_zero(preds, target, ignore_index)
    if validate_args:
        _multilabel_stat_scores_tensor_validation(preds, target, num_labels, multidim_average, ignore_index)
    if _no_samples(preds, target):
        tp = fp = fn = _zero_counts(num_labels, multidim_average, preds.device)
    else:
        preds, target = _multilabel_stat_scores_format(preds, target, num_labels, threshold, ignore_index)
        tp, fp, _, fn = _multilabel_stat_scores_update(preds, target, multidim_average)
        if multidim_average == "samplewise":  # torchmetrics squeezes one sample's [1, L] to [L]
            tp, fp, fn = (stat.reshape(-1, num_labels) for stat in (tp, fp, fn))
    return _reduce(stat, tp, fp, fn, average, multidim_average, True, 1, zero_division)


def _binary(stat: str, preds: Tensor, target: Tensor, threshold: float = 0.5, multidim_average: str = "global",
            ignore_index: int | None = None, validate_args: bool = True, zero_division: float = 0) -> Tensor:
    if validate_args:
        # torchmetrics' binary functions leave zero_division out of this check (their modules include it)
        _binary_stat_scores_arg_validation(threshold, multidim_average, ignore_index, zero_division)
        _check_inputs("binary", preds, target, None, ignore_index)
    preds = _unscored_labels_to_zero(preds, target, ignore_index)
    if _no_samples(preds, target):
        if validate_args:
            _binary_stat_scores_tensor_validation(preds, target, multidim_average, ignore_index)
        zero = _zero_counts(1, multidim_average, preds.device)[..., 0]
        return _reduce(stat, zero, zero, zero, "micro" if multidim_average == "global" else "none", multidim_average,
                       False, 1, zero_division).float()
    function = {"precision": _tmf.binary_precision, "recall": _tmf.binary_recall, "f1": _tmf.binary_f1_score}[stat]
    value = function(preds, target, threshold, multidim_average, ignore_index, validate_args, zero_division)
    return value.reshape(-1) if multidim_average == "samplewise" else value  # [N], also for N = 1 (squeezed to [])


def binary_precision(
    preds: Tensor, target: Tensor, threshold: float = 0.5, multidim_average: str = "global",
    ignore_index: int | None = None, validate_args: bool = True, zero_division: float = 0,
) -> Tensor:
    """``torchmetrics.functional.binary_precision`` (same arguments); zero samples give ``zero_division``."""
    return _binary("precision", preds, target, threshold, multidim_average, ignore_index, validate_args, zero_division)


def binary_recall(
    preds: Tensor, target: Tensor, threshold: float = 0.5, multidim_average: str = "global",
    ignore_index: int | None = None, validate_args: bool = True, zero_division: float = 0,
) -> Tensor:
    """``torchmetrics.functional.binary_recall`` (same arguments); zero samples give ``zero_division``."""
    return _binary("recall", preds, target, threshold, multidim_average, ignore_index, validate_args, zero_division)


def binary_f1_score(
    preds: Tensor, target: Tensor, threshold: float = 0.5, multidim_average: str = "global",
    ignore_index: int | None = None, validate_args: bool = True, zero_division: float = 0,
) -> Tensor:
    """``torchmetrics.functional.binary_f1_score`` (same arguments); zero samples give ``zero_division``."""
    return _binary("f1", preds, target, threshold, multidim_average, ignore_index, validate_args, zero_division)


def multiclass_precision(
    preds: Tensor, target: Tensor, num_classes: int, average: str | None = "macro", top_k: int = 1,
    multidim_average: str = "global", ignore_index: int | None = None, validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """``torchmetrics.functional.multiclass_precision`` (same arguments) with sklearn's zero-weight average."""
    return _multiclass(
        "precision", preds, target, num_classes, average, top_k, multidim_average, ignore_index, validate_args,
        zero_division,
    )


def multiclass_recall(
    preds: Tensor, target: Tensor, num_classes: int, average: str | None = "macro", top_k: int = 1,
    multidim_average: str = "global", ignore_index: int | None = None, validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """``torchmetrics.functional.multiclass_recall`` (same arguments) with sklearn's zero-weight average."""
    return _multiclass(
        "recall", preds, target, num_classes, average, top_k, multidim_average, ignore_index, validate_args,
        zero_division,
    )


def multiclass_f1_score(
    preds: Tensor, target: Tensor, num_classes: int, average: str | None = "macro", top_k: int = 1,
    multidim_average: str = "global", ignore_index: int | None = None, validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """``torchmetrics.functional.multiclass_f1_score`` (same arguments) with sklearn's zero-weight average."""
    return _multiclass(
        "f1", preds, target, num_classes, average, top_k, multidim_average, ignore_index, validate_args, zero_division
    )


def multilabel_precision(
    preds: Tensor, target: Tensor, num_labels: int, threshold: float = 0.5, average: str | None = "macro",
    multidim_average: str = "global", ignore_index: int | None = None, validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """``torchmetrics.functional.multilabel_precision`` (same arguments) with sklearn's zero-weight average."""
    return _multilabel(
        "precision", preds, target, num_labels, threshold, average, multidim_average, ignore_index, validate_args,
        zero_division,
    )


def multilabel_recall(
    preds: Tensor, target: Tensor, num_labels: int, threshold: float = 0.5, average: str | None = "macro",
    multidim_average: str = "global", ignore_index: int | None = None, validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """``torchmetrics.functional.multilabel_recall`` (same arguments) with sklearn's zero-weight average."""
    return _multilabel(
        "recall", preds, target, num_labels, threshold, average, multidim_average, ignore_index, validate_args,
        zero_division,
    )


def multilabel_f1_score(
    preds: Tensor, target: Tensor, num_labels: int, threshold: float = 0.5, average: str | None = "macro",
    multidim_average: str = "global", ignore_index: int | None = None, validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """``torchmetrics.functional.multilabel_f1_score`` (same arguments) with sklearn's zero-weight average."""
    return _multilabel(
        "f1", preds, target, num_labels, threshold, average, multidim_average, ignore_index, validate_args,
        zero_division,
    )


def _count_checked_first(name: str) -> Any:
    """Class decorator: ``name`` (``num_classes`` / ``num_labels``) must be an integer ≥ 2, and a multiclass
    ``top_k`` an integer in ``[1, num_classes]``, before torchmetrics' own ``__init__`` runs (with ``validate_args``;
    the signature shown stays torchmetrics'). Its F1 modules size their states before they validate the count (a
    ``RuntimeError`` from ``torch.zeros`` for -1, an unnamed ``TypeError`` for 2.0), every module took
    ``num_classes=None`` with ``average="micro"``, then failed in ``update`` comparing labels with ``None``, and
    ``top_k=None`` met an unnamed ``TypeError``. A negative count is refused without ``validate_args`` too."""

    def decorate(cls: type) -> type:
        init = next(base for base in cls.__mro__ if base.__module__.startswith("torchmetrics.")).__init__
        signature = inspect.signature(init)

        @functools.wraps(init)
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            value = bound.arguments[name]
            _check_class_count(name, value, bound.arguments["validate_args"])
            if bound.arguments["validate_args"] and "top_k" in bound.arguments:
                _check_top_k(bound.arguments["top_k"], value)  # torchmetrics compares it with 1 first: None raised
            super(cls, self).__init__(*args, **kwargs)

        cls.__init__ = __init__
        return cls

    return decorate


class _CheckedUpdate:
    """``update`` checks its inputs with :func:`_check_inputs` (``validate_args=True``), and a batch of zero samples
    adds nothing.

    torchmetrics' input formatting reshapes with ``-1`` and raises ``RuntimeError`` on zero samples; an empty batch
    (an uneven split, a filtered batch) must leave the statistics as they are, as in every other gpumetrics module.
    """

    def update(self, preds: Tensor, target: Tensor) -> None:
        if self.validate_args:
            if isinstance(self, _tm.BinaryStatScores):
                _check_inputs("binary", preds, target, None, self.ignore_index, same_device=False)
            elif isinstance(self, _tm.MulticlassStatScores):
                _check_top_k(self.top_k, self.num_classes)  # here, not in __init__: the factories' signatures stay
                _check_inputs("multiclass", preds, target, self.num_classes, self.ignore_index, self.top_k, False)
            else:
                _check_inputs("multilabel", preds, target, self.num_labels, self.ignore_index, same_device=False)
        if isinstance(preds, Tensor) and isinstance(target, Tensor):  # inputs on either device: states stay on ours
            preds, target = upload(preds, self.device), upload(target, self.device)
        preds = _unscored_labels_to_zero(preds, target, self.ignore_index)
        if _no_samples(preds, target):
            if self.validate_args:
                self._validate_tensors(preds, target)
            return
        if isinstance(self, _tm.MulticlassStatScores):  # torchmetrics' update, with O(N + C) counts
            if self.validate_args:
                self._validate_tensors(preds, target)
            preds, target = _multiclass_stat_scores_format(preds, target, self.top_k)
            self._update_state(*multiclass_stat_counts(preds, target, self.num_classes, self.top_k, self.average,
                                                       self.multidim_average, self.ignore_index))
            return
        super().update(preds, target)

    def _final_state(self) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """``samplewise`` statistics of zero samples are ``[0]`` (binary) or ``[0, C]`` rows, as the functions return
        (torchmetrics' concatenation of an empty state list raises "No samples to concatenate")."""
        if self.multidim_average == "samplewise" and isinstance(self.tp, list) and not self.tp:
            size = getattr(self, "num_classes", None) or getattr(self, "num_labels", None)
            zero = _zero_counts(size or 1, "samplewise", self.device)
            zero = zero if size else zero[:, 0]
            return zero, zero, zero, zero
        return super()._final_state()

    def _update_state(self, tp: Tensor, fp: Tensor, tn: Tensor, fn: Tensor) -> None:
        if self.multidim_average == "samplewise" and isinstance(self, _tm.MultilabelStatScores):
            # torchmetrics squeezes one sample's [1, L] to [L]; concatenated with the next update's rows it would
            # become one flat [N * L] state
            tp, fp, tn, fn = (stat.reshape(-1, self.num_labels) for stat in (tp, fp, tn, fn))
        super()._update_state(tp, fp, tn, fn)

    def _finish_compute(self, value: Any) -> Any:
        """``samplewise`` results keep ``[N]`` for one sample: torchmetrics squeezes every one-element result to 0-d
        (per-class results hold ≥ 2 classes or labels, so only ``[1]`` can lose its dimension)."""
        return keep_sample_dim(value, "none") if self.multidim_average == "samplewise" else value

    def _validate_tensors(self, preds: Tensor, target: Tensor) -> None:
        if isinstance(self, _tm.BinaryStatScores):
            _binary_stat_scores_tensor_validation(preds, target, self.multidim_average, self.ignore_index)
        elif isinstance(self, _tm.MulticlassStatScores):
            _multiclass_stat_scores_tensor_validation(
                preds, target, self.num_classes, self.multidim_average, self.ignore_index
            )
        else:
            _multilabel_stat_scores_tensor_validation(
                preds, target, self.num_labels, self.multidim_average, self.ignore_index
            )


class _SklearnAverage:
    """``compute`` through :func:`_reduce` for the multiclass / multilabel modules (the statistic is the class's
    ``signature_name``: precision, recall or f1)."""

    signature_name: str
    _multilabel: bool

    def compute(self) -> Tensor:
        tp, fp, _, fn = self._final_state()
        return _reduce(
            self.signature_name, tp, fp, fn, self.average, self.multidim_average, self._multilabel,
            getattr(self, "top_k", 1), self.zero_division,
        )


class BinaryPrecision(_CheckedUpdate, _tm.BinaryPrecision, Metric):
    """Binary precision TP / (TP + FP) = ``sklearn.metrics.precision_score(average="binary")``.

    Args and inputs are those of ``torchmetrics.classification.BinaryPrecision`` (``preds: Tensor[N, ...]`` labels
    or probabilities/logits thresholded at ``threshold``; ``target: Tensor[N, ...]`` in {0, 1}), plus
    ``zero_division`` (0 or 1, the value when TP + FP = 0).

    Example:
        >>> import torch
        >>> metric = BinaryPrecision(zero_division=1)
        >>> metric(torch.tensor([0, 0]), torch.tensor([1, 0]))
        tensor(1.)
        >>> metric.signature().split("|")[:4]
        ['precision', 'task:binary', 'average:binary', 'threshold:0.5']
    """

    signature_name = "precision"

    def _signature_fields(self) -> dict[str, Any]:
        return _signature_fields(self, "binary")


class BinaryRecall(_CheckedUpdate, _tm.BinaryRecall, Metric):
    """Binary recall TP / (TP + FN) = ``sklearn.metrics.recall_score(average="binary")``.

    Inputs as :class:`BinaryPrecision`; ``zero_division`` is the value when TP + FN = 0.

    Example:
        >>> import torch
        >>> BinaryRecall()(torch.tensor([0.9, 0.2, 0.7]), torch.tensor([1, 1, 0]))
        tensor(0.5000)
    """

    signature_name = "recall"

    def _signature_fields(self) -> dict[str, Any]:
        return _signature_fields(self, "binary")


class BinaryF1Score(_CheckedUpdate, _tm.BinaryF1Score, Metric):
    """Binary F1 = 2TP / (2TP + FP + FN) = ``sklearn.metrics.f1_score(average="binary")``.

    Inputs as :class:`BinaryPrecision`; ``zero_division`` is the value when TP + FP + FN = 0.

    Example:
        >>> import torch
        >>> BinaryF1Score()(torch.tensor([1, 0, 1]), torch.tensor([1, 1, 0]))
        tensor(0.5000)
    """

    signature_name = "f1"

    def _signature_fields(self) -> dict[str, Any]:
        return _signature_fields(self, "binary")


@_count_checked_first("num_classes")
class MulticlassPrecision(_CheckedUpdate, _SklearnAverage, _tm.MulticlassPrecision, Metric):
    """Multiclass precision, ``average`` micro / macro / weighted / none, as ``sklearn.metrics.precision_score``.

    Args are those of ``torchmetrics.classification.MulticlassPrecision`` (``num_classes``, ``average``,
    ``top_k``, ``ignore_index`` …) plus ``zero_division`` (0 or 1). Inputs: ``preds: LongTensor[N, ...]`` labels or
    ``Tensor[N, C, ...]`` scores (argmax / top-k); ``target: LongTensor[N, ...]``.

    Example:
        >>> import torch
        >>> metric = MulticlassPrecision(num_classes=3, average="macro")
        >>> metric(torch.tensor([0, 1, 1, 2]), torch.tensor([0, 1, 2, 2]))
        tensor(0.8333)
    """

    signature_name = "precision"
    _multilabel = False

    def _signature_fields(self) -> dict[str, Any]:
        return _signature_fields(self, "multiclass")


@_count_checked_first("num_classes")
class MulticlassRecall(_CheckedUpdate, _SklearnAverage, _tm.MulticlassRecall, Metric):
    """Multiclass recall as ``sklearn.metrics.recall_score`` (see :class:`MulticlassPrecision` for arguments).

    Example:
        >>> import torch
        >>> MulticlassRecall(num_classes=3, average="weighted")(torch.tensor([0, 1, 1, 2]), torch.tensor([0, 1, 2, 2]))
        tensor(0.7500)
    """

    signature_name = "recall"
    _multilabel = False

    def _signature_fields(self) -> dict[str, Any]:
        return _signature_fields(self, "multiclass")


@_count_checked_first("num_classes")
class MulticlassF1Score(_CheckedUpdate, _SklearnAverage, _tm.MulticlassF1Score, Metric):
    """Multiclass F1 as ``sklearn.metrics.f1_score`` (see :class:`MulticlassPrecision` for arguments).

    Example:
        >>> import torch
        >>> MulticlassF1Score(num_classes=3, average="micro")(torch.tensor([0, 1, 1, 2]), torch.tensor([0, 1, 2, 2]))
        tensor(0.7500)
    """

    signature_name = "f1"
    _multilabel = False

    def _signature_fields(self) -> dict[str, Any]:
        return _signature_fields(self, "multiclass")


@_count_checked_first("num_labels")
class MultilabelPrecision(_CheckedUpdate, _SklearnAverage, _tm.MultilabelPrecision, Metric):
    """Multilabel precision as ``sklearn.metrics.precision_score`` on indicator matrices.

    Args are those of ``torchmetrics.classification.MultilabelPrecision`` (``num_labels``, ``threshold``,
    ``average`` …) plus ``zero_division``. Inputs: ``preds: Tensor[N, L, ...]`` (labels or probabilities/logits),
    ``target: LongTensor[N, L, ...]`` in {0, 1}.

    Example:
        >>> import torch
        >>> metric = MultilabelPrecision(num_labels=3, average="micro")
        >>> metric(torch.tensor([[1, 0, 1], [0, 1, 0]]), torch.tensor([[1, 0, 0], [0, 1, 1]]))
        tensor(0.6667)
    """

    signature_name = "precision"
    _multilabel = True

    def _signature_fields(self) -> dict[str, Any]:
        return _signature_fields(self, "multilabel")


@_count_checked_first("num_labels")
class MultilabelRecall(_CheckedUpdate, _SklearnAverage, _tm.MultilabelRecall, Metric):
    """Multilabel recall as ``sklearn.metrics.recall_score`` (see :class:`MultilabelPrecision` for arguments).

    Example:
        >>> import torch
        >>> MultilabelRecall(num_labels=3, average="micro")(torch.tensor([[1, 0, 1], [0, 1, 0]]),
        ...                                                 torch.tensor([[1, 0, 0], [0, 1, 1]]))
        tensor(0.6667)
    """

    signature_name = "recall"
    _multilabel = True

    def _signature_fields(self) -> dict[str, Any]:
        return _signature_fields(self, "multilabel")


@_count_checked_first("num_labels")
class MultilabelF1Score(_CheckedUpdate, _SklearnAverage, _tm.MultilabelF1Score, Metric):
    """Multilabel F1 as ``sklearn.metrics.f1_score`` (see :class:`MultilabelPrecision` for arguments).

    Example:
        >>> import torch
        >>> MultilabelF1Score(num_labels=3, average="macro")(torch.tensor([[1, 0, 1], [0, 1, 0]]),
        ...                                                  torch.tensor([[1, 0, 0], [0, 1, 1]]))
        tensor(0.6667)
    """

    signature_name = "f1"
    _multilabel = True

    def _signature_fields(self) -> dict[str, Any]:
        return _signature_fields(self, "multilabel")
