"""Exact n-gram statistics on tensors: tokens → integer ids → n-gram ids → (clipped) counts with sort / scatter.

The pipeline shared by the n-gram metrics (BLEU, ROUGE-N, CIDEr):

1. :func:`encode_tokens` maps the tokens of S *segments* (hypotheses and references, concatenated) to dense
   integer ids ``[0, V)`` with one dictionary pass (the only Python step) → :class:`TokenBatch` on a device.
2. :func:`ngram_ids` gives every position the exact id of the n-grams that start there, for n = 1..N, as
   ``int64[T, N]``. Ids are **exact**, never hashed: two n-grams (of any orders) share an id iff they are equal.
   When ``(V + 1) ** N < 2**63`` an n-gram is packed as the base-(V+1) number of its token ids (digits 1..V, so the
   orders occupy disjoint ranges); otherwise ids are built order by order as dense ranks
   (``unique(rank_{n-1} * V + id)``), which is exact for any vocabulary up to 3·10⁹ tokens.
3. :func:`segment_ngram_counts` counts each distinct n-gram of each segment (``(segment, gram, order, count)``
   rows, what CIDEr's TF vectors and document frequencies need), and :func:`clipped_ngram_matches` returns, per
   sample and order, ``Σ_g min(count_hyp(g), max_r count_ref_r(g))`` (BLEU's clipped matches) or, with
   ``per_reference=True``, ``Σ_g min(count_hyp(g), count_ref_r(g))`` for every reference separately (ROUGE-N's
   overlap with each reference).

:func:`segment_ngram_counts` is one stable sort of the valid n-gram ids plus ``cumsum`` / ``index_add``; no Python
loop over samples or n-grams. :func:`clipped_ngram_matches` (BLEU) goes order by order: one ``unique`` of the
(sample, n-gram) keys per order plus ``bincount``, where order n+1 only looks at positions whose n-gram prefix and
suffix both matched (most n-grams are pruned early). Its ``per_reference`` form first drops every n-gram containing
a token that does not occur on the other side of its sample (two ``isin``) before one stable sort. Everything stays
on the device of the ids.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core.checks import check_device

_INT64_MAX = (1 << 63) - 1


class TokenBatch(NamedTuple):
    """A ragged batch of S token-id sequences (segments) stored flat.

    Attributes:
        ids: ``LongTensor[T]`` token ids in ``[0, vocab_size)``, segments concatenated in order.
        lengths: ``LongTensor[S]`` number of tokens of each segment (0 allowed).
        vocab_size: V, the number of distinct tokens.
    """

    ids: Tensor
    lengths: Tensor
    vocab_size: int


class NgramCounts(NamedTuple):
    """Distinct (segment, n-gram) pairs with their counts, ordered by n-gram id then segment.

    Attributes:
        segment: ``LongTensor[P]`` segment index.
        gram: ``LongTensor[P]`` exact n-gram id (see :func:`ngram_ids`).
        order: ``LongTensor[P]`` n of the n-gram (1..N).
        count: ``LongTensor[P]`` occurrences of the n-gram in the segment.
    """

    segment: Tensor
    gram: Tensor
    order: Tensor
    count: Tensor


def encode_tokens(
    tokens: Sequence[str], lengths: Sequence[int], device: torch.device | str | None = None
) -> TokenBatch:
    """Dense ids for a flat token list split into segments of ``lengths`` tokens.

    Args:
        tokens: ``Sequence[str]`` of T tokens, segments concatenated.
        lengths: ``Sequence[int]`` of S segment lengths summing to T.
        device: device of the returned tensors.

    Returns:
        :class:`TokenBatch`; ids number tokens by first appearance.

    Raises:
        ValueError: the lengths do not add up to the number of tokens, or one is negative.

    Example:
        >>> encode_tokens(["a", "b", "a", "c"], [3, 1])
        TokenBatch(ids=tensor([0, 1, 0, 2]), lengths=tensor([3, 1]), vocab_size=3)
    """
    lengths_t = torch.as_tensor(list(lengths), dtype=torch.long)
    if int(lengths_t.sum()) != len(tokens) or bool((lengths_t < 0).any()):
        raise ValueError(f"`lengths` must be non-negative and sum to len(tokens)={len(tokens)}")
    vocabulary = {token: index for index, token in enumerate(dict.fromkeys(tokens))}
    ids = torch.from_numpy(np.fromiter(map(vocabulary.__getitem__, tokens), dtype=np.int64, count=len(tokens)))
    device = check_device(device, "device")
    return TokenBatch(ids.to(device), lengths_t.to(device), len(vocabulary))


def encode_token_lists(token_lists: Sequence[Sequence[str]], device: torch.device | str | None = None) -> TokenBatch:
    """:func:`encode_tokens` for a list of token lists (one per segment).

    Example:
        >>> encode_token_lists([["x", "y"], [], ["y"]]).ids
        tensor([0, 1, 1])
    """
    return encode_tokens(list(itertools.chain.from_iterable(token_lists)), [len(t) for t in token_lists], device)


def segment_index(lengths: Tensor) -> Tensor:
    """``LongTensor[T]``: the segment of every position of a flat batch with segment ``lengths: LongTensor[S]``.

    Example:
        >>> segment_index(torch.tensor([2, 0, 1]))
        tensor([0, 0, 2])
    """
    return torch.repeat_interleave(torch.arange(lengths.numel(), device=lengths.device), lengths)


def ngram_ids(batch: TokenBatch, max_order: int) -> Tensor:
    """Exact ids of the n-grams starting at every position, n = 1..``max_order``.

    Args:
        batch: T tokens in S segments.
        max_order: N ≥ 1.

    Returns:
        ``LongTensor[T, N]``: column n-1 holds the id of the n-gram ``ids[p : p+n]`` or -1 where it would run past
        the end of its segment. Equal n-grams (same tokens, same order) have equal ids within one call; different
        n-grams — including n-grams of different orders — never do.

    Example:
        >>> grams = ngram_ids(TokenBatch(torch.tensor([0, 1, 0, 1]), torch.tensor([3, 1]), 2), 2)
        >>> grams[:, 0].tolist(), (grams[0, 1] != grams[1, 1]).item(), grams[2:, 1].tolist()
        ([1, 2, 1, 2], True, [-1, -1])
    """
    if max_order < 1:
        raise ValueError(f"`max_order` must be >= 1, got {max_order}")
    ids, lengths = batch.ids, batch.lengths
    total = ids.numel()
    device = ids.device
    out = torch.full((total, max_order), -1, dtype=torch.long, device=device)
    if total == 0:
        return out
    segment = segment_index(lengths)
    ends = torch.cumsum(lengths, 0)[segment]  # one past the last position of each position's segment
    position = torch.arange(total, device=device)
    padded = torch.cat([ids, ids.new_zeros(max_order)])
    base = batch.vocab_size + 1
    if base ** max_order <= _INT64_MAX:
        # Fast path: base-(V+1) packing, digits 1..V; order n lies in [base^(n-1), base^n).
        gram = padded[:total] + 1
        for n in range(1, max_order + 1):
            if n > 1:
                gram = gram + (padded[n - 1: n - 1 + total] + 1) * base ** (n - 1)
            out[:, n - 1] = torch.where(position + n <= ends, gram, -1)
        return out
    # Fallback for huge vocabularies: dense ranks order by order (rank_{n-1} < T and V <= T, so no overflow).
    rank = ids.clone()
    offset, size = 0, batch.vocab_size
    out[:, 0] = ids
    for n in range(2, max_order + 1):
        valid = position + n <= ends
        key = rank[valid] * batch.vocab_size + padded[n - 1: n - 1 + total][valid]
        if key.numel() == 0:
            break
        uniques, inverse = torch.unique(key, return_inverse=True)
        offset += size
        size = uniques.numel()
        rank = torch.zeros_like(ids)
        rank[valid] = inverse
        out[:, n - 1] = torch.where(valid, rank + offset, -1)
    return out


def _sorted_pairs(
    batch: TokenBatch, max_order: int, keep: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Distinct (segment, gram) pairs: segment, gram, order and count, sorted by gram then segment.

    ``keep: BoolTensor[T]`` (optional) leaves out every n-gram that covers a position where it is False.
    """
    grams = ngram_ids(batch, max_order)
    if keep is not None and not bool(keep.all()):
        total = keep.numel()
        position = torch.arange(total, device=keep.device)
        dropped = torch.nonzero(~keep).squeeze(1)
        following = torch.searchsorted(dropped, position)  # first dropped position >= p
        next_dropped = torch.cat([dropped, dropped.new_tensor([total])])[following]
        run = next_dropped - position  # kept positions starting at p
        orders = torch.arange(1, max_order + 1, device=keep.device)
        grams = torch.where(run[:, None] >= orders, grams, -1)
    grams = grams.view(-1)
    # Row-major flattening keeps positions (hence segments) in ascending order; the stable sort by gram then leaves
    # equal (segment, gram) pairs next to each other. Invalid entries (-1) sort first and are skipped.
    gram, permutation = torch.sort(grams, stable=True)
    skip = int(torch.count_nonzero(gram < 0))
    gram, permutation = gram[skip:], permutation[skip:]
    if gram.numel() == 0:
        empty = gram.new_zeros(0)
        return empty, empty, empty, empty
    position = torch.div(permutation, max_order, rounding_mode="floor")
    segment = segment_index(batch.lengths)[position]
    starts = torch.ones_like(gram, dtype=torch.bool)
    starts[1:] = (gram[1:] != gram[:-1]) | (segment[1:] != segment[:-1])
    first = torch.nonzero(starts).squeeze(1)
    count = torch.diff(first, append=first.new_tensor([gram.numel()]))
    order = permutation[first] - position[first] * max_order + 1
    return segment[first], gram[first], order, count


