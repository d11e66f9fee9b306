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

Tensor layout: only pairs with a free (non-fixed) candidate are searched; the others take their fixed matches. The
paths of all searched pairs are rows of three flat tensors (``pair``, the used-word bitset ``int64[R, W]`` of both
lines, five counters ``int32[R, 5]``); one step per line-2 position expands every live row into children that
carry counters only (placed in Java's insertion order by arithmetic, not sorted; a candidate's fit is read from
the four bitset words its spans touch), one stable sort ranks them, a per-pair cut keeps ``beam``, and only the
kept children get bitsets (the parent's, OR the match's words). The chosen matches are recovered by
back-pointers; chunks are counted on them as the jar's final count does. Host synchronisations: a few per line-2
position (row counts), none per pair.

Memory is linear in the candidates ``M`` (a few int64 per candidate: no per-candidate bitset), plus per step the
children of the live paths and ``beam`` bitsets per pair (``(len1 + len2) / 64`` words each), plus ``beam``
back-pointers per pair and line-2 position (``gpumetrics.text.meteor.jar.pair_bytes`` estimates it). Work per step is linear in the
children: ``O(beam · M)`` for a pair, where the jar also copies ``O(len1 + len2)`` words per child.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from gpumetrics.kernels.ragged import offsets_in_segment, segment_ids, segment_starts

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


def _low_bits(count: Tensor) -> Tensor:
    """``int64`` with the lowest ``count`` bits set (``0 <= count <= 64``; two's complement wraps bit 63)."""
    return torch.where(count >= _BITS, -1, (torch.ones_like(count) << count.clamp_max(_BITS - 1)) - 1)


def _touch(start: Tensor, length: Tensor, column_offset: int) -> tuple[Tensor, Tensor]:
    """The bitset words a span's first and last positions fall in (``+ column_offset``) and the span's bits in each.

    A span of at most 65 positions lies in those two words (spans are single words or paraphrase phrases); a span
    inside one word lists it twice with the same bits. ``(columns int64[M, 2], bits int64[M, 2])``.
    """
    end = start + length
    first = torch.div(start, _BITS, rounding_mode="floor")
    last = torch.div(end - 1, _BITS, rounding_mode="floor")
    bits = []
    for column in (first, last):
        base = column * _BITS
        low, high = (start - base).clamp(0, _BITS), (end - base).clamp(0, _BITS)
        bits.append(_low_bits(high) & ~_low_bits(low))
    return torch.stack((first, last), 1) + column_offset, torch.stack(bits, 1)


def _span_bits_into(bits: Tensor, row: Tensor, start: Tensor, length: Tensor, column_offset: int) -> None:
    """OR the positions of disjoint spans into ``bits[row[k]]`` (words ``column_offset + q // 64``), in place."""
    span = segment_ids(length)
    position = start.index_select(0, span) + offsets_in_segment(length, span)
    word = row.index_select(0, span) * bits.shape[1] + column_offset + torch.div(position, _BITS, rounding_mode="floor")
    # disjoint spans set distinct bits, so a sum is an OR (two's complement wraps bit 63 correctly)
    bits.view(-1).index_add_(0, word, torch.ones_like(position) << (position % _BITS))


def _fixed_matches(m: Matches, len1: Tensor, len2: Tensor) -> Tensor:
    """``BoolTensor[M]``: the only candidate at its line-2 start, and every word it touches covered once."""
    device = m.pair.device
    offset1, offset2 = segment_starts(len1), segment_starts(len2)
    flat2 = offset2[m.pair] + m.start
    at_start = torch.zeros(int(len2.sum()), dtype=torch.long, device=device).index_add_(0, flat2, torch.ones_like(flat2))
    shared = torch.zeros(m.pair.numel(), dtype=torch.long, device=device)
    for offset, start, length, size in ((offset1, m.match_start, m.match_length, len1), (offset2, m.start, m.length, len2)):
        span = segment_ids(length)
        position = offset[m.pair].index_select(0, span) + start.index_select(0, span) + offsets_in_segment(length, span)
        coverage = torch.zeros(int(size.sum()), dtype=torch.long, device=device).index_add_(0, position, torch.ones_like(position))
        shared.index_add_(0, span, (coverage[position] != 1).long())
    return (at_start[flat2] == 1) & (shared == 0)


