"""Exact n-gram statistics on tensors — the one n-gram identity scheme of BLEU, ROUGE-N and CIDEr.

1. A :class:`TokenBatch` holds the tokens of S *segments* (hypotheses and references, concatenated) as dense
   integer ids ``[0, V)``; the tokenizers of :mod:`gpumetrics.text.tokenize` build it. (CIDEr, which gathers its
   tokens across DDP ranks, sends rank-independent token codes and ranks them into dense ids after the gather.)
2. :class:`NgramLadder` gives n-grams their ids order by order: the id of an n-gram is the dense rank of
   ``(id of its (n−1)-gram prefix, its last token)``, i.e. ``unique(prefix_id · V + token)``; unigram ids are the
   token ids, or the ranks of ``(group, token)`` when n-grams are told apart per group (BLEU's samples). Ids are
   **exact**, never hashed, and never overflow: ``prefix_id < T`` and ``V ≤ T``, so keys stay below ``T · V``.
   Equal n-grams of one order (and one group) have equal ids within one ladder. A caller may prune: an order only
   extends the occurrences it is told to keep (BLEU extends only n-grams that matched).
3. Statistics on top of it: :func:`clipped_ngram_matches` (BLEU's clipped matches, order by order with pruning),
   :func:`ngram_occurrences` (every n-gram occurrence of every order with corpus-wide dense ids) and
   :func:`ngram_totals`. ROUGE-N and CIDEr take the ids of each order from :func:`ngram_ids` (sort ranks, bounded by
   the number of occurrences) and count multisets (:mod:`gpumetrics.kernels.multiset`) or TF-IDF entries.

No Python loop over samples or n-grams. Host synchronisations (what makes a GPU wait): :func:`ngram_ids` and
:func:`dense_rank` make none (one sort per order; ids are bounded by the number of occurrences, never read back);
:func:`clipped_ngram_matches` and :func:`clip_levels` (BLEU, CodeBLEU) one per order after the first (the pruned
positions, ``nonzero``); the :class:`NgramLadder` and :func:`ngram_occurrences` one ``unique`` and one ``nonzero``
per order.
"""

from __future__ import annotations

from typing import Iterator, NamedTuple, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core.checks import check_device
from gpumetrics.core.transfer import upload, upload_all
from gpumetrics.kernels.ragged import offsets_in_segment, segment_ids, segment_starts


class TokenBatch(NamedTuple):
    """A ragged batch of S token-id sequences (segments) stored flat.

    The tokenizers of :mod:`gpumetrics.text.tokenize` build it on the host (``ids`` and ``lengths`` as numpy
    ``int64`` arrays); :meth:`to` puts it on a device as the n-gram kernels take it (``LongTensor``).

    Attributes:
        ids: ``int64[T]`` token ids in ``[0, vocab_size)``, segments concatenated in order.
        lengths: ``int64[S]`` number of tokens of each segment (0 allowed).
        vocab_size: V, the number of distinct tokens.
        vocabulary: the V token strings by id, when the tokenizer keeps them (``None`` otherwise).

    Example:
        >>> import numpy as np
        >>> TokenBatch(np.array([0, 1, 0]), np.array([2, 1]), 2).to("cpu").ids
        tensor([0, 1, 0])
    """

    ids: np.ndarray | Tensor
    lengths: np.ndarray | Tensor
    vocab_size: int
    vocabulary: Optional[Sequence[str]] = None

    def to(self, device: torch.device | str | None = None) -> "TokenBatch":
        """The same batch with ``ids`` / ``lengths`` as ``LongTensor`` on ``device`` (default CPU); host arrays go in
        one :func:`~gpumetrics.core.transfer.upload_all` (no host wait on CUDA)."""
        device = check_device(device, "device")
        parts = [x.long() if isinstance(x, Tensor) else np.asarray(x, dtype=np.int64) for x in (self.ids, self.lengths)]
        if any(isinstance(x, Tensor) and x.device.type != "cpu" for x in parts):
            ids, lengths = (upload(x, device) for x in parts)
        else:
            ids, lengths = upload_all(parts, device)
        return self._replace(ids=ids, lengths=lengths)


