"""Classification metrics: precision / recall / F1 on the room's own stat scores (``stat_scores``, ``stat_counts``:
torchmetrics' counting rules, no torchmetrics code), with gpumetrics' DDP reducer and signatures. See
``gpumetrics.classification.prf`` for the parity notes against scikit-learn and torchmetrics.

Names resolve lazily (PEP 562): the first use of a name imports its module only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpumetrics.core.lazy import lazy_exports

_EXPORTS = {
    "BinaryPrecision": "gpumetrics.classification.prf",
    "BinaryRecall": "gpumetrics.classification.prf",
    "BinaryF1Score": "gpumetrics.classification.prf",
    "MulticlassPrecision": "gpumetrics.classification.prf",
    "MulticlassRecall": "gpumetrics.classification.prf",
    "MulticlassF1Score": "gpumetrics.classification.prf",
    "MultilabelPrecision": "gpumetrics.classification.prf",
    "MultilabelRecall": "gpumetrics.classification.prf",
    "MultilabelF1Score": "gpumetrics.classification.prf",
    "binary_precision": "gpumetrics.classification.prf",
    "binary_recall": "gpumetrics.classification.prf",
    "binary_f1_score": "gpumetrics.classification.prf",
    "multiclass_precision": "gpumetrics.classification.prf",
    "multiclass_recall": "gpumetrics.classification.prf",
    "multiclass_f1_score": "gpumetrics.classification.prf",
    "multilabel_precision": "gpumetrics.classification.prf",
    "multilabel_recall": "gpumetrics.classification.prf",
    "multilabel_f1_score": "gpumetrics.classification.prf",
}

__all__ = [
    "BinaryPrecision", "BinaryRecall", "BinaryF1Score", "MulticlassPrecision", "MulticlassRecall",
    "MulticlassF1Score", "MultilabelPrecision", "MultilabelRecall", "MultilabelF1Score", "binary_precision",
    "binary_recall", "binary_f1_score", "multiclass_precision", "multiclass_recall", "multiclass_f1_score",
    "multilabel_precision", "multilabel_recall", "multilabel_f1_score"
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static type checkers and IDEs see the names; nothing is imported at run time
    from gpumetrics.classification.prf import (
        BinaryPrecision, BinaryRecall, BinaryF1Score, MulticlassPrecision, MulticlassRecall, MulticlassF1Score,
        MultilabelPrecision, MultilabelRecall, MultilabelF1Score, binary_precision, binary_recall, binary_f1_score,
        multiclass_precision, multiclass_recall, multiclass_f1_score, multilabel_precision, multilabel_recall,
        multilabel_f1_score,
    )
