"""Task metric for CIDEr-D / CIDEr (pycocoevalcap ``Cider`` parity; docs/metrics.md §4)."""

from gpumetrics.tasks.registry import TaskMetric, register_metric
from gpumetrics.text.cider import CIDErScore

register_metric(TaskMetric(
    name="cider",
    factory=CIDErScore,
    description=(
        "CIDEr-D (pycocoevalcap Cider parity, corpus document frequency) or CIDEr (Vedantam 2015); options "
        "variant (cider-d|cider), tokenize (ptb|none), n_gram, sigma; all references of a sample — docs/metrics.md §4"
    ),
    empty_prediction="",
))