def segment_ngram_counts(batch: TokenBatch, max_order: int) -> NgramCounts:
    """Counts of every distinct n-gram (n = 1..N) of every segment.

    Args:
        batch: S segments.
        max_order: N.

    Returns:
        :class:`NgramCounts` with one row per distinct (segment, n-gram), ordered by n-gram id then segment — so the
        document frequency of an n-gram is its run length and ``unique_consecutive(gram)`` enumerates the n-grams.

    Example:
        >>> batch = encode_token_lists([["a", "a", "b"], ["a"]])
        >>> counts = segment_ngram_counts(batch, 2)
        >>> sorted(zip(counts.segment.tolist(), counts.order.tolist(), counts.count.tolist()))
        [(0, 1, 1), (0, 1, 2), (0, 2, 1), (0, 2, 1), (1, 1, 1)]
    """
    return NgramCounts(*_sorted_pairs(batch, max_order))


def clipped_ngram_matches(
    batch: TokenBatch,
    sample: Tensor,
    is_hypothesis: Tensor,
    num_samples: int,
    max_order: int,
    per_reference: bool = False,
) -> Tensor:
    """Clipped n-gram matches of each hypothesis against its references.

    Segments are grouped into samples: each sample has (at most) one hypothesis segment and any number of reference
    segments, and ``sample`` must be non-decreasing (segments of a sample are contiguous, in any order inside).

    Args:
        batch: S segments.
        sample: ``LongTensor[S]`` sample of each segment, non-decreasing, in ``[0, num_samples)``.
        is_hypothesis: ``BoolTensor[S]`` True for the hypothesis segment of its sample.
        num_samples: B.
        max_order: N.
        per_reference: see Returns.

    Returns:
        * ``per_reference=False``: ``LongTensor[B, N]``, entry (b, n-1) = ``Σ_g min(c_hyp(g), max_r c_r(g))`` over the
          n-grams g of order n of sample b's hypothesis (BLEU's clipped matches; a reference may be empty).
        * ``per_reference=True``: ``LongTensor[S, N]``, entry (s, n-1) = ``Σ_g min(c_hyp(g), c_s(g))`` for every
          reference segment s (0 on hypothesis rows) — the overlap ROUGE-N needs with each reference.

    Example:
        >>> batch = encode_token_lists([["the", "the", "cat"], ["the", "cat"], ["the", "the"]])
        >>> sample, hyp = torch.tensor([0, 0, 0]), torch.tensor([True, False, False])
        >>> clipped_ngram_matches(batch, sample, hyp, 1, 2)
        tensor([[3, 2]])
        >>> clipped_ngram_matches(batch, sample, hyp, 1, 2, per_reference=True)
        tensor([[0, 0],
                [2, 1],
                [2, 1]])
    """
    device = batch.ids.device
    if not per_reference and batch.ids.numel() and num_samples * max(batch.vocab_size, 1) < (1 << 62):
        return _clipped_matches_by_order(batch, sample, is_hypothesis, num_samples, max_order)
    rows = batch.lengths.numel() if per_reference else num_samples
    result = torch.zeros(rows * max_order, dtype=torch.long, device=device)
    # Only n-grams made of tokens that occur on both sides of their sample can match: drop the others before the
    # sort (typically most reference n-grams and many hypothesis ones; totals come from the lengths).
    token_segment = segment_index(batch.lengths)
    token_key = sample[token_segment] * max(batch.vocab_size, 1) + batch.ids
    token_is_hyp = is_hypothesis[token_segment]
    shared = torch.where(
        token_is_hyp, torch.isin(token_key, token_key[~token_is_hyp]), torch.isin(token_key, token_key[token_is_hyp])
    )
    segment, gram, order, count = _sorted_pairs(batch, max_order, shared)
    if gram.numel() == 0:
        return result.view(rows, max_order)
    pair_sample = sample[segment]
    pair_is_hyp = is_hypothesis[segment]
    # Pairs are sorted by gram then segment, hence by (gram, sample): a group is one n-gram of one sample.
    new_group = torch.ones_like(gram, dtype=torch.bool)
    new_group[1:] = (gram[1:] != gram[:-1]) | (pair_sample[1:] != pair_sample[:-1])
    group = torch.cumsum(new_group, 0) - 1
    n_groups = int(group[-1]) + 1
    hyp_count = torch.zeros(n_groups, dtype=torch.long, device=device).index_add_(
        0, group, torch.where(pair_is_hyp, count, 0)
    )
    if per_reference:
        clipped = torch.where(pair_is_hyp, 0, torch.minimum(count, hyp_count[group]))
        return result.index_add_(0, segment * max_order + order - 1, clipped).view(rows, max_order)
    ref_max = torch.zeros(n_groups, dtype=torch.long, device=device).scatter_reduce_(
        0, group, torch.where(pair_is_hyp, 0, count), reduce="amax"
    )
    clipped = torch.minimum(hyp_count, ref_max)
    group_first = torch.nonzero(new_group).squeeze(1)
    index = pair_sample[group_first] * max_order + order[group_first] - 1
    return result.index_add_(0, index, clipped).view(rows, max_order)


