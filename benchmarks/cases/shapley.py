"""Shapley attribution of corpus BLEU to its segments vs the same permutations scored with sacrebleu, one call each.

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
from benchmarks.registry import Contenders, register
from gpumetrics.attribution.shapley import _permutations
from gpumetrics.functional import corpus_bleu_shapley

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


