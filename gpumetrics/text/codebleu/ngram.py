"""The n-gram parts of CodeBLEU — BLEU and the keyword-weighted n-gram match — as additive per-sample statistics.

Everything is counted on the shared n-gram scheme of :mod:`gpumetrics.kernels.ngrams`: the tokens of every
hypothesis and reference of a batch in one :class:`~gpumetrics.kernels.ngrams.TokenBatch`, unigram ids grouped by
sample, one climb of :func:`~gpumetrics.kernels.ngrams.clip_levels` order by order (no loop over samples).

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

from gpumetrics.core.transfer import upload_all
from gpumetrics.kernels.ngrams import clip_levels, ngram_totals
from gpumetrics.kernels.ragged import segment_ids
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
    # the line layout on the host (sizes and the longest line without reading the device), then one copy
    host_ids, host_lengths = np.asarray(host.ids, dtype=np.int64), np.asarray(host.lengths, dtype=np.int64)
    per_sample = np.asarray(refs_per_sample, dtype=np.int64) + 1
    segments = len(lines)
    host_sample = np.repeat(np.arange(size, dtype=np.int64), per_sample)
    host_starts = np.cumsum(per_sample) - per_sample
    host_is_hyp = np.zeros(segments, dtype=bool)
    host_is_hyp[host_starts] = True
    ref_lines = np.flatnonzero(~host_is_hyp)
    span = int(host_lengths.max(initial=0)) + 1
    parts = (host_ids, fifths[host_ids], host_lengths, host_sample, host_is_hyp.astype(np.int64), host_starts,
             ref_lines)
    ids, token_fifths, lengths, sample, is_hyp, starts, ref_lines_t = upload_all(list(parts), device)  # one copy
    is_hyp = is_hyp.bool()
    batch = host._replace(ids=ids, lengths=lengths)

    # BLEU
    hyp_len = lengths.index_select(0, starts)
    out[:, BLEU_TOTALS] = ngram_totals(hyp_len, ORDER).clamp_min(1).double()
    out[:, HYP_LEN] = hyp_len.double()
    ref_len, ref_sample = lengths.index_select(0, ref_lines_t), sample.index_select(0, ref_lines_t)
    key = (ref_len - hyp_len.index_select(0, ref_sample)).abs() * span + ref_len
    closest = torch.full((size,), torch.iinfo(torch.long).max, dtype=torch.long, device=device)
    out[:, REF_LEN] = (closest.scatter_reduce(0, ref_sample, key, reduce="amin") % span).double()

    # denominators that need no matching: reference n-grams (order 1 weighted) and weighted hypothesis unigrams
    token_segment = segment_ids(lengths, ids.numel())
    segment_fifths = torch.zeros(segments, dtype=torch.long, device=device).index_add_(0, token_segment, token_fifths)
    ref_totals = ngram_totals(ref_len, ORDER).clamp_min(1)
    ref_totals[:, 0] = segment_fifths.index_select(0, ref_lines_t).clamp_min(KEYWORD_FIFTHS)  # max(1, Σ w) in fifths
    out[:, RECALL_TOTALS] = torch.zeros(size, ORDER, dtype=torch.long, device=device).index_add_(
        0, ref_sample, ref_totals).double()
    out[:, PRECISION_TOTAL] = segment_fifths.index_select(0, starts).double()

    clipped, recall, precision = _clipped_matches(batch, sample, is_hyp, token_fifths, size)
    out[:, BLEU_MATCHES] = clipped.double()
    out[:, RECALL_MATCHES] = recall.double()
    out[:, PRECISION_MATCHES] = precision.double()
    return out


def _clipped_matches(
    batch, sample: Tensor, is_hyp: Tensor, token_fifths: Tensor, size: int
) -> tuple[Tensor, Tensor, Tensor]:
    """``(bleu LongTensor[B, 4], recall LongTensor[B, 4], precision LongTensor[B])`` from one climb of
    :func:`~gpumetrics.kernels.ngrams.clip_levels`: BLEU's clipped matches ``Σ_g min(c_hyp(g), max_r c_r(g))`` (what
    :func:`~gpumetrics.kernels.ngrams.clipped_ngram_matches` counts), codebleu's per-reference clipped counts summed
    over references (order 1 weighted), and the paper's weighted clipped unigram matches (max over references).

    Orders climb as in :func:`~gpumetrics.kernels.ngrams.clipped_ngram_matches`: an n-gram can count only if it
    occurs in the hypothesis and in some reference of its sample, so order n+1 extends only occurrences whose
    n-grams at p and p+1 do (an (n+1)-gram that can count keeps every occurrence, hence exact counts). Host
    synchronisations: one per order after the first."""
    device = batch.ids.device
    bleu = torch.zeros(ORDER, size, dtype=torch.long, device=device)
    recall = torch.zeros(ORDER, size, dtype=torch.long, device=device)
    precision = torch.zeros(size, dtype=torch.long, device=device)
    for level in clip_levels(batch, sample, is_hyp, size, ORDER):
        n = level.order
        bleu[n - 1].index_add_(0, level.gram_sample, level.clipped)
        # per reference: min(c_r(g), c_hyp(g)) of every (n-gram, reference) pair (hypothesis pairs count 0)
        pair_clipped = torch.minimum(level.pair_count, level.hyp_count.index_select(0, level.pair_gram))
        if n == 1:
            gram_fifths = torch.zeros_like(level.gram).scatter_(
                0, level.gram, token_fifths.index_select(0, level.occurrence))
            pair_clipped = pair_clipped * gram_fifths.index_select(0, level.pair_gram)
            precision.index_add_(0, level.gram_sample, level.clipped * gram_fifths)
        recall[n - 1].index_add_(0, level.gram_sample.index_select(0, level.pair_gram), pair_clipped)
    return bleu.t().contiguous(), recall.t().contiguous(), precision
