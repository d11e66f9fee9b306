"""Text metrics, one file per family: qa.py, edit.py, bleu.py, rouge.py, cider.py, meteor/ and codebleu/ (packages:
one room per job or reference convention), and coco.py (the COCOEvalCap table from the BLEU, METEOR, ROUGE, CIDEr rooms).

Their tokenizers are objects in the :mod:`gpumetrics.text.tokenize` package, one module per reference family
(sacrebleu, rouge-score, PTB, SQuAD / AIJ answer normalisers), chosen once by name with ``get_tokenizer``; each turns
lines into a ``TokenBatch`` of dense ids with ``encode`` and states its part of the metric signature.
"""

from gpumetrics.text.bleu import BLEUScore
from gpumetrics.text.cider import CIDErScore
from gpumetrics.text.coco import COCOCaptionScores
from gpumetrics.text.codebleu import CodeBLEUScore
from gpumetrics.text.meteor import METEORScore
from gpumetrics.text.edit import CharErrorRate, EditDistance, NormalizedEditSimilarity, WordErrorRate
from gpumetrics.text.qa import ExactMatch, StringAccuracy, TokenF1, VQAAccuracy
from gpumetrics.text.rouge import ROUGEScore

__all__ = [
    "TokenF1", "ExactMatch", "StringAccuracy", "VQAAccuracy",
    "EditDistance", "CharErrorRate", "WordErrorRate", "NormalizedEditSimilarity",
    "BLEUScore", "ROUGEScore", "CIDErScore", "METEORScore", "CodeBLEUScore", "COCOCaptionScores",
]
