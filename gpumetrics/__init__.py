"""gpumetrics: evaluation metrics that accumulate on the device of their inputs, with reference-tool parity.

Modules (``gpumetrics.TokenF1``…) are exported here; pure functions live in ``gpumetrics.functional``.
"""

from gpumetrics.core import Metric
from gpumetrics.core.signature import library_version

# --- text: question answering and strings; edit distance, CER, WER, 1 − NED (docs/metrics/edit.md)
from gpumetrics.text.qa import ExactMatch, StringAccuracy, TokenF1, VQAAccuracy
from gpumetrics.text.edit import CharErrorRate, EditDistance, NormalizedEditSimilarity, WordErrorRate

# --- image generation: FID, KID, CLIP score (docs/metrics/image.md)
from gpumetrics.image.fid import FrechetInceptionDistance
from gpumetrics.image.inception import FIDInceptionV3
from gpumetrics.image.kid import KernelInceptionDistance
from gpumetrics.image.clip_score import CLIPScore

# --- text: BLEU, ROUGE, CIDEr-D / CIDEr, METEOR, CodeBLEU, the COCO caption table (docs/metrics/coco.md)
from gpumetrics.text.bleu import BLEUScore
from gpumetrics.text.rouge import ROUGEScore
from gpumetrics.text.cider import CIDErScore
from gpumetrics.text.meteor import METEORScore
from gpumetrics.text.codebleu import CodeBLEUScore
from gpumetrics.text.coco import COCOCaptionScores
from gpumetrics.text.wmd import WordMoversDistance

# --- detection and OCR: OCR end-to-end, zero-shot detection F1 (docs/metrics/detection.md)
from gpumetrics.detection.ocr_e2e import OCREndToEnd
from gpumetrics.detection.zero_shot_f1 import ZeroShotDetectionF1

# --- classification: torchmetrics' precision / recall / F1 with our reducer + signatures (docs/metrics/classification.md)
from gpumetrics.classification import (
    BinaryF1Score, BinaryPrecision, BinaryRecall,
    MulticlassF1Score, MulticlassPrecision, MulticlassRecall,
    MultilabelF1Score, MultilabelPrecision, MultilabelRecall,
)

# --- retrieval: ranking metrics with trec_eval / ranx conventions (docs/metrics/ranking.md)
from gpumetrics.retrieval import RankingMetrics

__version__ = library_version()

__all__ = [
    "Metric",
    "TokenF1", "ExactMatch", "StringAccuracy", "VQAAccuracy",
    "EditDistance", "CharErrorRate", "WordErrorRate", "NormalizedEditSimilarity",
    "FrechetInceptionDistance", "FIDInceptionV3", "KernelInceptionDistance", "CLIPScore",
    "BLEUScore", "ROUGEScore", "CIDErScore", "METEORScore", "CodeBLEUScore", "WordMoversDistance",
    "COCOCaptionScores",
    "OCREndToEnd", "ZeroShotDetectionF1",
    "BinaryPrecision", "BinaryRecall", "BinaryF1Score",
    "MulticlassPrecision", "MulticlassRecall", "MulticlassF1Score",
    "MultilabelPrecision", "MultilabelRecall", "MultilabelF1Score",
    "RankingMetrics",
]