def _clipped_matches_by_order(
    batch: TokenBatch, sample: Tensor, is_hypothesis: Tensor, num_samples: int, max_order: int
) -> Tensor:
    """:func:`clipped_ngram_matches` (``per_reference=False``) order by order with pruning.

    An n-gram can only match if both its (n-1)-gram prefix (at p) and suffix (at p+1) occur on both sides of its
    sample, so order n only looks at the positions whose two (n-1)-grams matched. An n-gram that can match keeps all
    its occurrences (every one has a matching prefix and suffix), hence its counts are exact; one that cannot may
    lose occurrences but still clips to 0. Each order is one ``unique`` (no stable sort) of the surviving
    (sample, n-gram) keys, written ``rank_{n-1} * V + token`` (dense, < T·V) so no key overflows.
    """
    ids, lengths = batch.ids, batch.lengths
    device = ids.device
    total = ids.numel()
    vocab = max(batch.vocab_size, 1)
    result = torch.zeros(max_order, num_samples, dtype=torch.long, device=device)
    token_segment = segment_index(lengths)
    token_sample = sample[token_segment]
    token_hyp = is_hypothesis[token_segment]
    refs_per_sample = torch.bincount(sample[~is_hypothesis], minlength=num_samples)
    several_refs = bool(refs_per_sample.numel()) and int(refs_per_sample.max()) > 1
    num_segments = lengths.numel()
    remaining = torch.cumsum(lengths, 0)[token_segment] - torch.arange(total, device=device)  # tokens from p on
    matched = torch.zeros(total + 1, dtype=torch.bool, device=device)
    position = None  # order 1 looks at every position (no gathers needed)
    key = token_sample * vocab + ids
    group_sample = None
    for n in range(1, max_order + 1):
        uniques, inverse = torch.unique(key, sorted=False, return_inverse=True)
        groups = uniques.numel()
        hyp = token_hyp if position is None else token_hyp[position]
        # counts < 2**53, so the float64 weighted bincount is exact
        hyp_count = torch.bincount(inverse, weights=hyp.to(torch.float64), minlength=groups).long()
        if several_refs:  # max over the references of each sample: count (group, segment) pairs first
            ref = ~hyp
            segment = token_segment if position is None else token_segment[position]
            pair = inverse[ref] * num_segments + segment[ref]
            pairs, pair_count = torch.unique(pair, sorted=False, return_counts=True)
            ref_max = torch.zeros(groups, dtype=torch.long, device=device).scatter_reduce_(
                0, torch.div(pairs, num_segments, rounding_mode="floor"), pair_count, reduce="amax"
            )
        else:
            ref_max = torch.bincount(inverse, minlength=groups) - hyp_count
        clipped = torch.minimum(hyp_count, ref_max)
        # a group's key is (rank of its (n-1)-gram group) * V + last token, and order 1 ranks (sample, token)
        previous = torch.div(uniques, vocab, rounding_mode="floor")
        group_sample = previous if group_sample is None else group_sample[previous]
        result[n - 1].index_add_(0, group_sample, clipped)
        if n == max_order:
            break
        hit = (clipped > 0)[inverse]
        if position is None:
            matched[:total] = hit
            keep = hit & matched[1:] & (remaining > n)
            position = torch.nonzero(keep).squeeze(1)
            rank = inverse[position]
        else:
            matched.zero_()
            matched[position] = hit
            # the (n+1)-gram at p needs the n-gram at p+1 matched, and must fit in its segment
            keep = hit & matched[position + 1] & (remaining[position] > n)
            selected = torch.nonzero(keep).squeeze(1)
            position, rank = position[selected], inverse[selected]
        if position.numel() == 0:
            break
        key = rank * vocab + ids[position + n]
    return result.t().contiguous()


def ngram_totals(lengths: Tensor, max_order: int) -> Tensor:
    """Number of n-grams of each order in sequences of ``lengths: LongTensor[S]``: ``max(0, L - n + 1)``.

    Returns:
        ``LongTensor[S, N]``.

    Example:
        >>> ngram_totals(torch.tensor([3, 0, 1]), 2)
        tensor([[3, 2],
                [0, 0],
                [1, 0]])
    """
    n = torch.arange(max_order, device=lengths.device)
    return (lengths[:, None] - n).clamp_min(0)
