"""Shapley attribution of corpus BLEU / CIDEr-D to its segments vs the same permutations scored with sacrebleu /
pycocoevalcap, one call per coalition.

Both sides walk the same seeded permutations of the segments (``gpumetrics.attribution.shapley._permutations``) and
evaluate v(prefix) = corpus BLEU of the first t segments for t = 0..B. gpumetrics counts each segment's statistics once
and scores all M·(B+1) coalitions in batches with one matrix product; the anchor calls sacrebleu's ``corpus_score`` on
every prefix (tokenisation included, as a user without a batched value function would).
"""

from __future__ import annotations

import logging
import math

from sacrebleu.metrics.bleu import BLEU

from benchmarks.cases.bleu import mt_corpus
from benchmarks.cases.cider import _captions
from benchmarks.registry import Contenders, register
from gpumetrics.attribution.shapley import _permutations
from gpumetrics.functional import corpus_bleu_shapley, corpus_cider_shapley

logging.getLogger("sacrebleu").setLevel(logging.ERROR)
PERMUTATIONS, SEED = 10, 0


def _sacrebleu_permutation_shapley(preds: list[str], refs: list[str]) -> list[float]:
    bleu = BLEU(tokenize="13a")
    n = len(preds)
    total = [0.0] * n
    for order in _permutations(n, PERMUTATIONS, SEED).tolist():
        previous = 0.0
        for t, segment in enumerate(order):
            members = order[: t + 1]
            current = bleu.corpus_score([preds[i] for i in members], [[refs[i] for i in members]]).score / 100
            total[segment] += current - previous
            previous = current
    return [value / PERMUTATIONS for value in total]


@register("shapley_corpus_bleu", sizes=(200,), quick_sizes=(20,), unit="segments", repeats=3,
          params={"permutations": PERMUTATIONS})
def shapley_bleu_case(size: int, device: str) -> Contenders:
    preds, refs = mt_corpus(size, size)
    target = [[ref] for ref in refs]

    def ours() -> list[float]:
        return corpus_bleu_shapley(preds, target, num_permutations=PERMUTATIONS, seed=SEED, device=device
                                   ).values.tolist()

    return Contenders(
        ours={f"corpus_bleu_shapley(sampling, M={PERMUTATIONS})": ours},
        anchors={f"sacrebleu corpus_score per prefix (M={PERMUTATIONS})": lambda: _sacrebleu_permutation_shapley(
            preds, refs)},
        check=lambda a, b: len(a) == len(b) and all(math.isclose(x, y, abs_tol=1e-9) for x, y in zip(a, b)),
        note=f"WMT-like segments, 1 reference, {PERMUTATIONS} permutations × (B + 1) coalitions on both sides",
    )




def _pycocoevalcap_permutation_shapley(preds: list[str], target: list[list[str]]) -> list[float]:
    from pycocoevalcap.cider.cider import Cider

    n = len(preds)
    total = [0.0] * n
    for order in _permutations(n, PERMUTATIONS, SEED).tolist():
        previous = 0.0
        for t, segment in enumerate(order):
            members = order[: t + 1]
            gts, res = {i: target[i] for i in members}, {i: [preds[i]] for i in members}
            current = float(Cider().compute_score(gts, res)[0])
            total[segment] += current - previous
            previous = current
    return [value / PERMUTATIONS for value in total]


@register("shapley_corpus_cider", sizes=(200,), quick_sizes=(20,), unit="segments", repeats=3,
          params={"permutations": PERMUTATIONS})
def shapley_cider_case(size: int, device: str) -> Contenders:
    preds, target = _captions(size, punctuated=False)

    def ours() -> list[float]:
        return corpus_cider_shapley(preds, target, num_permutations=PERMUTATIONS, seed=SEED, tokenize="none",
                                    device=device).values.tolist()

    return Contenders(
        ours={f"corpus_cider_shapley(sampling, M={PERMUTATIONS})": ours},
        anchors={f"pycocoevalcap Cider per prefix (M={PERMUTATIONS})": lambda: _pycocoevalcap_permutation_shapley(
            preds, target)},
        check=lambda a, b: len(a) == len(b) and all(math.isclose(x, y, abs_tol=1e-9) for x, y in zip(a, b)),
        note=f"COCO-like captions, 5 references, pre-tokenised; IDF over each coalition's references on both sides; "
             f"{PERMUTATIONS} permutations × (B + 1) coalitions",
    )