def count_chunks(m: Matches, chosen: Tensor, pairs: int) -> Tensor:
    """``LongTensor[P]``: runs of chosen matches adjacent in line 2 and contiguous in line 1 (the jar's count)."""
    index = torch.nonzero(chosen).squeeze(1)  # already in (pair, start) order
    pair, start, match_start = m.pair[index], m.start[index], m.match_start[index]
    new_chunk = torch.ones_like(pair, dtype=torch.bool)
    if index.numel() > 1:
        previous_end2 = start[:-1] + m.length[index[:-1]]
        previous_end1 = match_start[:-1] + m.match_length[index[:-1]]
        new_chunk[1:] = (pair[1:] != pair[:-1]) | (start[1:] != previous_end2) | (match_start[1:] != previous_end1)
    return torch.zeros(pairs, dtype=torch.long, device=chosen.device).index_add_(0, pair, new_chunk.long())


# the counters of a path
_SCORE, _CHUNKS, _IDX, _LAST, _DISTANCE = range(5)


class _Rows(NamedTuple):
    """Live partial alignments, one row each.

    Attributes:
        pair: ``LongTensor[R]``.
        bits: ``LongTensor[R, W1 + W2]`` used words of line 1, then of line 2.
        state: ``IntTensor[R, 5]``: weighted matches of both lines (the jar's matches1 + matches2), chunks, the next
            line-2 position the path expects, the line-1 end of the open chunk (-1: none), distance.
    """

    pair: Tensor
    bits: Tensor
    state: Tensor

    def take(self, index: Tensor) -> "_Rows":
        return _Rows(*(field.index_select(0, index) for field in self))


class _Search(NamedTuple):
    """Per-match data the search reads (matches of the searched pairs only, pairs renumbered)."""

    matches: Matches
    touch_col: Tensor  # int64[M, 4]: the bitset words a match's spans touch (line 1 first/last, line 2 first/last)
    touch_bits: Tensor  # int64[M, 4]: the span's bits in each of those words
    fixed_at: Tensor  # int64[Σ len2]: the fixed match at each line-2 position, -1 if none
    offset2: Tensor  # int64[P]
    free_ids: Tensor  # free candidates grouped by line-2 position (CSR with the two below)
    free_count: Tensor
    free_first: Tensor
    words1: int


def _take_state(state: Tensor, s: _Search, match: Tensor) -> Tensor:
    """Counters after taking ``match[r]``, updated in place on the caller's own copy ``state`` (the distance is the
    caller's: the jar adds it to a different path)."""
    m = s.matches
    last = state[:, _LAST]
    match_start = m.match_start.index_select(0, match)
    state[:, _CHUNKS] += ((last != -1) & (match_start != last)).to(state.dtype)
    state[:, _SCORE] += m.weight_sum.index_select(0, match).to(state.dtype)
    state[:, _IDX] = (m.start.index_select(0, match) + m.length.index_select(0, match)).to(state.dtype)
    state[:, _LAST] = (match_start + m.match_length.index_select(0, match)).to(state.dtype)
    return state


def _rank_order(pair: Tensor, state: Tensor) -> Tensor:
    """Stable order by (pair, more score, fewer chunks, smaller distance): the jar's comparator, ties kept.

    One sort of a packed ``int64`` key when the four ranges fit in 62 bits (always, for sentences of ordinary
    length); otherwise two stable sorts.
    """
    if pair.numel() == 0:
        return pair
    distance, score, chunks = state[:, _DISTANCE].long(), state[:, _SCORE].long(), state[:, _CHUNKS].long()
    top_pair, top_score, top_chunks, top_distance = (int(x) for x in torch.stack((pair.max(), score.max(), chunks.max(), distance.max())).tolist())
    if (top_pair + 1) * (top_score + 1) * (top_chunks + 1) * (top_distance + 1) < 1 << 62:
        key = ((pair * (top_score + 1) + (top_score - score)) * (top_chunks + 1) + chunks) * (top_distance + 1) + distance
        return torch.sort(key, stable=True).indices
    order = torch.sort(chunks * (top_distance + 1) + distance, stable=True).indices
    return order[torch.sort(pair[order] * (top_score + 1) + (top_score - score[order]), stable=True).indices]


