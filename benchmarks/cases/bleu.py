"""Corpus BLEU vs sacrebleu and torchmetrics' SacreBLEUScore, tokenisation included on every side."""

from __future__ import annotations

import logging
import random

from sacrebleu.metrics.bleu import BLEU
from torchmetrics.functional.text import sacre_bleu_score

from benchmarks.registry import Contenders, register
from gpumetrics.functional import bleu_score

logging.getLogger("sacrebleu").setLevel(logging.ERROR)


def mt_corpus(seed: int, size: int) -> tuple[list[str], list[str]]:
    """WMT-like detokenised sentences of 5–40 words (Zipf vocabulary of 20k words, capitals, punctuation, numbers);
    the hypothesis keeps a random prefix of its reference and continues with other words."""
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 9))) for _ in range(20_000)]
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    glued = [",", ".", "!", "?", "'s", ":", ";"]
    spaced = ['"', "(", ")", "-", "1,000", "3.5", "2024", "$5", "—"]

    def sentence() -> list[str]:
        words = []
        for word in rng.choices(vocab, weights, k=rng.randint(5, 40)):
            word = word.capitalize() if rng.random() < 0.1 else word
            if rng.random() < 0.08:
                word += rng.choice(glued)
            words.append(word)
            if rng.random() < 0.04:
                words.append(rng.choice(spaced))
        return words

    preds, refs = [], []
    for _ in range(size):
        ref, other = sentence(), sentence()
        cut = rng.randint(0, len(ref))
        refs.append(" ".join(ref) + ".")
        preds.append(" ".join(ref[:cut] + other[: max(0, len(other) - cut)]) + ".")
    return preds, refs



def _sacrebleu(preds: list[str], refs: list[str]) -> float:
    return BLEU(tokenize="13a").corpus_score(preds, [refs]).score / 100


@register("bleu_corpus", sizes=(5_000, 50_000), quick_sizes=(1_000,), repeats=3)
def bleu_corpus_case(size: int, device: str) -> Contenders:
    preds, refs = mt_corpus(size, size)
    target = [[ref] for ref in refs]
    return Contenders(
        ours={"bleu_score(mode=sacrebleu, 13a)": (lambda: float(bleu_score(preds, target, device=device)))},
        anchors={"sacrebleu 2.6 corpus_bleu (13a)": lambda: _sacrebleu(preds, refs)},
        check=lambda ours, anchor: abs(ours - anchor) <= 1e-9,
        note="WMT-like sentences, 1 reference, 13a tokenisation included on both sides",
    )


@register("bleu_corpus_torchmetrics", sizes=(5_000,), quick_sizes=(1_000,), repeats=3)
def bleu_torchmetrics_case(size: int, device: str) -> Contenders:
    preds, refs = mt_corpus(size, size)
    target = [[ref] for ref in refs]
    return Contenders(
        ours={"bleu_score(mode=sacrebleu, 13a)": (lambda: float(bleu_score(preds, target, device=device)))},
        anchors={"torchmetrics sacre_bleu_score (13a)": lambda: float(sacre_bleu_score(preds, target, tokenize="13a"))},
        check=lambda ours, anchor: abs(ours - anchor) <= 1e-6,  # torchmetrics sums its counts in float32
        note="same data as bleu_corpus; torchmetrics re-implements sacrebleu in Python + tensors",
    )
