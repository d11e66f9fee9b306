"""Task metrics and challenge suites, by name, for configs and the CLI (see ``registry``).

Importing this package registers every entry: one module per family registers its metrics, suites come last.
"""

from gpumetrics.tasks import qa  # noqa: F401  (registers token_f1, exact_match, string_accuracy)
from gpumetrics.tasks import ngram_rouge  # noqa: F401  (registers rouge)
from gpumetrics.tasks import detection  # noqa: F401  (registers zero_shot_detection_f1)
from gpumetrics.tasks import edit  # noqa: F401  (registers ned_aij2022, normalized_edit_similarity, cer, wer)
from gpumetrics.tasks import ngram_cider  # noqa: F401  (registers cider)
from gpumetrics.tasks import ngram_bleu  # noqa: F401  (registers bleu)
from gpumetrics.tasks import meteor  # noqa: F401  (registers meteor)
from gpumetrics.tasks import codebleu  # noqa: F401  (registers codebleu)
from gpumetrics.tasks import image  # noqa: F401  (registers s_image_generation)
from gpumetrics.tasks import captioning  # noqa: F401  (registers s_image_captioning, s_visual_qa)
from gpumetrics.tasks import coco  # noqa: F401  (registers coco_caption)
from gpumetrics.tasks import suites  # noqa: F401  (registers aij2022, aij2021; keep last)
from gpumetrics.tasks.registry import METRICS, SUITES, get_metric, get_suite

__all__ = ["METRICS", "SUITES", "get_metric", "get_suite"]
