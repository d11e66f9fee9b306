"""Task metrics for question answering and strings: token F1, exact match, string accuracy, VQA accuracy."""

from typing import Any

from gpumetrics.tasks.registry import TaskMetric, per_sample_of, register_metric
from gpumetrics.text.qa import ExactMatch, StringAccuracy, TokenF1, VQAAccuracy


def vqa_update_args(predictions: list[Any], references: list[Any]) -> tuple:
    """Records → ``update(preds, target, lang)``: each reference is ``{"answers": [gold, …], "lang": "en" | "ru"}``
    (``"references": {…}`` or ``[{…}]``).

    Raises:
        TypeError: naming the sample (its index in the batch).
    """
    target, langs = [], []
    for index, refs in enumerate(references):
        ref = refs[0] if isinstance(refs, list) and len(refs) == 1 else refs
        if not isinstance(ref, dict) or "answers" not in ref or "lang" not in ref:
            raise TypeError(f'references {index} must be one object {{"answers": [gold, …], "lang": "en"|"ru"}}, '
                            f"got {ref!r:.80}")
        target.append(ref["answers"])
        langs.append(ref["lang"])
    return predictions, target, langs


register_metric(TaskMetric(
    name="token_f1",
    factory=TokenF1,
    per_sample=per_sample_of(TokenF1),
    description="token F1, max over gold answers (presets: squad, aij2022) — docs/metrics.md §1 TextQA",
    empty_prediction="",
))
register_metric(TaskMetric(
    name="exact_match",
    factory=ExactMatch,
    per_sample=per_sample_of(ExactMatch),
    description="exact match of normalised answers (presets: squad, aij2022, raw) — docs/metrics.md §1 MathQA",
    empty_prediction="",
))
register_metric(TaskMetric(
    name="string_accuracy",
    factory=StringAccuracy,
    per_sample=per_sample_of(StringAccuracy),
    description="share of predictions equal to the gold string — docs/metrics.md §1 HTR",
    empty_prediction="",
))
register_metric(TaskMetric(
    name="vqa_accuracy",
    factory=VQAAccuracy,
    per_sample=per_sample_of(VQAAccuracy),
    description="AIJ-2021 VQA accuracy: the prediction normalised as vqaEval.py (per question lang en|ru) equals a "
                "raw gold answer — docs/metrics.md §1",
    empty_prediction=None,
    update_args=vqa_update_args,
))
