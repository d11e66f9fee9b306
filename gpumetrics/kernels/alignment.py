"""METEOR's word alignment as a batched beam search: every (hypothesis, reference) pair of a batch at once.

The problem (METEOR 1.5's aligner, docs/design/meteor-1.5.md): each pair ``p`` has a *test* line (``line1``, the
hypothesis, ``len1[p]`` words) and a *reference* line (``line2``, ``len2[p]`` words) and a list of candidate
**matches**, each joining the line-2 span ``[start, start + length)`` to the line-1 span
``[match_start, match_start + match_length)`` (single words for exact/stem/synonym, phrases for paraphrases).
The aligner picks a set of non-overlapping matches:

1. a match that is the only candidate at its line-2 start and whose words no other candidate covers is **fixed**;
2. the rest is a left-to-right search over line-2 positions keeping the ``beam`` best partial alignments, ranked by
   *more* weighted matches, then *fewer* chunks, then *smaller* distance, ties kept in insertion order (Java's stable
   sort). At a position a path either takes one of the free candidates starting there (one child each, in candidate
   order) or skips it (last child); a position already used continues the current match or takes the fixed match.

Reproduced as the jar computes it, quirks included: the weighted-match counter adds ``weight_sum[m]`` (the caller's
``⌊match_length·w⌋ + ⌊length·w⌋``, the jar's integer truncation); when a path branches, the distance of each taken
match is added to the *parent* before the next sibling is copied (child ``k`` carries the distances of the free
siblings before it, the skip child carries all of them).

Tensor layout: the paths of all pairs are rows of flat tensors (``pair``, used-word bitsets ``int64[R, W]``, counters);
one step per line-2 position expands every live row (children in Java's insertion order, placed by arithmetic, not
sorted), then one stable sort by (pair, rank key) and a per-pair cut at ``beam``. The chosen matches are recovered
by back-pointers. Host synchronisations: a few per line-2 position (row counts), none per pair.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from gpumetrics.kernels.ragged import segment_ids, segment_starts

_BITS = 64


class Matches(NamedTuple):
    """Candidate matches of P pairs, sorted by ``(pair, start)`` and, within one start, in the matchers' order.

    Attributes:
        pair: ``LongTensor[M]`` pair of each match.
        start, length: ``LongTensor[M]`` line-2 (reference) span.
        match_start, match_length: ``LongTensor[M]`` line-1 (hypothesis) span.
        weight_sum: ``LongTensor[M]`` the search weight of the match, already truncated as the caller's search does.
    """

    pair: Tensor
    start: Tensor
    length: Tensor
    match_start: Tensor
    match_length: Tensor
    weight_sum: Tensor


class Alignment(NamedTuple):
    """The best alignment of every pair.

    Attributes:
        chosen: ``BoolTensor[M]`` the matches of the best path.
        chunks: ``LongTensor[P]`` its number of chunks.
    """

    chosen: Tensor
    chunks: Tensor


def _span_items(start: Tensor, length: Tensor, offset: Tensor) -> tuple[Tensor, Tensor]:
    """Every word of every span: ``(span index, flat word position = offset + start + k)``."""
    span = segment_ids(length)
    k = torch.arange(span.numel(), device=start.device) - segment_starts(length)[span]
    return span, offset[span] + start[span] + k


def _span_bits(start: Tensor, length: Tensor, words: int) -> Tensor:
    """``int64[M, words]`` bitset of each span's positions (bit ``q % 64`` of word ``q // 64``)."""
    span = segment_ids(length)
    position = start[span] + torch.arange(span.numel(), device=start.device) - segment_starts(length)[span]
    bits = torch.zeros(start.numel() * words, dtype=torch.long, device=start.device)
    # distinct bits of one span never carry, so a sum is an OR (two's complement wraps bit 63 correctly)
    bits.index_add_(0, span * words + torch.div(position, _BITS, rounding_mode="floor"), torch.ones_like(position) << (position % _BITS))
    return bits.view(start.numel(), words)


def _coverage(offset: Tensor, start: Tensor, length: Tensor, size: int) -> tuple[Tensor, Tensor]:
    """Candidates covering each flat word position, and the span items (span, position) used to compute it."""
    span, position = _span_items(start, length, offset)
    coverage = torch.zeros(size, dtype=torch.long, device=start.device).index_add_(0, position, torch.ones_like(position))
    return coverage, torch.stack((span, position))


