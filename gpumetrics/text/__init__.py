"""Text metrics, one file per family: qa.py, edit.py, bleu.py, rouge.py, cider.py, wmd.py, meteor/ and codebleu/
(packages: one room per job or reference convention), and coco.py (the COCOEvalCap table from the BLEU, METEOR,
ROUGE, CIDEr rooms).

Their tokenizers are objects in the :mod:`gpumetrics.text.tokenize` package, one module per reference family
(sacrebleu, rouge-score, PTB, METEOR 1.5's ``-norm``, SQuAD / AIJ answer normalisers), chosen once by name with
``get_tokenizer``; each turns lines into a ``TokenBatch`` of dense ids with ``encode`` and states its part of the
metric signature.

Names resolve lazily (PEP 562): the first use of a name imports its module only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpumetrics.core.lazy import lazy_exports

_EXPORTS = {
    "TokenF1": "gpumetrics.text.qa",
    "ExactMatch": "gpumetrics.text.qa",
    "StringAccuracy": "gpumetrics.text.qa",
    "VQAAccuracy": "gpumetrics.text.qa",
    "EditDistance": "gpumetrics.text.edit",
    "CharErrorRate": "gpumetrics.text.edit",
    "WordErrorRate": "gpumetrics.text.edit",
    "NormalizedEditSimilarity": "gpumetrics.text.edit",
    "BLEUScore": "gpumetrics.text.bleu",
    "ROUGEScore": "gpumetrics.text.rouge",
    "CIDErScore": "gpumetrics.text.cider",
    "METEORScore": "gpumetrics.text.meteor",
    "CodeBLEUScore": "gpumetrics.text.codebleu",
    "COCOCaptionScores": "gpumetrics.text.coco",
    "WordMoversDistance": "gpumetrics.text.wmd",
}

__all__ = [
    "TokenF1", "ExactMatch", "StringAccuracy", "VQAAccuracy", "EditDistance", "CharErrorRate", "WordErrorRate",
    "NormalizedEditSimilarity", "BLEUScore", "ROUGEScore", "CIDErScore", "METEORScore", "CodeBLEUScore",
    "COCOCaptionScores", "WordMoversDistance",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static type checkers and IDEs see the names; nothing is imported at run time
    from gpumetrics.text.qa import TokenF1, ExactMatch, StringAccuracy, VQAAccuracy
    from gpumetrics.text.edit import EditDistance, CharErrorRate, WordErrorRate, NormalizedEditSimilarity
    from gpumetrics.text.bleu import BLEUScore
    from gpumetrics.text.rouge import ROUGEScore
    from gpumetrics.text.cider import CIDErScore
    from gpumetrics.text.meteor import METEORScore
    from gpumetrics.text.codebleu import CodeBLEUScore
    from gpumetrics.text.coco import COCOCaptionScores
    from gpumetrics.text.wmd import WordMoversDistance
