"""Task metric for ROUGE (google-research rouge-score parity; docs/metrics.md §4)."""

from gpumetrics.tasks.registry import TaskMetric, per_sample_of, register_metric
from gpumetrics.text.rouge import ROUGEScore

register_metric(TaskMetric(
    name="rouge",
    factory=ROUGEScore,
    per_sample=per_sample_of(ROUGEScore, key="rougeL_fmeasure"),
    description=(
        "ROUGE-N/L/Lsum (rouge-score parity) and ROUGE-W; options rouge_keys, use_stemmer, tokenizer "
        "(rouge-score|unicode); best reference per key; mode coco: pycocoevalcap Rouge (best P and R apart, β=1.2, "
        "tokenizer ptb|none); primary score rougeL_fmeasure — docs/metrics.md §4"
    ),
    empty_prediction="",
    primary="rougeL_fmeasure",
))
