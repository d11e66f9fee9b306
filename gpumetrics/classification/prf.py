"""Precision, recall and F1 (binary / multiclass / multilabel; micro, macro, weighted) — torchmetrics', not rewritten.

The modules are thin subclasses of torchmetrics' classification metrics that also derive from
:class:`gpumetrics.core.Metric`, so they gain gpumetrics' all-reduce DDP reducer and a ``signature()``; statistics,
validation and formulas are torchmetrics' own. The functions are torchmetrics' functional forms, re-exported.

Parity (tests/classification/test_prf.py) is with ``sklearn.metrics.precision_score`` / ``recall_score`` /
``f1_score`` including ``zero_division`` (0 or 1), with these known differences:

* results are ``float32`` tensors (sklearn: float64), so they agree to ~1e-7, not bit for bit;
* multiclass ``macro`` averages over the classes that occur in ``target`` or ``preds`` — sklearn's default
  ``labels=None``; with an explicit ``labels=range(num_classes)`` sklearn also averages the absent classes (each
  scored ``zero_division``) and the two differ. ``average="none"`` returns every class (sklearn with ``labels=range(C)``);
* no ``average="samples"`` for multilabel (``multidim_average="samplewise"`` is a different, per-sample-row view);
* ``ignore_index`` drops those samples (sklearn: filter them out first); ``top_k > 1`` has no sklearn counterpart.
"""

from __future__ import annotations

from typing import Any

import torchmetrics
from torchmetrics import classification as _tm
from torchmetrics.functional.classification import (
    binary_f1_score,
    binary_precision,
    binary_recall,
    multiclass_f1_score,
    multiclass_precision,
    multiclass_recall,
    multilabel_f1_score,
    multilabel_precision,
    multilabel_recall,
)

from gpumetrics.core import Metric

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


class BinaryPrecision(_tm.BinaryPrecision, Metric):
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


class BinaryRecall(_tm.BinaryRecall, Metric):
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


class BinaryF1Score(_tm.BinaryF1Score, Metric):
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


class MulticlassPrecision(_tm.MulticlassPrecision, Metric):
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

    def _signature_fields(self) -> dict[str, Any]:
        return _signature_fields(self, "multiclass")


class MulticlassRecall(_tm.MulticlassRecall, Metric):
    """Multiclass recall as ``sklearn.metrics.recall_score`` (see :class:`MulticlassPrecision` for arguments).

    Example:
        >>> import torch
        >>> MulticlassRecall(num_classes=3, average="weighted")(torch.tensor([0, 1, 1, 2]), torch.tensor([0, 1, 2, 2]))
        tensor(0.7500)
    """

    signature_name = "recall"

    def _signature_fields(self) -> dict[str, Any]:
        return _signature_fields(self, "multiclass")


class MulticlassF1Score(_tm.MulticlassF1Score, Metric):
    """Multiclass F1 as ``sklearn.metrics.f1_score`` (see :class:`MulticlassPrecision` for arguments).

    Example:
        >>> import torch
        >>> MulticlassF1Score(num_classes=3, average="micro")(torch.tensor([0, 1, 1, 2]), torch.tensor([0, 1, 2, 2]))
        tensor(0.7500)
    """

    signature_name = "f1"

    def _signature_fields(self) -> dict[str, Any]:
        return _signature_fields(self, "multiclass")


class MultilabelPrecision(_tm.MultilabelPrecision, Metric):
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

    def _signature_fields(self) -> dict[str, Any]:
        return _signature_fields(self, "multilabel")


class MultilabelRecall(_tm.MultilabelRecall, Metric):
    """Multilabel recall as ``sklearn.metrics.recall_score`` (see :class:`MultilabelPrecision` for arguments).

    Example:
        >>> import torch
        >>> MultilabelRecall(num_labels=3, average="micro")(torch.tensor([[1, 0, 1], [0, 1, 0]]), torch.tensor([[1, 0, 0], [0, 1, 1]]))
        tensor(0.6667)
    """

    signature_name = "recall"

    def _signature_fields(self) -> dict[str, Any]:
        return _signature_fields(self, "multilabel")


class MultilabelF1Score(_tm.MultilabelF1Score, Metric):
    """Multilabel F1 as ``sklearn.metrics.f1_score`` (see :class:`MultilabelPrecision` for arguments).

    Example:
        >>> import torch
        >>> MultilabelF1Score(num_labels=3, average="macro")(torch.tensor([[1, 0, 1], [0, 1, 0]]), torch.tensor([[1, 0, 0], [0, 1, 1]]))
        tensor(0.6667)
    """

    signature_name = "f1"

    def _signature_fields(self) -> dict[str, Any]:
        return _signature_fields(self, "multilabel")