def _group_rank(pair: Tensor) -> Tensor:
    """Rank of every item inside its run of equal ``pair`` values."""
    first = torch.ones_like(pair, dtype=torch.bool)
    first[1:] = pair[1:] != pair[:-1]
    position = torch.arange(pair.numel(), device=pair.device)
    return position - torch.cummax(torch.where(first, position, 0), 0).values


def beam_align(matches: Matches, len1: Tensor, len2: Tensor, beam: int = 40) -> Alignment:
    """The jar's best alignment of every pair (see the module docstring).

    Memory: ``O(M + beam · (widest step + P · (len1 + len2) / 64 + Σ len2))`` — linear in the candidates (which
    the jar holds too); bitsets are materialised only for the ``beam`` paths kept per pair, never per candidate.
    Pairs are independent: a caller can align a batch in groups of pairs under a memory budget.

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
    if beam < 1:
        raise ValueError(f"`beam` must be >= 1, got {beam}")
    pairs = len1.numel()
    fixed = _fixed_matches(matches, len1, len2)
    searched = torch.zeros(pairs, dtype=torch.bool, device=len1.device)
    searched[matches.pair[~fixed]] = True
    chosen = fixed & ~searched[matches.pair]
    in_search = torch.nonzero(searched[matches.pair]).squeeze(1)
    if in_search.numel():
        chosen[in_search[_search(matches, fixed, in_search, searched, len1, len2, beam)]] = True
    return Alignment(chosen, count_chunks(matches, chosen, pairs))


def _search(matches: Matches, fixed: Tensor, in_search: Tensor, searched: Tensor, len1: Tensor, len2: Tensor, beam: int) -> Tensor:
    """The beam search over the pairs that have free candidates: the chosen entries of ``in_search``."""
    device = len1.device
    pair_ids = torch.nonzero(searched).squeeze(1)
    if in_search.numel() == matches.pair.numel():  # every pair is searched (long texts): no copy of the matches
        m, pairs = matches, len1.numel()
    else:
        renumber = torch.cumsum(searched.long(), 0) - 1
        m = Matches(renumber[matches.pair[in_search]], *(field[in_search] for field in matches[1:]))
        fixed = fixed[in_search]
        len1, len2 = len1[pair_ids], len2[pair_ids]
        pairs = pair_ids.numel()
    words1 = max(1, -(-int(len1.max()) // _BITS))
    words2 = max(1, -(-int(len2.max()) // _BITS))
    col1, bits1 = _touch(m.match_start, m.match_length, 0)
    col2, bits2 = _touch(m.start, m.length, words1)
    touch_col, touch_bits = torch.cat((col1, col2), 1), torch.cat((bits1, bits2), 1)
    del col1, bits1, col2, bits2
    offset2 = segment_starts(len2)
    flat2 = offset2[m.pair] + m.start
    size2 = int(len2.sum())
    fixed_ids, free_ids = torch.nonzero(fixed).squeeze(1), torch.nonzero(~fixed).squeeze(1)
    fixed_at = torch.full((size2,), -1, dtype=torch.long, device=device)
    fixed_at[flat2[fixed_ids]] = fixed_ids
    free_count = torch.zeros(size2, dtype=torch.long, device=device).index_add_(0, flat2[free_ids], torch.ones_like(free_ids))
    del flat2
    s = _Search(m, touch_col, touch_bits, fixed_at, offset2, free_ids, free_count, segment_starts(free_count), words1)

    # the fixed matches' words are in use from the start (fixed spans are disjoint)
    bits = torch.zeros(pairs, words1 + words2, dtype=torch.long, device=device)
    fixed_pair = m.pair.index_select(0, fixed_ids)
    _span_bits_into(bits, fixed_pair, m.match_start.index_select(0, fixed_ids), m.match_length.index_select(0, fixed_ids), 0)
    _span_bits_into(bits, fixed_pair, m.start.index_select(0, fixed_ids), m.length.index_select(0, fixed_ids), words1)
    state = torch.zeros(pairs, 5, dtype=torch.int32, device=device)  # counters stay far below 2^31
    state[:, _LAST] = -1
    rows = _Rows(torch.arange(pairs, device=device), bits, state)
    parents: list[Tensor] = []
    taken: list[Tensor] = []
    final_row = torch.zeros(pairs, dtype=torch.long, device=device)
    longest = int(len2.max())
    for position in range(longest + 1):
        ends = len2.index_select(0, rows.pair) == position
        some_end = bool(ends.any())
        if some_end:
            done = torch.nonzero(ends).squeeze(1)
            closing = rows.state.index_select(0, done)
            closing[:, _CHUNKS] += (closing[:, _LAST] != -1).to(closing.dtype)
            closing_pair = rows.pair.index_select(0, done)
            order = _rank_order(closing_pair, closing)
            best = order[_group_rank(closing_pair[order]) == 0]
            final_row[closing_pair[best]] = done[best]
        if position == longest:
            break
        if some_end:
            live = torch.nonzero(~ends).squeeze(1)
            rows = rows.take(live)
        pair, state, parent, match = _step(rows, position, s)
        order = _rank_order(pair, state)
        order = order[_group_rank(pair.index_select(0, order)) < beam]
        parent, match = parent.index_select(0, order), match.index_select(0, order)
        rows = _Rows(pair.index_select(0, order), _child_bits(rows.bits, parent, match, s), state.index_select(0, order))
        parents.append(live.index_select(0, parent) if some_end else parent)
        taken.append(match)

    chosen = torch.zeros(m.pair.numel(), dtype=torch.bool, device=device)
    current = final_row
    # after step t the rows live at time t + 1; a pair that ended at time e starts from final_row at e
    for time in range(longest, 0, -1):
        walking = torch.nonzero(len2 >= time).squeeze(1)
        row = current[walking]
        match = taken[time - 1][row]
        chosen[match[match >= 0]] = True
        current = current.clone()
        current[walking] = parents[time - 1][row]
    return chosen


def _child_bits(bits: Tensor, parent: Tensor, match: Tensor, s: _Search) -> Tensor:
    """``int64[R, W]`` used words of the kept children: the parent's, with the words of the match taken (if any).

    A fixed match's words are set from the start, so OR-ing them again changes nothing.
    """
    child = bits.index_select(0, parent)
    took = torch.nonzero(match >= 0).squeeze(1)
    if took.numel():
        taken = match.index_select(0, took)
        flat = (took.unsqueeze(1) * child.shape[1] + s.touch_col.index_select(0, taken)).view(-1)
        values = child.view(-1).index_select(0, flat) | s.touch_bits.index_select(0, taken).view(-1)
        # a span within one word lists that word twice with the same bits, so both writes agree
        child.view(-1).index_copy_(0, flat, values)
    return child


def _step(rows: _Rows, position: int, s: _Search) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Expand every row at line-2 ``position``: ``(pair, counters, parent row, match taken or -1)`` of the children.

    Children of one parent are laid out as the jar appends them: its free candidates that fit (candidate order),
    then the skip child; a parent whose position is in use has one child (continue, or take the fixed match).
    Children carry counters only: the caller ranks and cuts them, then builds the bitsets of the kept ones.
    Gathers are ``index_select`` (several times faster than advanced indexing on CPU; every index is valid).
    """
    device = rows.pair.device
    m = s.matches
    count = rows.pair.numel()
    width = rows.bits.shape[1]
    flat = s.offset2.index_select(0, rows.pair) + position
    column = s.words1 + position // _BITS
    in_use = ((rows.bits[:, column] >> (position % _BITS)) & 1).bool()
    fixed_here = s.fixed_at.index_select(0, flat)
    takes_fixed = in_use & (rows.state[:, _IDX] <= position)
    dropped = takes_fixed & (fixed_here < 0)  # the jar drops such a path (cannot happen with consistent input)

    n_candidates = torch.where(in_use, 0, s.free_count.index_select(0, flat))
    first_candidate = segment_starts(n_candidates)
    owner = segment_ids(n_candidates)
    k = torch.arange(owner.numel(), device=device) - first_candidate.index_select(0, owner)
    candidate = s.free_ids.index_select(0, s.free_first.index_select(0, flat.index_select(0, owner)) + k)
    del k
    # the four touched words of each (row, candidate), read straight from the rows' bitsets
    cell = (owner.unsqueeze(1) * width + s.touch_col.index_select(0, candidate)).view(-1)
    used_bits = rows.bits.view(-1).index_select(0, cell).view(-1, 4)
    del cell
    fits = ((used_bits & s.touch_bits.index_select(0, candidate)) == 0).all(1)
    del used_bits
    step = (m.start.index_select(0, candidate) - m.match_start.index_select(0, candidate)).abs() * fits
    fits_long = fits.long()
    before = torch.cumsum(step, 0) - step
    rank = torch.cumsum(fits_long, 0) - fits_long
    if owner.numel():
        first_of_owner = first_candidate.index_select(0, owner)
        before = before - before.index_select(0, first_of_owner)
        rank = rank - rank.index_select(0, first_of_owner)
    step_total = torch.zeros(count, dtype=torch.long, device=device).index_add_(0, owner, step)
    fitting = torch.zeros(count, dtype=torch.long, device=device).index_add_(0, owner, fits_long)
    base = segment_starts(torch.where(in_use, (~dropped).long(), fitting + 1))

    # children that take a free candidate: the parent's distance grew by the free siblings before them
    keep = torch.nonzero(fits).squeeze(1)
    parent_c, match_c = owner.index_select(0, keep), candidate.index_select(0, keep)
    state_c = _take_state(rows.state.index_select(0, parent_c), s, match_c)
    state_c[:, _DISTANCE] += before.index_select(0, keep).to(state_c.dtype)
    slot_c = base.index_select(0, parent_c) + rank.index_select(0, keep)
    del owner, candidate, step, before, rank, fits, fits_long, keep

    # one more child per parent: skip (carrying every free sibling's distance), continue, or the fixed match
    if bool(dropped.any()):
        single = torch.nonzero(~dropped).squeeze(1)
        state = rows.state.index_select(0, single)
        use_skip, skip_distance = ~in_use.index_select(0, single), step_total.index_select(0, single)
        fixed_rows = torch.nonzero(takes_fixed.index_select(0, single)).squeeze(1)
        base_s, fitting_s = base.index_select(0, single), fitting.index_select(0, single)
    else:
        single, state = torch.arange(count, device=device), rows.state.clone()
        use_skip, skip_distance = ~in_use, step_total
        fixed_rows = torch.nonzero(takes_fixed).squeeze(1)
        base_s, fitting_s = base, fitting
    match_s = torch.full_like(single, -1)
    if fixed_rows.numel():
        fixed_match = fixed_here.index_select(0, single.index_select(0, fixed_rows))
        with_fixed = _take_state(state.index_select(0, fixed_rows), s, fixed_match)
        fixed_distance = (m.start.index_select(0, fixed_match) - m.match_start.index_select(0, fixed_match)).abs()
        with_fixed[:, _DISTANCE] += fixed_distance.to(state.dtype)
    closes = use_skip & (state[:, _LAST] != -1)
    state[:, _CHUNKS] += closes.to(state.dtype)
    state[:, _LAST].masked_fill_(use_skip, -1)
    state[:, _IDX] += use_skip.to(state.dtype)
    state[:, _DISTANCE] += skip_distance.to(state.dtype)
    if fixed_rows.numel():
        state.index_copy_(0, fixed_rows, with_fixed)
        match_s.index_copy_(0, fixed_rows, fixed_match)
    slot_s = base_s + torch.where(use_skip, fitting_s, 0)
    total = slot_c.numel() + slot_s.numel()

    def placed(taking_child: Tensor, other_child: Tensor) -> Tensor:
        out = taking_child.new_empty((total, *taking_child.shape[1:]))
        return out.index_copy_(0, slot_c, taking_child).index_copy_(0, slot_s, other_child)

    pair = rows.pair
    return (placed(pair.index_select(0, parent_c), pair.index_select(0, single)), placed(state_c, state),
            placed(parent_c, single), placed(match_c, match_s))
