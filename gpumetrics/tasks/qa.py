"""Task metrics for question answering and strings: token F1, exact match, string accuracy."""

from gpumetrics.tasks.registry import TaskMetric, register_metric
from gpumetrics.text.qa import ExactMatch, StringAccuracy, TokenF1

register_metric(TaskMetric(
    name="token_f1",
    factory=TokenF1,
    description="token F1, max over gold answers (presets: squad, aij2022) — docs/metrics.md §1 TextQA",
    empty_prediction="",
))
register_metric(TaskMetric(
    name="exact_match",
    factory=ExactMatch,
    description="exact match of normalised answers (presets: squad, aij2022, raw) — docs/metrics.md §1 MathQA",
    empty_prediction="",
))
register_metric(TaskMetric(
    name="string_accuracy",
    factory=StringAccuracy,
    description="share of predictions equal to the gold string — docs/metrics.md §1 HTR",
    empty_prediction="",
))
