"""Task metrics for edit distances: 1 − NED (AIJ-2022 text recognition in the wild), CER, WER."""

import functools
from typing import Any, Callable

from gpumetrics.tasks.registry import TaskMetric, per_sample_of, register_metric
from gpumetrics.text.edit import CharErrorRate, NormalizedEditSimilarity, WordErrorRate, error_rate_compute, error_rate_pairs


def _error_rate_per_sample(cls: type) -> Callable[[dict, Any], Callable[..., Any]]:
    """Each sample's own rate: its edits / its best reference's length (the corpus rate pools these)."""

    def build(options: dict, device: Any) -> Callable[..., Any]:
        metric = cls(**options)  # checks the options and resolves the default transform

        def score(preds: list, target: list) -> Any:
            return error_rate_compute(*error_rate_pairs(preds, target, metric.unit, metric.backend, device, metric.transform))

        return score

    return build


register_metric(TaskMetric(
    name="ned_aij2022",
    factory=functools.partial(NormalizedEditSimilarity, preset="aij2022"),
    per_sample=per_sample_of(functools.partial(NormalizedEditSimilarity, preset="aij2022")),
    description="1 − NED, AIJ-2022 text recognition: either string empty → 0, max over gold strings (docs/metrics.md §1)",
    empty_prediction="",
))
register_metric(TaskMetric(
    name="normalized_edit_similarity",
    factory=NormalizedEditSimilarity,
    per_sample=per_sample_of(NormalizedEditSimilarity),
    description="1 − NED = mean of 1 − lev/max(len), max over gold strings; presets default, aij2022 (docs/metrics.md §1)",
    empty_prediction="",
))
register_metric(TaskMetric(
    name="cer",
    factory=CharErrorRate,
    per_sample=_error_rate_per_sample(CharErrorRate),
    description="character error rate: pooled edits / pooled reference characters, as jiwer; several references: "
                "the best per sample (fewest edits, then the longest) (docs/metrics.md §1)",
    empty_prediction="",
))
register_metric(TaskMetric(
    name="wer",
    factory=WordErrorRate,
    per_sample=_error_rate_per_sample(WordErrorRate),
    description="word error rate, pooled over whitespace tokens (jiwer, torchmetrics); several references: the best "
                "per sample (fewest edits, then the longest) — docs/metrics.md §1",
    empty_prediction="",
))
