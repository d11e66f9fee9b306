"""gpumetrics: evaluation metrics that accumulate on the device of their inputs, with reference-tool parity.

Modules (``gpumetrics.TokenF1``…) are exported here; pure functions live in ``gpumetrics.functional``.

Names resolve lazily (PEP 562): ``import gpumetrics`` imports neither torchmetrics nor any metric; the first use of
a name imports its module and only that module's backends (``gpumetrics.BLEUScore`` does not import
``transformers``, ``open_clip`` or ``scipy``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpumetrics.core.lazy import lazy_exports

_EXPORTS = {
    "Metric": "gpumetrics.core.metric",
    # --- text: question answering and strings (docs/metrics/qa.md); edit distance, CER, WER, 1 − NED (edit.md)
    **dict.fromkeys(["TokenF1", "ExactMatch", "StringAccuracy", "VQAAccuracy"], "gpumetrics.text.qa"),
    **dict.fromkeys(["EditDistance", "CharErrorRate", "WordErrorRate", "NormalizedEditSimilarity"],
                    "gpumetrics.text.edit"),
    # --- image generation: FID, KID, CLIP score (docs/metrics/image.md)
    "FrechetInceptionDistance": "gpumetrics.image.fid",
    "FIDInceptionV3": "gpumetrics.image.inception",
    "KernelInceptionDistance": "gpumetrics.image.kid",
    "CLIPScore": "gpumetrics.image.clip_score",
    # --- text: BLEU, ROUGE, CIDEr-D / CIDEr (docs/metrics/ngram.md), METEOR, CodeBLEU, WMD, the COCO caption table
    "BLEUScore": "gpumetrics.text.bleu",
    "ROUGEScore": "gpumetrics.text.rouge",
    "CIDErScore": "gpumetrics.text.cider",
    "METEORScore": "gpumetrics.text.meteor",
    "CodeBLEUScore": "gpumetrics.text.codebleu",
    "COCOCaptionScores": "gpumetrics.text.coco",
    "WordMoversDistance": "gpumetrics.text.wmd",
    # --- detection and OCR: OCR end-to-end, zero-shot detection F1 (docs/metrics/detection.md)
    "OCREndToEnd": "gpumetrics.detection.ocr_e2e",
    "ZeroShotDetectionF1": "gpumetrics.detection.zero_shot_f1",
    # --- classification: precision / recall / F1 with torchmetrics' arguments and numbers, sklearn's averaging
    # (docs/metrics/classification.md)
    **dict.fromkeys(
        ["BinaryPrecision", "BinaryRecall", "BinaryF1Score", "MulticlassPrecision", "MulticlassRecall",
         "MulticlassF1Score", "MultilabelPrecision", "MultilabelRecall", "MultilabelF1Score"],
        "gpumetrics.classification.prf"),
    # --- retrieval: ranking metrics with trec_eval / ranx conventions (docs/metrics/ranking.md)
    "RankingMetrics": "gpumetrics.retrieval.ranking",
}

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

_export, __dir__ = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    if name == "__version__":  # read from the installed metadata on first use
        from gpumetrics.core.signature import library_version

        globals()["__version__"] = version = library_version()
        return version
    return _export(name)


if TYPE_CHECKING:  # static type checkers and IDEs see the names; nothing is imported at run time
    from gpumetrics.classification.prf import (
        BinaryF1Score, BinaryPrecision, BinaryRecall, MulticlassF1Score, MulticlassPrecision, MulticlassRecall,
        MultilabelF1Score, MultilabelPrecision, MultilabelRecall,
    )
    from gpumetrics.core.metric import Metric
    from gpumetrics.detection.ocr_e2e import OCREndToEnd
    from gpumetrics.detection.zero_shot_f1 import ZeroShotDetectionF1
    from gpumetrics.image.clip_score import CLIPScore
    from gpumetrics.image.fid import FrechetInceptionDistance
    from gpumetrics.image.inception import FIDInceptionV3
    from gpumetrics.image.kid import KernelInceptionDistance
    from gpumetrics.retrieval.ranking import RankingMetrics
    from gpumetrics.text.bleu import BLEUScore
    from gpumetrics.text.cider import CIDErScore
    from gpumetrics.text.coco import COCOCaptionScores
    from gpumetrics.text.codebleu import CodeBLEUScore
    from gpumetrics.text.edit import CharErrorRate, EditDistance, NormalizedEditSimilarity, WordErrorRate
    from gpumetrics.text.meteor import METEORScore
    from gpumetrics.text.qa import ExactMatch, StringAccuracy, TokenF1, VQAAccuracy
    from gpumetrics.text.rouge import ROUGEScore
    from gpumetrics.text.wmd import WordMoversDistance

    __version__: str
