"""Precision, recall and F1 (binary / multiclass / multilabel; micro, macro, weighted) — torchmetrics' statistics,
sklearn's averaging.

The nine modules derive from :class:`gpumetrics.core.Metric` only (through :class:`_StatScores`): validation,
formatting and TP / FP / TN / FN counting are the room's own (:mod:`gpumetrics.classification.stat_scores`,
:mod:`gpumetrics.classification.stat_counts`), the same path for a module's ``update`` and for the nine functions.
The counts are torchmetrics' (its ``*_stat_scores`` rules, the same integers; multiclass counts in O(N + C) memory
instead of a C × C confusion matrix or one-hot tensors, without host syncs), kept in states of torchmetrics' names and
reductions (``tp``, ``fp``, ``tn``, ``fn``: summed, or concatenated rows for ``multidim_average="samplewise"``), so
checkpoints written before carry over. Modules and functions take torchmetrics' arguments and return its numbers
(tests/classification/test_parity.py) except where noted below.

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
through), where torchmetrics returns 0. sklearn raises on zero samples; we return that same mean. Where torchmetrics
fails or scores silently — zero-sample batches, labels out of range, ``top_k=0``, one samplewise sample squeezed
away — we score or raise as docs/metrics/classification.md lists.
"""

from __future__ import annotations

from typing import Any, ClassVar, Optional

import torch
from torch import Tensor

from gpumetrics.classification.stat_scores import (
    binary_counts,
    check_binary_args,
    check_class_count,
    check_inputs,
    check_multiclass_args,
    check_multilabel_args,
    multiclass_counts,
    multilabel_counts,
    no_samples,
    reduce_scores,
    unscored_labels_to_zero,
    zero_counts,
)
from gpumetrics.core import Metric, keep_sample_dim
from gpumetrics.core.transfer import upload

__all__ = [
    "BinaryPrecision", "BinaryRecall", "BinaryF1Score",
    "MulticlassPrecision", "MulticlassRecall", "MulticlassF1Score",
    "MultilabelPrecision", "MultilabelRecall", "MultilabelF1Score",
    "binary_precision", "binary_recall", "binary_f1_score",
    "multiclass_precision", "multiclass_recall", "multiclass_f1_score",
    "multilabel_precision", "multilabel_recall", "multilabel_f1_score",
    "TORCHMETRICS_RULES",
]

#: the torchmetrics release whose stat-score rules the room reproduces (tests/classification/test_parity.py); the
#: signature's ``impl`` field names it, so states checkpointed while the modules subclassed torchmetrics 1.9.0's
#: classes (the same integers) still load
TORCHMETRICS_RULES = "1.9.0"


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
        "impl": f"torchmetrics-{TORCHMETRICS_RULES}",
    }


# ---------------------------------------------------------------------------------------------------------- functions
def _binary(stat: str, preds: Tensor, target: Tensor, threshold: float = 0.5, multidim_average: str = "global",
            ignore_index: Optional[int] = None, validate_args: bool = True, zero_division: float = 0) -> Tensor:
    check_binary_args(threshold, multidim_average, ignore_index, zero_division)
    if validate_args:
        check_inputs("binary", preds, target, None, ignore_index, multidim_average=multidim_average)
    if no_samples(preds, target):
        tp = fp = fn = zero_counts(1, multidim_average, preds.device)[..., 0]
    else:
        tp, fp, _, fn = binary_counts(preds, target, threshold, multidim_average, ignore_index)
    return reduce_scores(stat, tp, fp, fn, "binary", multidim_average, False, 1, zero_division)