class NgramLevel(NamedTuple):
    """The n-grams of one order starting at selected positions of a :class:`TokenBatch`.

    Attributes:
        order: n.
        position: ``LongTensor[M]`` start position (in the flat batch) of each occurrence, ascending.
        gram: ``LongTensor[M]`` id of each occurrence's n-gram in ``[0, D)``; equal ids ⇔ equal n-grams (same group).
        group: ``LongTensor[D]`` group of each distinct n-gram (all 0 when the ladder was not grouped).
    """

    order: int
    position: Tensor
    gram: Tensor
    group: Tensor

    @property
    def distinct(self) -> int:
        """D, the number of distinct n-grams of this order."""
        return self.group.numel()


class NgramLadder:
    """Exact n-gram ids of a :class:`TokenBatch`, climbed one order at a time (see the module docstring).

    Args:
        batch: T tokens in S segments; n-grams never cross a segment boundary.

    Example:
        >>> ladder = NgramLadder(TokenBatch(torch.tensor([0, 1, 0, 1, 1, 0]), torch.tensor([4, 2]), 2))
        >>> bigrams = ladder.extend(ladder.unigrams())
        >>> bigrams.position.tolist(), bigrams.distinct  # "a b", "b a", "a b" | "b a"
        ([0, 1, 2, 4], 2)
        >>> bool(bigrams.gram[0] == bigrams.gram[2]), bool(bigrams.gram[1] == bigrams.gram[3])
        (True, True)
    """

    def __init__(self, batch: TokenBatch) -> None:
        total, vocab = batch.ids.numel(), max(batch.vocab_size, 1)
        if (total + 1) * vocab >= 1 << 63:
            raise ValueError(f"NgramLadder: {total} tokens of a {vocab}-word vocabulary exceed int64 n-gram keys")
        self.batch = batch
        self.vocab = vocab
        self.segment = segment_ids(batch.lengths, total)
        #: tokens from each position to the end of its segment
        self.remaining = (segment_starts(batch.lengths) + batch.lengths).index_select(0, self.segment) - torch.arange(
            total, device=batch.ids.device
        )

    def unigrams(self, group: Tensor | None = None) -> NgramLevel:
        """Order 1 at every position.

        Args:
            group: optional ``LongTensor[T]`` non-negative key of every token (e.g. its sample, ``< T``); unigrams
                of different groups get different ids, and so do all their extensions.
        """
        ids = self.batch.ids
        position = torch.arange(ids.numel(), device=ids.device)
        if group is None:
            return NgramLevel(1, position, ids, torch.zeros(self.batch.vocab_size, dtype=torch.long, device=ids.device))
        uniques, gram = torch.unique(group * self.vocab + ids, sorted=False, return_inverse=True)
        return NgramLevel(1, position, gram, torch.div(uniques, self.vocab, rounding_mode="floor"))

    def extend(self, level: NgramLevel, keep: Tensor | None = None) -> NgramLevel:
        """Order n+1 at the positions of ``level`` (order n) where an (n+1)-gram fits in its segment.

        Args:
            level: order n.
            keep: optional ``BoolTensor[M]``: extend only these occurrences of ``level``.
        """
        n = level.order
        select = self.remaining.index_select(0, level.position) > n
        if keep is not None:
            select &= keep
        chosen = torch.nonzero(select).squeeze(1)
        position = level.position.index_select(0, chosen)
        key = level.gram.index_select(0, chosen) * self.vocab + self.batch.ids.index_select(0, position + n)
        uniques, gram = torch.unique(key, sorted=False, return_inverse=True)
        return NgramLevel(n + 1, position, gram, level.group[torch.div(uniques, self.vocab, rounding_mode="floor")])

    def levels(self, max_order: int) -> list[NgramLevel]:
        """Orders 1..``max_order`` (ungrouped, every occurrence)."""
        if max_order < 1:
            raise ValueError(f"`max_order` must be >= 1, got {max_order}")
        levels = [self.unigrams()]
        while len(levels) < max_order:
            levels.append(self.extend(levels[-1]))
        return levels


