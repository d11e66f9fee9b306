"""Classification metrics: torchmetrics' precision / recall / F1 with gpumetrics' DDP reducer and signatures.

See ``gpumetrics.classification.prf`` for the parity notes against scikit-learn.
"""

from gpumetrics.classification.prf import (
    BinaryF1Score,
    BinaryPrecision,
    BinaryRecall,
    MulticlassF1Score,
    MulticlassPrecision,
    MulticlassRecall,
    MultilabelF1Score,
    MultilabelPrecision,
    MultilabelRecall,
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
from gpumetrics.classification.prf import __all__ as _prf_all

__all__ = list(_prf_all)
