"""Task metrics for edit distances: 1 − NED (AIJ-2022 text recognition in the wild), CER, WER."""

import functools

from gpumetrics.tasks.registry import TaskMetric, register_metric
from gpumetrics.text.edit import CharErrorRate, NormalizedEditSimilarity, WordErrorRate

register_metric(TaskMetric(
    name="ned_aij2022",
    factory=functools.partial(NormalizedEditSimilarity, preset="aij2022"),
    description="1 − NED, AIJ-2022 text recognition: either string empty → 0, max over gold strings (docs/metrics.md §1)",
    empty_prediction="",
))
register_metric(TaskMetric(
    name="normalized_edit_similarity",
    factory=NormalizedEditSimilarity,
    description="1 − NED = mean of 1 − lev/max(len), max over gold strings; presets default, aij2022 (docs/metrics.md §1)",
    empty_prediction="",
))
register_metric(TaskMetric(
    name="cer",
    factory=CharErrorRate,
    description="character error rate: pooled edits / pooled reference characters, as jiwer; several references: "
                "the best per sample (fewest edits, then the longest) (docs/metrics.md §1)",
    empty_prediction="",
))
register_metric(TaskMetric(
    name="wer",
    factory=WordErrorRate,
    description="word error rate, pooled over whitespace tokens (jiwer, torchmetrics); several references: the best "
                "per sample (fewest edits, then the longest) — docs/metrics.md §1",
    empty_prediction="",
))
