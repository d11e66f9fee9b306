"""Task metric for the COCO caption table (pycocoevalcap ``COCOEvalCap`` without SPICE; docs/metrics.md §4).

Use it with ``format: coco`` in a config: ``predictions`` is a COCO results file (``[{"image_id", "caption"}]``),
``references`` a ``captions_*.json`` annotations file; only the images of the results are evaluated, as
``COCOEvalCap`` is run by its example (``params['image_id'] = cocoRes.getImgIds()``). The task's score is CIDEr;
the table shows every key and the JSON report holds them in ``details``.
"""

from gpumetrics.tasks.registry import TaskMetric, register_metric
from gpumetrics.text.coco import COCO_KEYS, COCOCaptionScores

register_metric(TaskMetric(
    name="coco_caption",
    factory=COCOCaptionScores,
    description=(
        "the COCOEvalCap table: Bleu_1..4 (pycocoevalcap Bleu), METEOR (1.5 jar), ROUGE_L (β=1.2), CIDEr (CIDEr-D), "
        "PTB-tokenised; no SPICE (not offline); use `format: coco` for COCO results/annotations files; primary CIDEr "
        "— docs/metrics.md §4"
    ),
    empty_prediction=None,  # COCOEvalCap scores the images that have a result; a missing one is an error
    primary="CIDEr",
    table_keys=COCO_KEYS,
))
