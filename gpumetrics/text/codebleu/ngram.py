"""The n-gram parts of CodeBLEU — BLEU and the keyword-weighted n-gram match — as additive per-sample statistics.

Everything is counted on the shared n-gram scheme of :mod:`gpumetrics.kernels.ngrams`: the tokens of every
hypothesis and reference of a batch in one :class:`~gpumetrics.kernels.ngrams.TokenBatch`, unigram ids grouped by
sample, one :class:`~gpumetrics.kernels.ngrams.NgramLadder` climbed order by order (no loop over samples).

Statistics per sample (``float64``, all exact integers, so sums are exact in any order and under DDP):

* BLEU (codebleu's ``bleu.corpus_bleu``, NLTK's): clipped matches ``Σ_g min(c_hyp(g), max_r c_r(g))`` and
  denominators ``max(1, hypothesis n-grams)`` per order, hypothesis length, closest reference length (ties to the
  shorter);
* weighted n-gram match as codebleu 0.7 computes it (``weighted_ngram_match.modified_recall``) — a *recall* summed
  over the references: numerator ``Σ_r Σ_{g ∈ r} min(c_r(g), c_hyp(g))``, denominator ``Σ_r max(1, n-grams of r)``;
  for unigrams both weighted by the token's weight (keyword 1, other 0.2), the denominator being
  ``Σ_r max(1, Σ_{t ∈ r} w(t))``. Unigram weights are kept in fifths (keyword 5, other 1) so they stay integers;
* weighted unigram *precision* of the paper (Ren et al. 2020, eq. 2 with N = 1): ``Σ_g w(g) min(c_hyp(g),
  max_r c_r(g))`` over ``Σ_{t ∈ hyp} w(t)``, in fifths too.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.kernels.ngrams import NgramLadder, ngram_totals
from gpumetrics.kernels.ragged import segment_ids, segment_starts
from gpumetrics.text.tokenize.base import encode_token_lists

ORDER = 4
KEYWORD_FIFTHS, OTHER_FIFTHS = 5, 1  # weights 1 and 0.2, in fifths

#: columns of :func:`ngram_statistics`
BLEU_MATCHES = slice(0, 4)
BLEU_TOTALS = slice(4, 8)
HYP_LEN, REF_LEN = 8, 9
RECALL_MATCHES = slice(10, 14)  # order 1 in fifths
RECALL_TOTALS = slice(14, 18)  # order 1 in fifths
PRECISION_MATCHES, PRECISION_TOTAL = 18, 19  # weighted unigram precision, in fifths
COLUMNS = 20


def ngram_statistics(
    hypotheses: Sequence[Sequence[str]],
    references: Sequence[Sequence[Sequence[str]]],
    keywords: frozenset[str],
    device: torch.device,
) -> Tensor:
    """Per-sample n-gram statistics of ``B`` tokenised hypotheses against their tokenised references.

    Args:
        hypotheses: ``B`` token lists.
        references: ``B`` lists (at least one each) of token lists.
        keywords: tokens of weight 1 (all others 0.2).
        device: where to count.

    Returns:
        ``DoubleTensor[B, COLUMNS]`` (column layout: the module constants).

    Example:
        >>> stats = ngram_statistics([["return", "a", "+", "b"]], [[["return", "b", "+", "a"]]],
        ...                          frozenset({"return"}), torch.device("cpu"))
        >>> stats[0, BLEU_MATCHES].tolist(), stats[0, RECALL_MATCHES].tolist(), stats[0, RECALL_TOTALS].tolist()
        ([4.0, 0.0, 0.0, 0.0], [8.0, 0.0, 0.0, 0.0], [8.0, 3.0, 2.0, 1.0])
    """
    size = len(hypotheses)
    out = torch.zeros(size, COLUMNS, dtype=torch.float64, device=device)
    if size == 0:
        return out
    lines: list[Sequence[str]] = []
    refs_per_sample = []
    for hyp, refs in zip(hypotheses, references):
        lines.append(hyp)
        lines.extend(refs)
        refs_per_sample.append(len(refs))
    host = encode_token_lists(lines)
    fifths = np.fromiter((KEYWORD_FIFTHS if token in keywords else OTHER_FIFTHS for token in host.vocabulary),
                         dtype=np.int64, count=host.vocab_size)
    batch = host.to(device)
    token_fifths = torch.as_tensor(fifths, device=device)[batch.ids] if batch.ids.numel() else batch.ids
    per_sample = torch.tensor(refs_per_sample, dtype=torch.long, device=device) + 1
    segments = len(lines)
    sample = segment_ids(per_sample, segments)
    starts = segment_starts(per_sample)
    is_hyp = torch.zeros(segments, dtype=torch.bool, device=device)
    is_hyp[starts] = True
    lengths = batch.lengths

    # BLEU
    hyp_len = lengths[starts]
    out[:, BLEU_TOTALS] = ngram_totals(hyp_len, ORDER).clamp_min(1).double()
    out[:, HYP_LEN] = hyp_len.double()
    ref_len, ref_sample = lengths[~is_hyp], sample[~is_hyp]
    span = int(lengths.max()) + 1
    key = (ref_len - hyp_len[ref_sample]).abs() * span + ref_len
    closest = torch.full((size,), torch.iinfo(torch.long).max, dtype=torch.long, device=device)
    out[:, REF_LEN] = (closest.scatter_reduce(0, ref_sample, key, reduce="amin") % span).double()

    # denominators that need no matching: reference n-grams (order 1 weighted) and weighted hypothesis unigrams
    token_segment = segment_ids(lengths, batch.ids.numel())
    segment_fifths = torch.zeros(segments, dtype=torch.long, device=device).index_add_(0, token_segment, token_fifths)
    ref_totals = ngram_totals(ref_len, ORDER).clamp_min(1)
    ref_totals[:, 0] = segment_fifths[~is_hyp].clamp_min(KEYWORD_FIFTHS)  # max(1, Σ w) in fifths
    out[:, RECALL_TOTALS] = torch.zeros(size, ORDER, dtype=torch.long, device=device).index_add_(
        0, ref_sample, ref_totals).double()
    out[:, PRECISION_TOTAL] = segment_fifths[starts].double()

    clipped, recall, precision = _clipped_matches(batch, token_segment, sample, is_hyp, token_fifths, size)
    out[:, BLEU_MATCHES] = clipped.double()
    out[:, RECALL_MATCHES] = recall.double()
    out[:, PRECISION_MATCHES] = precision.double()
    return out


def _clipped_matches(
    batch, token_segment: Tensor, sample: Tensor, is_hyp: Tensor, token_fifths: Tensor, size: int
) -> tuple[Tensor, Tensor, Tensor]:
    """``(bleu LongTensor[B, 4], recall LongTensor[B, 4], precision LongTensor[B])`` from one climb of the ladder:
    BLEU's clipped matches ``Σ_g min(c_hyp(g), max_r c_r(g))`` (what
    :func:`~gpumetrics.kernels.ngrams.clipped_ngram_matches` counts), codebleu's per-reference clipped counts summed
    over references (order 1 weighted), and the paper's weighted clipped unigram matches (max over references).

    Orders climb as in :func:`~gpumetrics.kernels.ngrams.clipped_ngram_matches`: an n-gram can count only if it
    occurs in the hypothesis and in some reference of its sample, so order n+1 extends only occurrences whose
    n-grams at p and p+1 do (an (n+1)-gram that can count keeps every occurrence, hence exact counts)."""
    device = batch.ids.device
    bleu = torch.zeros(ORDER, size, dtype=torch.long, device=device)
    recall = torch.zeros(ORDER, size, dtype=torch.long, device=device)
    precision = torch.zeros(size, dtype=torch.long, device=device)
    total = batch.ids.numel()
    if total == 0:
        return bleu.t().contiguous(), recall.t().contiguous(), precision
    segments = batch.lengths.numel()
    ladder = NgramLadder(batch)
    token_hyp = is_hyp[token_segment]
    present = torch.zeros(total + 1, dtype=torch.bool, device=device)
    level = ladder.unigrams(group=sample[token_segment])
    for n in range(1, ORDER + 1):
        grams = level.distinct
        occurrence_segment = token_segment[level.position]
        hyp = token_hyp[level.position]
        hyp_count = torch.bincount(level.gram[hyp], minlength=grams)
        ref = ~hyp
        pair = level.gram[ref] * segments + occurrence_segment[ref]
        pairs, pair_count = torch.unique(pair, return_counts=True)
        pair_gram = torch.div(pairs, segments, rounding_mode="floor")
        clipped = torch.minimum(pair_count, hyp_count[pair_gram])
        ref_max = torch.zeros(grams, dtype=torch.long, device=device).scatter_reduce_(
            0, pair_gram, pair_count, reduce="amax")
        matched = torch.minimum(hyp_count, ref_max)
        bleu[n - 1].index_add_(0, level.group, matched)
        if n == 1:
            gram_fifths = torch.zeros(grams, dtype=torch.long, device=device).scatter_(
                0, level.gram, token_fifths[level.position])
            clipped = clipped * gram_fifths[pair_gram]
            precision.index_add_(0, level.group, matched * gram_fifths)
        recall[n - 1].index_add_(0, sample[pairs % segments], clipped)
        if n == ORDER:
            break
        hit = (matched > 0)[level.gram]
        present.zero_()
        present[level.position] = hit
        level = ladder.extend(level, hit & present[level.position + 1])
        if level.position.numel() == 0:
            break
    return bleu.t().contiguous(), recall.t().contiguous(), precision
