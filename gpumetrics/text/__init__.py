"""Text metrics, one file per family: qa.py, edit.py, bleu.py, rouge.py, cider.py; tokenizers.py."""

from gpumetrics.text.bleu import BLEUScore
from gpumetrics.text.cider import CIDErScore
from gpumetrics.text.edit import CharErrorRate, EditDistance, NormalizedEditSimilarity, WordErrorRate
from gpumetrics.text.qa import ExactMatch, StringAccuracy, TokenF1
from gpumetrics.text.rouge import ROUGEScore

__all__ = [
    "TokenF1", "ExactMatch", "StringAccuracy",
    "EditDistance", "CharErrorRate", "WordErrorRate", "NormalizedEditSimilarity",
    "BLEUScore", "ROUGEScore", "CIDErScore",
]