def _multiclass(
    stat: str, preds: Tensor, target: Tensor, num_classes: int, average: Optional[str] = "macro", top_k: int = 1,
    multidim_average: str = "global", ignore_index: Optional[int] = None, validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    check_class_count("num_classes", num_classes, validate_args)
    check_multiclass_args(num_classes, top_k, average, multidim_average, ignore_index, zero_division)
    if validate_args:
        check_inputs("multiclass", preds, target, num_classes, ignore_index, top_k, multidim_average)
    preds = unscored_labels_to_zero(preds, target, ignore_index)
    if no_samples(preds, target):
        tp = fp = fn = zero_counts(num_classes, multidim_average, preds.device)
    else:
        tp, fp, _, fn = multiclass_counts(preds, target, num_classes, top_k, average, multidim_average, ignore_index)
    return reduce_scores(stat, tp, fp, fn, average, multidim_average, False, top_k, zero_division)


def _multilabel(
    stat: str, preds: Tensor, target: Tensor, num_labels: int, threshold: float = 0.5,
    average: Optional[str] = "macro", multidim_average: str = "global", ignore_index: Optional[int] = None,
    validate_args: bool = True, zero_division: float = 0,
) -> Tensor:
    check_class_count("num_labels", num_labels, validate_args)
    check_multilabel_args(threshold, average, multidim_average, ignore_index, zero_division)
    if validate_args:
        check_inputs("multilabel", preds, target, num_labels, ignore_index, multidim_average=multidim_average)
    if no_samples(preds, target):
        tp = fp = fn = zero_counts(num_labels, multidim_average, preds.device)
    else:
        tp, fp, _, fn = multilabel_counts(preds, target, num_labels, threshold, multidim_average, ignore_index)
    return reduce_scores(stat, tp, fp, fn, average, multidim_average, True, 1, zero_division)


def binary_precision(
    preds: Tensor, target: Tensor, threshold: float = 0.5, multidim_average: str = "global",
    ignore_index: Optional[int] = None, validate_args: bool = True, zero_division: float = 0,
) -> Tensor:
    """Binary precision TP / (TP + FP), the number of ``torchmetrics.functional.binary_precision`` (same arguments).

    ``preds: Tensor[N, ...]`` labels in {0, 1} or probabilities / logits (thresholded at ``threshold``),
    ``target: LongTensor[N, ...]`` in {0, 1}. Returns float32 ``Tensor[]``, or ``Tensor[N]`` for
    ``multidim_average="samplewise"`` (also for N = 1); zero samples give ``zero_division``.
    """
    return _binary("precision", preds, target, threshold, multidim_average, ignore_index, validate_args, zero_division)


def binary_recall(
    preds: Tensor, target: Tensor, threshold: float = 0.5, multidim_average: str = "global",
    ignore_index: Optional[int] = None, validate_args: bool = True, zero_division: float = 0,
) -> Tensor:
    """Binary recall TP / (TP + FN) (``torchmetrics.functional.binary_recall``); inputs and shapes as
    :func:`binary_precision`."""
    return _binary("recall", preds, target, threshold, multidim_average, ignore_index, validate_args, zero_division)


def binary_f1_score(
    preds: Tensor, target: Tensor, threshold: float = 0.5, multidim_average: str = "global",
    ignore_index: Optional[int] = None, validate_args: bool = True, zero_division: float = 0,
) -> Tensor:
    """Binary F1 = 2TP / (2TP + FP + FN) (``torchmetrics.functional.binary_f1_score``); inputs and shapes as
    :func:`binary_precision`."""
    return _binary("f1", preds, target, threshold, multidim_average, ignore_index, validate_args, zero_division)


def multiclass_precision(
    preds: Tensor, target: Tensor, num_classes: int, average: Optional[str] = "macro", top_k: int = 1,
    multidim_average: str = "global", ignore_index: Optional[int] = None, validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """Multiclass precision, ``torchmetrics.functional.multiclass_precision`` (same arguments) with sklearn's
    zero-weight average.

    ``preds: LongTensor[N, ...]`` labels or ``Tensor[N, C, ...]`` scores (argmax / top-k),
    ``target: LongTensor[N, ...]``. Returns float32 ``Tensor[]`` (``Tensor[C]`` for ``average="none"``), with a
    leading ``N`` dimension for ``multidim_average="samplewise"``.
    """
    return _multiclass(
        "precision", preds, target, num_classes, average, top_k, multidim_average, ignore_index, validate_args,
        zero_division,
    )


def multiclass_recall(
    preds: Tensor, target: Tensor, num_classes: int, average: Optional[str] = "macro", top_k: int = 1,
    multidim_average: str = "global", ignore_index: Optional[int] = None, validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """Multiclass recall (``torchmetrics.functional.multiclass_recall``) with sklearn's zero-weight average;
    inputs and shapes as :func:`multiclass_precision`."""
    return _multiclass(
        "recall", preds, target, num_classes, average, top_k, multidim_average, ignore_index, validate_args,
        zero_division,
    )


def multiclass_f1_score(
    preds: Tensor, target: Tensor, num_classes: int, average: Optional[str] = "macro", top_k: int = 1,
    multidim_average: str = "global", ignore_index: Optional[int] = None, validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """Multiclass F1 (``torchmetrics.functional.multiclass_f1_score``) with sklearn's zero-weight average;
    inputs and shapes as :func:`multiclass_precision`."""
    return _multiclass(
        "f1", preds, target, num_classes, average, top_k, multidim_average, ignore_index, validate_args, zero_division
    )


def multilabel_precision(
    preds: Tensor, target: Tensor, num_labels: int, threshold: float = 0.5, average: Optional[str] = "macro",
    multidim_average: str = "global", ignore_index: Optional[int] = None, validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """Multilabel precision, ``torchmetrics.functional.multilabel_precision`` (same arguments) with sklearn's
    zero-weight average.

    ``preds: Tensor[N, L, ...]`` labels or probabilities / logits (thresholded at ``threshold``),
    ``target: LongTensor[N, L, ...]`` in {0, 1}. Returns float32 ``Tensor[]`` (``Tensor[L]`` for ``average="none"``),
    with a leading ``N`` dimension for ``multidim_average="samplewise"`` (also for N = 1).
    """
    return _multilabel(
        "precision", preds, target, num_labels, threshold, average, multidim_average, ignore_index, validate_args,
        zero_division,
    )


def multilabel_recall(
    preds: Tensor, target: Tensor, num_labels: int, threshold: float = 0.5, average: Optional[str] = "macro",
    multidim_average: str = "global", ignore_index: Optional[int] = None, validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """Multilabel recall (``torchmetrics.functional.multilabel_recall``) with sklearn's zero-weight average;
    inputs and shapes as :func:`multilabel_precision`."""
    return _multilabel(
        "recall", preds, target, num_labels, threshold, average, multidim_average, ignore_index, validate_args,
        zero_division,
    )


def multilabel_f1_score(
    preds: Tensor, target: Tensor, num_labels: int, threshold: float = 0.5, average: Optional[str] = "macro",
    multidim_average: str = "global", ignore_index: Optional[int] = None, validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    """Multilabel F1 (``torchmetrics.functional.multilabel_f1_score``) with sklearn's zero-weight average;
    inputs and shapes as :func:`multilabel_precision`."""
    return _multilabel(
        "f1", preds, target, num_labels, threshold, average, multidim_average, ignore_index, validate_args,
        zero_division,
    )


# ------------------------------------------------------------------------------------------------------------ modules
class _StatScores(Metric):
    """Base of the nine modules: states ``tp``, ``fp``, ``tn``, ``fn`` (``LongTensor``, summed — ``[1]`` binary,
    ``[C]`` / ``[L]`` per class, ``[1]`` for multiclass top-1 micro — or, for ``multidim_average="samplewise"``,
    lists of ``[N]`` / ``[N, C]`` rows concatenated under DDP), an ``update`` that checks its inputs (one host read,
    ``validate_args=True``), moves them to the metric's device and adds their counts (a batch of zero samples adds
    nothing), and a ``compute`` through :func:`~gpumetrics.classification.stat_scores.reduce_scores`.

    Subclasses set ``task``, ``signature_name`` (the statistic: precision, recall or f1) and :meth:`_counts`.
    """

    is_differentiable: ClassVar[bool] = False
    higher_is_better: ClassVar[Optional[bool]] = True
    full_state_update: ClassVar[bool] = False
    plot_lower_bound: ClassVar[float] = 0.0
    plot_upper_bound: ClassVar[float] = 1.0
    task: ClassVar[str] = ""

    tp: Any
    fp: Any
    tn: Any
    fn: Any
    multidim_average: str
    ignore_index: Optional[int]
    validate_args: bool
    zero_division: float

    def _set_options(self, multidim_average: str, ignore_index: Optional[int], validate_args: bool,
                     zero_division: float, size: int) -> None:
        self.multidim_average = multidim_average
        self.ignore_index = ignore_index
        self.validate_args = validate_args
        self.zero_division = zero_division
        for name in ("tp", "fp", "tn", "fn"):
            if multidim_average == "samplewise":
                self.add_state(name, [], dist_reduce_fx="cat")
            else:
                self.add_state(name, torch.zeros(size, dtype=torch.long), dist_reduce_fx="sum")

    @property
    def _size(self) -> Optional[int]:
        """Classes or labels of a per-class state (None: binary)."""
        return getattr(self, "num_classes", None) or getattr(self, "num_labels", None)

    def _check(self, preds: Any, target: Any) -> None:
        check_inputs(self.task, preds, target, self._size, self.ignore_index, getattr(self, "top_k", 1),
                     self.multidim_average, same_device=False)

    def _counts(self, preds: Tensor, target: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        raise NotImplementedError

    def update(self, preds: Tensor, target: Tensor) -> None:
        """Add the counts of ``preds`` / ``target`` (shapes as the task's function)."""
        if self.validate_args:
            self._check(preds, target)
        if isinstance(preds, Tensor) and isinstance(target, Tensor):  # inputs on either device: states stay on ours
            preds, target = upload(preds, self.device), upload(target, self.device)
        if no_samples(preds, target):
            return
        tp, fp, tn, fn = self._counts(preds, target)
        if self.multidim_average == "samplewise":
            self.tp.append(tp)
            self.fp.append(fp)
            self.tn.append(tn)
            self.fn.append(fn)
        else:
            self.tp, self.fp, self.tn, self.fn = self.tp + tp, self.fp + fp, self.tn + tn, self.fn + fn

    def _final_state(self) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """The four statistics as tensors; ``samplewise`` rows concatenated (``[0]`` / ``[0, C]`` for no sample)."""
        if self.multidim_average != "samplewise":
            return self.tp, self.fp, self.tn, self.fn
        shape = (0,) if self._size is None else (0, self._size)
        empty = torch.zeros(shape, dtype=torch.long, device=self.device)
        return tuple(  # type: ignore[return-value]
            _rows(getattr(self, name), empty) for name in ("tp", "fp", "tn", "fn")
        )

    def compute(self) -> Tensor:
        tp, fp, _, fn = self._final_state()
        return reduce_scores(self.signature_name, tp, fp, fn, getattr(self, "average", "binary"), self.multidim_average,
                             self.task == "multilabel", getattr(self, "top_k", 1), self.zero_division)

    def _finish_compute(self, value: Any) -> Any:
        """``samplewise`` results keep ``[N]`` for one sample: the base's ``compute`` wrapper squeezes every
        one-element result to 0-d (per-class results hold ≥ 2 classes or labels, so only ``[1]`` can lose its
        dimension)."""
        return keep_sample_dim(value, "none") if self.multidim_average == "samplewise" else value

    def _signature_fields(self) -> dict[str, Any]:
        return _signature_fields(self, self.task)


def _rows(state: Any, empty: Tensor) -> Tensor:
    """A samplewise state (a list of row blocks, or one tensor after a DDP sync) as one tensor of rows."""
    if isinstance(state, Tensor):
        return state if state.numel() else empty
    blocks = [block.reshape(-1, *empty.shape[1:]) for block in state]
    return torch.cat(blocks) if blocks else empty


class _Binary(_StatScores):
    task = "binary"

    def __init__(
        self, threshold: float = 0.5, multidim_average: str = "global", ignore_index: Optional[int] = None,
        validate_args: bool = True, **kwargs: Any,
    ) -> None:
        zero_division = kwargs.pop("zero_division", 0)  # a keyword of the F1 modules only, as in torchmetrics
        super().__init__(**kwargs)
        check_binary_args(threshold, multidim_average, ignore_index, zero_division)
        self.threshold = threshold
        self._set_options(multidim_average, ignore_index, validate_args, zero_division, 1)

    def _counts(self, preds: Tensor, target: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        return binary_counts(preds, target, self.threshold, self.multidim_average, self.ignore_index)


class _Multiclass(_StatScores):
    task = "multiclass"
    plot_legend_name: ClassVar[str] = "Class"

    def __init__(
        self, num_classes: Optional[int] = None, top_k: int = 1, average: Optional[str] = "macro",
        multidim_average: str = "global", ignore_index: Optional[int] = None, validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        zero_division = kwargs.pop("zero_division", 0)
        check_class_count("num_classes", num_classes, validate_args)
        check_multiclass_args(num_classes, top_k, average, multidim_average, ignore_index, zero_division)
        super().__init__(**kwargs)
        self.num_classes = num_classes
        self.top_k = top_k
        self.average = average
        self._set_options(multidim_average, ignore_index, validate_args, zero_division,
                          1 if average == "micro" and top_k == 1 else num_classes)

    def _counts(self, preds: Tensor, target: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        preds = unscored_labels_to_zero(preds, target, self.ignore_index)
        return multiclass_counts(preds, target, self.num_classes, self.top_k, self.average, self.multidim_average,
                                 self.ignore_index)


class _Multilabel(_StatScores):
    task = "multilabel"
    plot_legend_name: ClassVar[str] = "Label"

    def __init__(
        self, num_labels: int, threshold: float = 0.5, average: Optional[str] = "macro",
        multidim_average: str = "global", ignore_index: Optional[int] = None, validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        zero_division = kwargs.pop("zero_division", 0)
        check_class_count("num_labels", num_labels, validate_args)
        check_multilabel_args(threshold, average, multidim_average, ignore_index, zero_division)
        super().__init__(**kwargs)
        self.num_labels = num_labels
        self.threshold = threshold
        self.average = average
        self._set_options(multidim_average, ignore_index, validate_args, zero_division, num_labels)

    def _counts(self, preds: Tensor, target: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        return multilabel_counts(preds, target, self.num_labels, self.threshold, self.multidim_average,
                                 self.ignore_index)


class BinaryPrecision(_Binary):
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


class BinaryRecall(_Binary):
    """Binary recall TP / (TP + FN) = ``sklearn.metrics.recall_score(average="binary")``.

    Inputs as :class:`BinaryPrecision`; ``zero_division`` is the value when TP + FN = 0.

    Example:
        >>> import torch
        >>> BinaryRecall()(torch.tensor([0.9, 0.2, 0.7]), torch.tensor([1, 1, 0]))
        tensor(0.5000)
    """

    signature_name = "recall"


class BinaryF1Score(_Binary):
    """Binary F1 = 2TP / (2TP + FP + FN) = ``sklearn.metrics.f1_score(average="binary")``.

    Inputs as :class:`BinaryPrecision`; ``zero_division`` is the value when TP + FP + FN = 0.

    Example:
        >>> import torch
        >>> BinaryF1Score()(torch.tensor([1, 0, 1]), torch.tensor([1, 1, 0]))
        tensor(0.5000)
    """

    signature_name = "f1"
    beta = 1.0  # torchmetrics' F-beta attribute

    def __init__(
        self, threshold: float = 0.5, multidim_average: str = "global", ignore_index: Optional[int] = None,
        validate_args: bool = True, zero_division: float = 0, **kwargs: Any,
    ) -> None:
        super().__init__(threshold, multidim_average, ignore_index, validate_args, zero_division=zero_division,
                         **kwargs)


class MulticlassPrecision(_Multiclass):
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


class MulticlassRecall(_Multiclass):
    """Multiclass recall as ``sklearn.metrics.recall_score`` (see :class:`MulticlassPrecision` for arguments).

    Example:
        >>> import torch
        >>> MulticlassRecall(num_classes=3, average="weighted")(torch.tensor([0, 1, 1, 2]), torch.tensor([0, 1, 2, 2]))
        tensor(0.7500)
    """

    signature_name = "recall"


class MulticlassF1Score(_Multiclass):
    """Multiclass F1 as ``sklearn.metrics.f1_score`` (see :class:`MulticlassPrecision` for arguments).

    Example:
        >>> import torch
        >>> MulticlassF1Score(num_classes=3, average="micro")(torch.tensor([0, 1, 1, 2]), torch.tensor([0, 1, 2, 2]))
        tensor(0.7500)
    """

    signature_name = "f1"
    beta = 1.0

    def __init__(
        self, num_classes: int, top_k: int = 1, average: Optional[str] = "macro", multidim_average: str = "global",
        ignore_index: Optional[int] = None, validate_args: bool = True, zero_division: float = 0, **kwargs: Any,
    ) -> None:
        super().__init__(num_classes, top_k, average, multidim_average, ignore_index, validate_args,
                         zero_division=zero_division, **kwargs)


class MultilabelPrecision(_Multilabel):
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


class MultilabelRecall(_Multilabel):
    """Multilabel recall as ``sklearn.metrics.recall_score`` (see :class:`MultilabelPrecision` for arguments).

    Example:
        >>> import torch
        >>> MultilabelRecall(num_labels=3, average="micro")(torch.tensor([[1, 0, 1], [0, 1, 0]]),
        ...                                                 torch.tensor([[1, 0, 0], [0, 1, 1]]))
        tensor(0.6667)
    """

    signature_name = "recall"


class MultilabelF1Score(_Multilabel):
    """Multilabel F1 as ``sklearn.metrics.f1_score`` (see :class:`MultilabelPrecision` for arguments).

    Example:
        >>> import torch
        >>> MultilabelF1Score(num_labels=3, average="macro")(torch.tensor([[1, 0, 1], [0, 1, 0]]),
        ...                                                  torch.tensor([[1, 0, 0], [0, 1, 1]]))
        tensor(0.6667)
    """

    signature_name = "f1"
    beta = 1.0

    def __init__(
        self, num_labels: int, threshold: float = 0.5, average: Optional[str] = "macro",
        multidim_average: str = "global", ignore_index: Optional[int] = None, validate_args: bool = True,
        zero_division: float = 0, **kwargs: Any,
    ) -> None:
        super().__init__(num_labels, threshold, average, multidim_average, ignore_index, validate_args,
                         zero_division=zero_division, **kwargs)