def dense_rank(key: Tensor) -> Tensor:
    """The rank of every key among the distinct keys, ``LongTensor[M]`` in ``[0, M)`` (``unique``'s inverse), from one
    sort: no size is read back, so no host synchronisation.

    Example:
        >>> dense_rank(torch.tensor([30, 10, 30, 20]))
        tensor([2, 0, 2, 1])
    """
    if key.numel() == 0:
        return key.clone()
    ordered, perm = torch.sort(key)
    new = torch.cat((torch.ones(1, dtype=torch.bool, device=key.device), ordered[1:] != ordered[:-1]))
    return torch.empty_like(perm).scatter_(0, perm, torch.cumsum(new, 0) - 1)


def ngram_ids(batch: TokenBatch, order: int, count: Optional[int] = None) -> tuple[Tensor, int]:
    """Exact ids of every n-gram of one order, segment after segment (start positions ascending).

    Args:
        batch: T tokens in S segments (on the device).
        order: n ≥ 1.
        count: M = ``Σ max(0, L_s − n + 1)`` when known on the host (then no host synchronisation); else read.

    Returns:
        ``(gram: LongTensor[M], bound)``: equal ids ⇔ equal n-grams, all in ``[0, bound)`` (V for unigrams — the
        token ids —, M otherwise: ranks of ``(id of the (n−1)-gram, last token)``, one sort per order above 1).

    Example:
        >>> gram, bound = ngram_ids(TokenBatch(torch.tensor([0, 1, 0, 1, 1, 0]), torch.tensor([4, 2]), 2), 2)
        >>> gram.tolist(), bound  # "a b", "b a", "a b" | "b a"
        ([0, 1, 0, 1], 4)
    """
    if order < 1:
        raise ValueError(f"`order` must be >= 1, got {order}")
    ids, lengths, vocab = batch.ids, batch.lengths, max(batch.vocab_size, 1)
    counts = (lengths - (order - 1)).clamp_min(0)
    if count is None:
        count = int(counts.sum())
    if (max(count, vocab) + 1) * vocab >= 1 << 63:
        raise ValueError(f"ngram_ids: {count} n-grams of a {vocab}-word vocabulary exceed int64 keys")
    segment = segment_ids(counts, count)
    position = segment_starts(lengths).index_select(0, segment) + offsets_in_segment(counts, segment)
    gram = ids.index_select(0, position)
    for k in range(1, order):
        gram = dense_rank(gram * vocab + ids.index_select(0, position + k))
    return gram, vocab if order == 1 else count


def ngram_occurrences(batch: TokenBatch, max_order: int) -> tuple[Tensor, Tensor, list[int]]:
    """Every n-gram occurrence (n = 1..N) of a batch with corpus-wide exact ids, orders in disjoint id ranges.

    Returns:
        ``segment: LongTensor[M]`` and ``gram: LongTensor[M]`` of each occurrence (order by order; ids of order n
        occupy ``[Σ_{m<n} D_m, Σ_{m≤n} D_m)``), and ``distinct``: the D_n of each order.

    Example:
        >>> segment, gram, distinct = ngram_occurrences(
        ...     TokenBatch(torch.tensor([0, 1, 0, 1, 0]), torch.tensor([3, 2]), 2), 2)
        >>> segment.tolist(), gram[:5].tolist(), distinct  # unigrams a b a | b a, then bigrams ab ba | ba
        ([0, 0, 0, 1, 1, 0, 0, 1], [0, 1, 0, 1, 0], [2, 2])
        >>> sorted(set(gram[5:].tolist())), bool(gram[6] == gram[7])
        ([2, 3], True)
    """
    ladder = NgramLadder(batch)
    segments, grams, distinct, offset = [], [], [], 0
    for level in ladder.levels(max_order):
        segments.append(ladder.segment.index_select(0, level.position))
        grams.append(level.gram + offset)
        distinct.append(level.distinct)
        offset += level.distinct
    return torch.cat(segments), torch.cat(grams), distinct


