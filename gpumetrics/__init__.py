"""gpumetrics: evaluation metrics that accumulate on the device of their inputs, with reference-tool parity.

Modules (``gpumetrics.TokenF1``…) are exported here; pure functions live in ``gpumetrics.functional``.
"""

from gpumetrics.core import Metric
from gpumetrics.core.signature import library_version

# --- text: question answering and strings (METRICS_SPEC §1)
from gpumetrics.text.qa import ExactMatch, StringAccuracy, TokenF1

# --- classification: torchmetrics' precision / recall / F1 with our reducer + signatures (METRICS_SPEC §6)
from gpumetrics.classification import (  # noqa: E402
    BinaryF1Score, BinaryPrecision, BinaryRecall,
    MulticlassF1Score, MulticlassPrecision, MulticlassRecall,
    MultilabelF1Score, MultilabelPrecision, MultilabelRecall,
)

# --- text: edit distance, CER, WER, 1 − NED (METRICS_SPEC §1)
from gpumetrics.text.edit import CharErrorRate, EditDistance, NormalizedEditSimilarity, WordErrorRate  # noqa: E402

# --- image generation: FID (METRICS_SPEC §2)
from gpumetrics.image.fid import FrechetInceptionDistance  # noqa: E402
from gpumetrics.image.inception import FIDInceptionV3  # noqa: E402
from gpumetrics.image.kid import KernelInceptionDistance  # noqa: E402
from gpumetrics.image.clip_score import CLIPScore  # noqa: E402

# --- detection and OCR: OCR end-to-end, zero-shot detection F1 (METRICS_SPEC §5)
from gpumetrics.detection.ocr_e2e import OCREndToEnd  # noqa: E402
from gpumetrics.detection.zero_shot_f1 import ZeroShotDetectionF1  # noqa: E402

# --- text: ROUGE (METRICS_SPEC §4)
from gpumetrics.text.rouge import ROUGEScore  # noqa: E402

# --- text: CIDEr-D / CIDEr (METRICS_SPEC §4)
from gpumetrics.text.cider import CIDErScore  # noqa: E402

# --- text: BLEU (METRICS_SPEC §4)
from gpumetrics.text.bleu import BLEUScore  # noqa: E402

__version__ = library_version()

__all__ = [
    "BLEUScore",
    "CIDErScore",
    "OCREndToEnd", "ZeroShotDetectionF1",
    "FrechetInceptionDistance", "FIDInceptionV3", "KernelInceptionDistance", "CLIPScore",
    "Metric",
    "TokenF1",
    "ExactMatch",
    "StringAccuracy",
    "ROUGEScore",
    "EditDistance", "CharErrorRate", "WordErrorRate", "NormalizedEditSimilarity",
    "BinaryPrecision", "BinaryRecall", "BinaryF1Score",
    "MulticlassPrecision", "MulticlassRecall", "MulticlassF1Score",
    "MultilabelPrecision", "MultilabelRecall", "MultilabelF1Score",
]
