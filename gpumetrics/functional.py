"""Every metric as a pure function, torchmetrics-style: ``gpumetrics.functional.token_f1(preds, target)``.

Each function is ``_x_compute(_x_update(...))`` of the module of the same metric, so both give the same number.
"""

# --- text: question answering and strings; edit distance, CER, WER, 1 − NED (docs/metrics/edit.md)
from gpumetrics.text.qa import exact_match, string_accuracy, token_f1, vqa_accuracy
from gpumetrics.text.edit import char_error_rate, edit_distance, normalized_edit_similarity, word_error_rate

# --- image generation: Fréchet distance, KID, CLIP score (docs/metrics/image.md)
from gpumetrics.image.fid import feature_statistics, frechet_distance
from gpumetrics.image.kid import kernel_inception_distance
from gpumetrics.image.clip_score import clip_score

# --- text: BLEU, ROUGE, CIDEr-D / CIDEr, METEOR, CodeBLEU, the COCO caption table (docs/metrics/coco.md)
from gpumetrics.text.bleu import bleu_score
from gpumetrics.text.rouge import rouge_score
from gpumetrics.text.cider import cider_score
from gpumetrics.text.meteor import meteor_score
from gpumetrics.text.codebleu import codebleu_score
from gpumetrics.text.coco import coco_caption_scores
from gpumetrics.text.wmd import word_movers_distance

# --- detection and OCR: IoU kernels, OCR end-to-end, zero-shot detection F1 (docs/metrics/detection.md)
from gpumetrics.kernels.iou import box_iou, box_iou_paired, polygon_iou, polygon_iou_paired
from gpumetrics.detection.ocr_e2e import ocr_end_to_end
from gpumetrics.detection.zero_shot_f1 import zero_shot_detection_f1

# --- classification: torchmetrics' functional precision / recall / F1, re-exported (docs/metrics/classification.md)
from gpumetrics.classification import (
    binary_f1_score, binary_precision, binary_recall,
    multiclass_f1_score, multiclass_precision, multiclass_recall,
    multilabel_f1_score, multilabel_precision, multilabel_recall,
)

# --- retrieval: P@k, R@k, MAP, NDCG, MRR … with trec_eval / ranx conventions (docs/metrics/ranking.md)
from gpumetrics.retrieval.ranking import ranking_metrics

# --- attribution: Shapley values of batched games; corpus BLEU per segment (docs/metrics/shapley.md)
from gpumetrics.attribution.shapley import (
    corpus_bleu_shapley, corpus_cider_shapley, marginal_contributions, shapley_values,
)

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
