"""Independent, deliberately plain implementations of the QA formulas used as test oracles.

The SQuAD v2.0 official evaluation script is not packaged on PyPI; this is a direct transcription of its formula
(``normalize_answer``, ``compute_f1`` with ``collections.Counter``, ``compute_exact``, dropping gold answers that
normalise to nothing) written for the tests — it shares no code with gpumetrics. The AIJ-2022 oracle follows
docs/metrics/qa.md with pymorphy called directly (lemmas through the number-word table, the choice letter searched
in the raw prediction).
"""

from __future__ import annotations

import collections
import re
import string

_morph = None


def squad_normalize(text: str) -> str:
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text, flags=re.UNICODE)
    return " ".join(text.split())


def _f1_of_tokens(pred_tokens: list[str], gold_tokens: list[str]) -> float:
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    common = collections.Counter(pred_tokens) & collections.Counter(gold_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(pred_tokens)
    recall = overlap / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def _squad_golds(golds: list[str]) -> list[str]:
    kept = [g for g in golds if squad_normalize(g)]
    return kept or [""]


def _as_lists(target):
    return [[t] if isinstance(t, str) else list(t) for t in target]


def squad_f1(preds, target) -> float:
    scores = [
        max(_f1_of_tokens(squad_normalize(p).split(), squad_normalize(g).split()) for g in _squad_golds(golds))
        for p, golds in zip(preds, _as_lists(target))
    ]
    return sum(scores) / len(scores) if scores else 0.0


def squad_exact(preds, target) -> float:
    scores = [
        max(float(squad_normalize(p) == squad_normalize(g)) for g in _squad_golds(golds))
        for p, golds in zip(preds, _as_lists(target))
    ]
    return sum(scores) / len(scores) if scores else 0.0


def raw_accuracy(preds, target) -> float:
    scores = [float(any(p == g for g in golds)) for p, golds in zip(preds, _as_lists(target))]
    return sum(scores) / len(scores) if scores else 0.0


def _lemmas(text: str, keep_hyphen: bool) -> list[str]:
    global _morph
    if _morph is None:
        # the library's loader of the scripts' dictionary; its lemmas are compared with pymorphy2 itself in
        # tests/text/test_russian_lemmas.py, this reference checks the formula around them (uncached parses)
        from gpumetrics.text.tokenize.russian_lemmas import organisers_morph_analyzer

        _morph = organisers_morph_analyzer()
    drop = set(string.punctuation) - ({"-"} if keep_hyphen else set())
    cleaned = "".join(ch for ch in text.lower() if ch not in drop)
    lemmas = [_morph.parse(word)[0].normal_form if _utf8_encodable(word) else word for word in cleaned.split()]
    return [_NUMBER_WORDS.get(lemma, lemma) for lemma in lemmas]


#: the organisers' manualMap_ru (AIJ-2022 calculate_f1.py / calculate_exact_score.py)
_NUMBER_WORDS = {"ноль": "0", "нисколько": "0", "никакой": "0", "один": "1", "два": "2", "три": "3", "четыре": "4",
                 "пять": "5", "шесть": "6", "семь": "7", "восемь": "8", "девять": "9", "десять": "10"}


def _utf8_encodable(word: str) -> bool:
    """pymorphy3's dictionary keys are UTF-8: a word with a lone surrogate has no entry and is kept as written."""
    try:
        word.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _first_letter(text: str):
    for ch in text:  # re.search('[abcde]', prediction) on the raw prediction
        if ch in "abcde":
            return ch
    return None


def aij2022_f1(preds, target) -> float:
    scores = []
    for pred, golds in zip(preds, _as_lists(target)):
        gold_lemmas = [_lemmas(g, False) for g in golds]
        best = max(_f1_of_tokens(_lemmas(pred, False), g) for g in gold_lemmas)
        letter = _first_letter(pred)
        if best <= 0.5 and letter is not None:
            best = max(_f1_of_tokens(_lemmas(letter, False), g) for g in gold_lemmas)
        scores.append(best)
    return sum(scores) / len(scores) if scores else 0.0


def aij2022_exact(preds, target) -> float:
    scores = []
    for pred, golds in zip(preds, _as_lists(target)):
        gold_lemmas = [_lemmas(g, True) for g in golds]
        best = max(float(_lemmas(pred, True) == g) for g in gold_lemmas)
        letter = _first_letter(pred)
        if best == 0 and letter is not None:
            best = max(float(_lemmas(letter, True) == g) for g in gold_lemmas)
        scores.append(best)
    return sum(scores) / len(scores) if scores else 0.0