def clipped_ngram_matches(
    batch: TokenBatch, sample: Tensor, is_hypothesis: Tensor, num_samples: int, max_order: int
) -> Tensor:
    """BLEU's clipped n-gram matches of each hypothesis against its references.

    Segments are grouped into samples: each sample has (at most) one hypothesis segment and any number of reference
    segments (a reference may be empty).

    Args:
        batch: S segments.
        sample: ``LongTensor[S]`` sample of each segment, in ``[0, num_samples)``.
        is_hypothesis: ``BoolTensor[S]`` True for the hypothesis segment of its sample.
        num_samples: B.
        max_order: N.

    Returns:
        ``LongTensor[B, N]``: entry (b, n-1) = ``Σ_g min(c_hyp(g), max_r c_r(g))`` over the n-grams g of order n of
        sample b's hypothesis.

    Every order is one stable sort of its occurrences' keys ``(id of the (n-1)-gram prefix) · V + last token``
    (unigrams: ``(sample, token)``, so every id is a (sample, n-gram) pair). Runs of equal keys are the n-grams
    (their dense ranks are the next order's prefix ids); the stable sort keeps positions, hence segments, ascending
    inside a run, so the runs of equal (key, segment) are the per-segment counts whose maximum over the references
    clips the hypothesis count — one sort per order, no ``unique``. An n-gram can only match if both its (n-1)-gram
    prefix (at p) and suffix (at p+1) matched, so order n+1 only extends those (most n-grams are pruned early). An
    n-gram that can match keeps all its occurrences (every one has a matching prefix and suffix), hence its counts
    are exact; one that cannot may lose occurrences but still clips to 0. Host synchronisations: one per order
    after the first (the number of extended positions, ``nonzero``), whatever the batch.

    Example:
        >>> batch = TokenBatch(torch.tensor([0, 0, 1, 0, 1, 0, 0]), torch.tensor([3, 2, 2]), 2)  # the the cat | ...
        >>> clipped_ngram_matches(batch, torch.tensor([0, 0, 0]), torch.tensor([True, False, False]), 1, 2)
        tensor([[3, 2]])
    """
    if max_order < 1:
        raise ValueError(f"`max_order` must be >= 1, got {max_order}")
    device = batch.ids.device
    total = batch.ids.numel()
    result = torch.zeros(max_order, num_samples, dtype=torch.long, device=device)
    if total == 0:
        return result.t().contiguous()
    for level in clip_levels(batch, sample, is_hypothesis, num_samples, max_order):
        result[level.order - 1].index_add_(0, level.gram_sample, level.clipped)
    return result.t().contiguous()


class ClipLevel(NamedTuple):
    """The occurrences of one order that :func:`clip_levels` counted, sorted by (n-gram, position); the per-n-gram
    and per-pair tensors have one slot per occurrence (``size``), slots past the last n-gram / pair hold 0.

    Attributes:
        order: n.
        occurrence: ``LongTensor[size]`` flat start position of each occurrence (sorted by n-gram).
        gram: ``LongTensor[size]`` n-gram rank of each occurrence (non-decreasing).
        pair: ``LongTensor[size]`` rank of each occurrence's (n-gram, segment) (non-decreasing).
        hyp_count: ``LongTensor[size]`` hypothesis occurrences per n-gram.
        pair_count: ``LongTensor[size]`` reference occurrences per (n-gram, segment) pair (0 for hypothesis pairs).
        pair_gram: ``LongTensor[size]`` n-gram of each pair.
        clipped: ``LongTensor[size]`` ``min(hyp_count, max over the references of pair_count)`` per n-gram.
        gram_sample: ``LongTensor[size]`` sample of each n-gram.
    """

    order: int
    occurrence: Tensor
    gram: Tensor
    pair: Tensor
    hyp_count: Tensor
    pair_count: Tensor
    pair_gram: Tensor
    clipped: Tensor
    gram_sample: Tensor


