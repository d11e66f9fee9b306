"""Task metric for METEOR (pycocoevalcap's METEOR 1.5 jar, NLTK, the AIJ-2022 variants; docs/metrics.md §3)."""

from gpumetrics.tasks.registry import TaskMetric, per_sample_of, register_metric
from gpumetrics.text.meteor import METEORScore

register_metric(TaskMetric(
    name="meteor",
    factory=METEORScore,
    per_sample=per_sample_of(METEORScore),
    description=(
        "METEOR: mode meteor-1.5 (pycocoevalcap jar parity, corpus score of summed statistics; language en|ru), nltk, "
        "aij2022-caption, aij2022-vqa (option synonyms: a TSV path); all references of a sample — docs/metrics.md §3"
    ),
    empty_prediction="",
    path_options={"synonyms": None},
))