def _fixed_matches(matches: Matches, len1: Tensor, len2: Tensor) -> Tensor:
    """``BoolTensor[M]``: the only candidate at its line-2 start, and every word it touches covered once."""
    offset1, offset2 = segment_starts(len1), segment_starts(len2)
    size1, size2 = int(len1.sum()), int(len2.sum())
    m = matches
    cover1, items1 = _coverage(offset1[m.pair], m.match_start, m.match_length, size1)
    cover2, items2 = _coverage(offset2[m.pair], m.start, m.length, size2)
    at_start = torch.zeros(size2, dtype=torch.long, device=m.pair.device)
    at_start.index_add_(0, offset2[m.pair] + m.start, torch.ones_like(m.start))
    shared = torch.zeros(m.pair.numel(), dtype=torch.long, device=m.pair.device)
    shared.index_add_(0, items1[0], (cover1[items1[1]] != 1).long())
    shared.index_add_(0, items2[0], (cover2[items2[1]] != 1).long())
    return (at_start[offset2[m.pair] + m.start] == 1) & (shared == 0)


def _bit_at(bits: Tensor, position: int) -> Tensor:
    return ((bits[:, position // _BITS] >> (position % _BITS)) & 1).bool()


class _Rows(NamedTuple):
    """Live partial alignments, one row each (all ``[R]`` or ``[R, W]``)."""

    pair: Tensor
    used1: Tensor
    used2: Tensor
    score: Tensor  # weighted matches of both lines (the jar's matches1 + matches2)
    chunks: Tensor
    idx: Tensor  # next line-2 position this path expects
    last_end: Tensor  # line-1 end of the open chunk, -1 when none
    distance: Tensor

    def take(self, index: Tensor) -> "_Rows":
        return _Rows(*(field[index] for field in self))


def _apply(rows: _Rows, m: Matches, chosen: Tensor, mask1: Tensor, mask2: Tensor) -> _Rows:
    """Rows after taking match ``chosen[r]`` (counters only; the caller sets the distance)."""
    opens_chunk = (rows.last_end != -1) & (m.match_start[chosen] != rows.last_end)
    return rows._replace(
        used1=rows.used1 | mask1[chosen],
        used2=rows.used2 | mask2[chosen],
        score=rows.score + m.weight_sum[chosen],
        chunks=rows.chunks + opens_chunk.long(),
        idx=m.start[chosen] + m.length[chosen],
        last_end=m.match_start[chosen] + m.match_length[chosen],
    )


def _rank_order(rows: _Rows) -> Tensor:
    """Stable order by (pair, more score, fewer chunks, smaller distance): the jar's comparator, ties kept."""
    key_low = rows.chunks * (int(rows.distance.max()) + 1) + rows.distance if rows.pair.numel() else rows.distance
    order = torch.sort(key_low, stable=True).indices
    key_high = rows.pair[order] * (int(rows.score.max()) + 1) + (rows.score.max() - rows.score[order])
    return order[torch.sort(key_high, stable=True).indices]


def _keep_beam(rows: _Rows, order: Tensor, beam: int) -> Tensor:
    """Indices (in ``order``) of the first ``beam`` rows of each pair."""
    pair = rows.pair[order]
    first = torch.ones_like(pair, dtype=torch.bool)
    first[1:] = pair[1:] != pair[:-1]
    group_start = torch.cummax(torch.where(first, torch.arange(pair.numel(), device=pair.device), 0), 0).values
    rank = torch.arange(pair.numel(), device=pair.device) - group_start
    return order[rank < beam]


def beam_align(matches: Matches, len1: Tensor, len2: Tensor, beam: int = 40) -> Alignment:
    """The jar's best alignment of every pair (see the module docstring).

    Args:
        matches: M candidates of P pairs, sorted by pair, then line-2 start, then candidate order.
        len1: ``LongTensor[P]`` words of each pair's line 1 (hypothesis).
        len2: ``LongTensor[P]`` words of each pair's line 2 (reference).
        beam: partial alignments kept per pair and position (the jar's 40).

    Returns:
        :class:`Alignment`: the chosen matches ``[M]`` and the chunks of every pair ``[P]``.

    Example:
        >>> t = torch.tensor
        >>> # "a b" vs "a a b": "a" matches either reference "a", "b" is fixed
        >>> m = Matches(t([0, 0, 0]), t([0, 1, 2]), t([1, 1, 1]), t([0, 0, 1]), t([1, 1, 1]), t([2, 2, 2]))
        >>> result = beam_align(m, t([2]), t([3]))
        >>> result.chosen.tolist(), result.chunks.tolist()
        ([False, True, True], [1])
    """
    device = len1.device
    pairs, total = len1.numel(), matches.pair.numel()
    words1 = max(1, -(-int(len1.max()) // _BITS)) if pairs else 1
    words2 = max(1, -(-int(len2.max()) // _BITS)) if pairs else 1
    mask1 = _span_bits(matches.match_start, matches.match_length, words1)
    mask2 = _span_bits(matches.start, matches.length, words2)
    fixed = _fixed_matches(matches, len1, len2)
    offset2 = segment_starts(len2)
    size2 = int(len2.sum())

    # the fixed match at each line-2 position (-1: none) and the free candidates starting there (CSR)
    fixed_at = torch.full((size2,), -1, dtype=torch.long, device=device)
    fixed_ids = torch.nonzero(fixed).squeeze(1)
    fixed_at[offset2[matches.pair[fixed_ids]] + matches.start[fixed_ids]] = fixed_ids
    free_ids = torch.nonzero(~fixed).squeeze(1)
    free_count = torch.zeros(size2, dtype=torch.long, device=device)
    free_count.index_add_(0, offset2[matches.pair[free_ids]] + matches.start[free_ids], torch.ones_like(free_ids))
    free_first = segment_starts(free_count)

    def or_by_pair(mask: Tensor, words: int) -> Tensor:
        out = torch.zeros(pairs, words, dtype=torch.long, device=device)
        return out.index_add_(0, matches.pair[fixed_ids], mask[fixed_ids])  # fixed spans are disjoint

    zeros = torch.zeros(pairs, dtype=torch.long, device=device)
    rows = _Rows(
        torch.arange(pairs, device=device), or_by_pair(mask1, words1), or_by_pair(mask2, words2),
        zeros, zeros, zeros, zeros - 1, zeros,
    )
    parents: list[Tensor] = []
    taken: list[Tensor] = []
    final_row = torch.zeros(pairs, dtype=torch.long, device=device)
    chunks = torch.zeros(pairs, dtype=torch.long, device=device)
    max_len2 = int(len2.max()) if pairs else 0
    for position in range(max_len2 + 1):
        ends = len2[rows.pair] == position
        if bool(ends.any()):
            done = torch.nonzero(ends).squeeze(1)
            closing = rows.take(done)
            closing = closing._replace(chunks=closing.chunks + (closing.last_end != -1).long())
            order = _rank_order(closing)
            best = order[_first_of_pair(closing.pair[order])]
            final_row[closing.pair[best]] = done[best]
            chunks[closing.pair[best]] = closing.chunks[best]
        if position == max_len2:
            break
        live = torch.nonzero(~ends).squeeze(1)
        rows, parent, match = _step(rows.take(live), position, matches, mask1, mask2, fixed_at, offset2, free_ids, free_count, free_first)
        order = _keep_beam(rows, _rank_order(rows), beam)
        rows = rows.take(order)
        parents.append(live[parent[order]])
        taken.append(match[order])

    chosen = torch.zeros(total, dtype=torch.bool, device=device)
    current = final_row.clone()
    # back-pointers: after step t the rows live at time t + 1; a pair that ended at time e starts at final_row
    for time in range(max_len2, 0, -1):
        walking = torch.nonzero(len2 >= time).squeeze(1)
        if walking.numel() == 0:
            continue
        row = current[walking]
        match = taken[time - 1][row]
        chosen[match[match >= 0]] = True
        current[walking] = parents[time - 1][row]
    return Alignment(chosen, chunks)


def _first_of_pair(pair: Tensor) -> Tensor:
    first = torch.ones_like(pair, dtype=torch.bool)
    first[1:] = pair[1:] != pair[:-1]
    return torch.nonzero(first).squeeze(1)


def _step(
    rows: _Rows, position: int, m: Matches, mask1: Tensor, mask2: Tensor, fixed_at: Tensor, offset2: Tensor,
    free_ids: Tensor, free_count: Tensor, free_first: Tensor,
) -> tuple[_Rows, Tensor, Tensor]:
    """Expand every row at line-2 ``position``: ``(children, parent row of each, match taken or -1)``.

    Children of one parent are laid out as the jar appends them: its free candidates that fit (candidate order),
    then the skip child; a parent whose position is in use has one child (continue, or take the fixed match).
    """
    device = rows.pair.device
    count = rows.pair.numel()
    flat = offset2[rows.pair] + position
    in_use = _bit_at(rows.used2, position)
    fixed_here = fixed_at[flat]
    takes_fixed = in_use & (position >= rows.idx)
    dropped = takes_fixed & (fixed_here < 0)  # the jar drops such a path (cannot happen with consistent input)

    n_candidates = torch.where(in_use, 0, free_count[flat])
    first_candidate = segment_starts(n_candidates)
    owner = segment_ids(n_candidates)
    k = torch.arange(owner.numel(), device=device) - first_candidate[owner]
    candidate = free_ids[free_first[flat[owner]] + k]
    fits = ((rows.used1[owner] & mask1[candidate]) == 0).all(1) & ((rows.used2[owner] & mask2[candidate]) == 0).all(1)
    step = (m.start[candidate] - m.match_start[candidate]).abs() * fits
    before = torch.cumsum(step, 0) - step
    before_in_row = before - before[first_candidate[owner]] if owner.numel() else before
    step_total = torch.zeros(count, dtype=torch.long, device=device).index_add_(0, owner, step)
    fitting = torch.zeros(count, dtype=torch.long, device=device).index_add_(0, owner, fits.long())

    n_children = torch.where(in_use, (~dropped).long(), fitting + 1)
    base = segment_starts(n_children)
    rank_in_row = torch.cumsum(fits.long(), 0) - fits.long()
    rank_in_row = rank_in_row - rank_in_row[first_candidate[owner]] if owner.numel() else rank_in_row

    # children that take a free candidate
    keep = torch.nonzero(fits).squeeze(1)
    parent_c, match_c = owner[keep], candidate[keep]
    taking = _apply(rows.take(parent_c), m, match_c, mask1, mask2)
    taking = taking._replace(distance=rows.distance[parent_c] + before_in_row[keep])
    slot_c = base[parent_c] + rank_in_row[keep]

    # one more child per parent: skip, continue, or the fixed match
    single = torch.nonzero(~dropped).squeeze(1)
    parent_s = single
    plain = rows.take(single)
    fixed_match = fixed_here[single].clamp_min(0)
    with_fixed = _apply(plain, m, fixed_match, mask1, mask2)
    with_fixed = with_fixed._replace(
        distance=plain.distance + (m.start[fixed_match] - m.match_start[fixed_match]).abs()
    )
    skipped = plain._replace(
        chunks=plain.chunks + (plain.last_end != -1).long(),
        last_end=torch.full_like(plain.last_end, -1),
        idx=plain.idx + 1,
        distance=plain.distance + step_total[single],
    )
    use_fixed, use_skip = takes_fixed[single], ~in_use[single]
    other = _Rows(*(
        torch.where(_expand_as(use_fixed, p), w, torch.where(_expand_as(use_skip, p), s, p))
        for p, w, s in zip(plain, with_fixed, skipped)
    ))
    match_s = torch.where(use_fixed, fixed_here[single], -1)
    slot_s = base[single] + torch.where(use_skip, fitting[single], 0)

    total = int(n_children.sum())
    slots = torch.cat((slot_c, slot_s))
    children = _Rows(*(
        torch.empty((total, *a.shape[1:]), dtype=a.dtype, device=device).index_copy_(0, slots, torch.cat((a, b)))
        for a, b in zip(taking, other)
    ))
    parent = torch.empty(total, dtype=torch.long, device=device).index_copy_(0, slots, torch.cat((parent_c, parent_s)))
    match = torch.empty(total, dtype=torch.long, device=device).index_copy_(0, slots, torch.cat((match_c, match_s)))
    return children, parent, match


def _expand_as(flag: Tensor, like: Tensor) -> Tensor:
    return flag.view(-1, *([1] * (like.dim() - 1)))
