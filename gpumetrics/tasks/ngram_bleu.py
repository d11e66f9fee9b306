"""Task metric for BLEU (sacrebleu or NLTK mode, corpus or sentence level)."""

from gpumetrics.tasks.registry import TaskMetric, per_sample_of, register_metric
from gpumetrics.text.bleu import BLEUScore

register_metric(TaskMetric(
    name="bleu",
    factory=BLEUScore,
    per_sample=per_sample_of(BLEUScore),  # sentence BLEU
    description="BLEU in [0, 1]: sacrebleu corpus_bleu (13a/intl/char/zh/none), NLTK corpus_bleu or pycocoevalcap Bleu "
                "(mode coco, tokenize ptb|none) — docs/metrics.md §4",
    empty_prediction="",
))
