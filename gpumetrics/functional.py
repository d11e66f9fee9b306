"""Every metric as a pure function, torchmetrics-style: ``gpumetrics.functional.token_f1(preds, target)``.

Each function is ``_x_compute(_x_update(...))`` of the module of the same metric, so both give the same number.
"""

# --- text: question answering and strings (METRICS_SPEC §1)
from gpumetrics.text.qa import exact_match, string_accuracy, token_f1

# --- classification: torchmetrics' functional precision / recall / F1, re-exported (METRICS_SPEC §6)
from gpumetrics.classification import (  # noqa: E402
    binary_f1_score, binary_precision, binary_recall,
    multiclass_f1_score, multiclass_precision, multiclass_recall,
    multilabel_f1_score, multilabel_precision, multilabel_recall,
)

# --- text: edit distance, CER, WER, 1 − NED (METRICS_SPEC §1)
from gpumetrics.text.edit import (  # noqa: E402
    char_error_rate, edit_distance, normalized_edit_similarity, word_error_rate,
)

# --- image generation: Fréchet distance (METRICS_SPEC §2)
from gpumetrics.image.fid import feature_statistics, frechet_distance  # noqa: E402
from gpumetrics.image.kid import kernel_inception_distance  # noqa: E402
from gpumetrics.image.clip_score import clip_score  # noqa: E402

# --- detection and OCR: IoU kernels, OCR end-to-end, zero-shot detection F1 (METRICS_SPEC §5)
from gpumetrics.kernels.iou import box_iou, box_iou_paired, polygon_iou, polygon_iou_paired  # noqa: E402
from gpumetrics.detection.ocr_e2e import ocr_end_to_end  # noqa: E402
from gpumetrics.detection.zero_shot_f1 import zero_shot_detection_f1  # noqa: E402

# --- text: ROUGE (METRICS_SPEC §4)
from gpumetrics.text.rouge import rouge_score  # noqa: E402

# --- text: CIDEr-D / CIDEr (METRICS_SPEC §4)
from gpumetrics.text.cider import cider_score  # noqa: E402

# --- text: BLEU (METRICS_SPEC §4)
from gpumetrics.text.bleu import bleu_score  # noqa: E402

__all__ = [
    "bleu_score",
    "cider_score",
    "box_iou", "box_iou_paired", "polygon_iou", "polygon_iou_paired", "ocr_end_to_end", "zero_shot_detection_f1",
    "frechet_distance", "feature_statistics", "kernel_inception_distance", "clip_score",
    "token_f1",
    "exact_match",
    "string_accuracy",
    "rouge_score",
    "edit_distance", "char_error_rate", "word_error_rate", "normalized_edit_similarity",
    "binary_precision", "binary_recall", "binary_f1_score",
    "multiclass_precision", "multiclass_recall", "multiclass_f1_score",
    "multilabel_precision", "multilabel_recall", "multilabel_f1_score",
]