def clip_levels(
    batch: TokenBatch, sample: Tensor, is_hypothesis: Tensor, num_samples: int, max_order: int
) -> Iterator[ClipLevel]:
    """:func:`clipped_ngram_matches`' climb, one :class:`ClipLevel` per order (fewer when no occurrence is left to
    extend), for callers that count more than BLEU's matches (CodeBLEU's per-reference and weighted counts).
    One host synchronisation per order after the first.
    """
    device = batch.ids.device
    total = batch.ids.numel()
    if total == 0:
        return
    vocab = max(batch.vocab_size, 1)
    if (max(total, num_samples) + 1) * vocab >= 1 << 63:
        raise ValueError(f"clipped_ngram_matches: {total} tokens of a {vocab}-word vocabulary exceed int64 keys")
    ids, lengths = batch.ids, batch.lengths
    segment = segment_ids(lengths, total)
    position = torch.arange(total, device=device)  # the occurrences of the current order (ascending)
    remaining = (segment_starts(lengths) + lengths).index_select(0, segment) - position  # tokens to the segment end
    token_sample = sample.index_select(0, segment)
    # (sample, segment, is-hypothesis) of every token in one int64, so an order gathers them at once
    segment_bits = max(int(lengths.numel()).bit_length(), 1)
    if int(num_samples).bit_length() + segment_bits + 1 > 63:
        raise ValueError(f"clipped_ngram_matches: {num_samples} samples of {lengths.numel()} segments exceed int64 "
                         "codes")
    token_code = (((token_sample << segment_bits) | segment) << 1) | is_hypothesis.index_select(0, segment).long()
    prefix = token_sample  # order 1: the sample takes the place of the prefix id
    matched = torch.zeros(total + 1, dtype=torch.bool, device=device)
    first = torch.ones(1, dtype=torch.bool, device=device)
    for n in range(1, max_order + 1):
        size = position.numel()
        key, perm = torch.sort(prefix * vocab + ids.index_select(0, position + (n - 1)), stable=True)
        occurrence = perm if n == 1 else position.index_select(0, perm)  # sorted occurrences
        code = token_code.index_select(0, occurrence)
        seg = code >> 1  # (sample, segment): equal iff the segments are
        new_gram = torch.cat((first, key[1:] != key[:-1]))
        new_pair = new_gram | torch.cat((first, seg[1:] != seg[:-1]))
        gram = torch.cumsum(new_gram, 0) - 1  # dense rank of each sorted occurrence's n-gram, < size
        pair = torch.cumsum(new_pair, 0) - 1
        hyp = code & 1
        hyp_count = torch.zeros(size, dtype=torch.long, device=device).index_add_(0, gram, hyp)
        pair_count = torch.zeros(size, dtype=torch.long, device=device).index_add_(0, pair, 1 - hyp)  # references
        pair_gram = torch.zeros(size, dtype=torch.long, device=device).scatter_(0, pair, gram)  # one value per pair
        ref_max = torch.zeros(size, dtype=torch.long, device=device).scatter_reduce_(
            0, pair_gram, pair_count, reduce="amax"
        )
        clipped = torch.minimum(hyp_count, ref_max)
        gram_sample = torch.zeros(size, dtype=torch.long, device=device).scatter_(0, gram, code >> (segment_bits + 1))
        yield ClipLevel(n, occurrence, gram, pair, hyp_count, pair_count, pair_gram, clipped, gram_sample)
        if n == max_order:
            break
        # back in position order (ascending): the n-gram and match of every occurrence
        gram = torch.empty_like(gram).scatter_(0, perm, gram)
        hit = (clipped > 0).index_select(0, gram)
        matched.zero_()
        matched.index_copy_(0, position, hit)
        keep = hit & matched.index_select(0, position + 1) & (remaining.index_select(0, position) > n)
        chosen = torch.nonzero(keep).squeeze(1)
        position = position.index_select(0, chosen)
        prefix = gram.index_select(0, chosen)
        if position.numel() == 0:
            break


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
