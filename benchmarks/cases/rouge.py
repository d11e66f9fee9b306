"""ROUGE-1/2/L (and Lsum) vs google-research rouge-score and torchmetrics' ROUGEScore, same data, same process."""

from __future__ import annotations

import random


from rouge_score import rouge_scorer
from torchmetrics.functional.text import rouge_score as torchmetrics_rouge_score

from benchmarks.registry import Contenders, register
from gpumetrics.functional import rouge_score

KEYS = ("rouge1", "rouge2", "rougeL")


def summary_pairs(seed: int, size: int) -> tuple[list[str], list[str]]:
    """News-summary-like pairs: 1–3 sentences of 6–22 words (Zipf vocabulary, capitals, numbers, punctuation),
    the prediction a perturbed copy of its reference; sentences on separate lines (for ROUGE-Lsum)."""
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 10))) for _ in range(3000)]
    vocab += [str(n) for n in range(100)]
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]

    def sentence() -> list[str]:
        words = rng.choices(vocab, weights, k=rng.randint(6, 22))
        words[0] = words[0].capitalize()
        return words

    preds, refs = [], []
    for _ in range(size):
        ref = [sentence() for _ in range(rng.randint(1, 3))]
        pred = [[w for w in s if rng.random() < 0.8] + rng.choices(vocab, weights, k=rng.randint(0, 3)) for s in ref]
        refs.append("\n".join(" ".join(s) + rng.choice([".", ".", ",", "!"]) for s in ref))
        preds.append("\n".join(" ".join(s) + "." for s in pred))
    return preds, refs


def _means(scores: dict, keys) -> list[float]:
    return [float(scores[f"{k}_{s}"]) for k in keys for s in ("precision", "recall", "fmeasure")]


def _rouge_score_means(preds: list[str], refs: list[str], keys) -> list[float]:
    scorer = rouge_scorer.RougeScorer(list(keys))
    totals = [0.0] * (3 * len(keys))
    for pred, ref in zip(preds, refs):
        scores = scorer.score(ref, pred)
        for i, key in enumerate(keys):
            totals[3 * i] += scores[key].precision
            totals[3 * i + 1] += scores[key].recall
            totals[3 * i + 2] += scores[key].fmeasure
    return [t / len(preds) for t in totals]



def _same(ours: list[float], anchor: list[float]) -> bool:
    return all(abs(a - b) <= 1e-9 for a, b in zip(ours, anchor))


@register("rouge_1_2_L", sizes=(2_000, 20_000), quick_sizes=(500,), repeats=3)
def rouge_case(size: int, device: str) -> Contenders:
    preds, refs = summary_pairs(size, size)
    return Contenders(
        ours={
            "rouge_score(rouge1, rouge2, rougeL)": (lambda: _means(rouge_score(preds, refs, rouge_keys=KEYS, device=device), KEYS)
            )
        },
        anchors={
            "rouge-score 0.1.2 RougeScorer.score": lambda: _rouge_score_means(preds, refs, KEYS),
            "torchmetrics rouge_score": lambda: _means(torchmetrics_rouge_score(preds, refs, rouge_keys=KEYS), KEYS),
        },
        check=_same,
        note="summary-like pairs, 1 reference, tokenisation included on every side",
    )


@register("rouge_Lsum", sizes=(2_000,), quick_sizes=(500,), repeats=3)
def rouge_lsum_case(size: int, device: str) -> Contenders:
    preds, refs = summary_pairs(size + 1, size)
    keys = ("rougeLsum",)
    return Contenders(
        ours={"rouge_score(rougeLsum)": (lambda: _means(rouge_score(preds, refs, rouge_keys=keys, device=device), keys))},
        anchors={"rouge-score 0.1.2 RougeScorer.score": lambda: _rouge_score_means(preds, refs, keys)},
        check=_same,
        note="sentences on separate lines (rouge-score split_summaries=False); torchmetrics needs nltk punkt, not timed",
    )
