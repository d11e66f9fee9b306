"""Every metric as a pure function, torchmetrics-style: ``gpumetrics.functional.token_f1(preds, target)``.

Each function is ``_x_compute(_x_update(...))`` of the module of the same metric, so both give the same number.
Names resolve lazily (PEP 562): a function's first use imports its module only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpumetrics.core.lazy import lazy_exports

_EXPORTS = {
    **dict.fromkeys(["token_f1", "exact_match", "string_accuracy", "vqa_accuracy"], "gpumetrics.text.qa"),
    **dict.fromkeys(["edit_distance", "char_error_rate", "word_error_rate", "normalized_edit_similarity"],
                    "gpumetrics.text.edit"),
    **dict.fromkeys(["frechet_distance", "feature_statistics"], "gpumetrics.image.fid"),
    "kernel_inception_distance": "gpumetrics.image.kid",
    "clip_score": "gpumetrics.image.clip_score",
    "bleu_score": "gpumetrics.text.bleu",
    "rouge_score": "gpumetrics.text.rouge",
    "cider_score": "gpumetrics.text.cider",
    "meteor_score": "gpumetrics.text.meteor",
    "codebleu_score": "gpumetrics.text.codebleu",
    "coco_caption_scores": "gpumetrics.text.coco",
    "word_movers_distance": "gpumetrics.text.wmd",
    **dict.fromkeys(["box_iou", "box_iou_paired", "polygon_iou", "polygon_iou_paired"], "gpumetrics.kernels.iou"),
    "ocr_end_to_end": "gpumetrics.detection.ocr_e2e",
    "zero_shot_detection_f1": "gpumetrics.detection.zero_shot_f1",
    **dict.fromkeys(
        ["binary_precision", "binary_recall", "binary_f1_score", "multiclass_precision", "multiclass_recall",
         "multiclass_f1_score", "multilabel_precision", "multilabel_recall", "multilabel_f1_score"],
        "gpumetrics.classification.prf"),
    "ranking_metrics": "gpumetrics.retrieval.ranking",
    **dict.fromkeys(["shapley_values", "marginal_contributions", "corpus_bleu_shapley", "corpus_cider_shapley"],
                    "gpumetrics.attribution.shapley"),
}

__all__ = [
    "token_f1", "exact_match", "string_accuracy", "vqa_accuracy",
    "edit_distance", "char_error_rate", "word_error_rate", "normalized_edit_similarity",
    "frechet_distance", "feature_statistics", "kernel_inception_distance", "clip_score",
    "bleu_score", "rouge_score", "cider_score", "meteor_score", "codebleu_score", "word_movers_distance",
    "coco_caption_scores",
    "box_iou", "box_iou_paired", "polygon_iou", "polygon_iou_paired", "ocr_end_to_end", "zero_shot_detection_f1",
    "binary_precision", "binary_recall", "binary_f1_score",
    "multiclass_precision", "multiclass_recall", "multiclass_f1_score",
    "multilabel_precision", "multilabel_recall", "multilabel_f1_score",
    "ranking_metrics",
    "shapley_values", "marginal_contributions", "corpus_bleu_shapley", "corpus_cider_shapley",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static type checkers and IDEs see the names; nothing is imported at run time
    from gpumetrics.attribution.shapley import (
        corpus_bleu_shapley, corpus_cider_shapley, marginal_contributions, shapley_values,
    )
    from gpumetrics.classification.prf import (
        binary_f1_score, binary_precision, binary_recall, multiclass_f1_score, multiclass_precision,
        multiclass_recall, multilabel_f1_score, multilabel_precision, multilabel_recall,
    )
    from gpumetrics.detection.ocr_e2e import ocr_end_to_end
    from gpumetrics.detection.zero_shot_f1 import zero_shot_detection_f1
    from gpumetrics.image.clip_score import clip_score
    from gpumetrics.image.fid import feature_statistics, frechet_distance
    from gpumetrics.image.kid import kernel_inception_distance
    from gpumetrics.kernels.iou import box_iou, box_iou_paired, polygon_iou, polygon_iou_paired
    from gpumetrics.retrieval.ranking import ranking_metrics
    from gpumetrics.text.bleu import bleu_score
    from gpumetrics.text.cider import cider_score
    from gpumetrics.text.coco import coco_caption_scores
    from gpumetrics.text.codebleu import codebleu_score
    from gpumetrics.text.edit import char_error_rate, edit_distance, normalized_edit_similarity, word_error_rate
    from gpumetrics.text.meteor import meteor_score
    from gpumetrics.text.qa import exact_match, string_accuracy, token_f1, vqa_accuracy
    from gpumetrics.text.rouge import rouge_score
    from gpumetrics.text.wmd import word_movers_distance
