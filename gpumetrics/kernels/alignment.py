"""METEOR's word alignment as a batched beam search on the host: every (hypothesis, reference) pair of a batch at once.

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

**Host work, numpy arrays.** The search is a loop over line-2 positions whose every step reads the sizes it made
(rows alive, children kept): on a GPU each such read is a host synchronisation, and the arrays of one step are
short (a few paths per pair), so kernel launches would dominate. It therefore runs on the host in numpy (several
times cheaper per operation than torch on small arrays, and no device involved); the caller uploads only the
statistics it derives (``gpumetrics.text.meteor.jar``: one upload per batch). Inputs are ``int64`` numpy arrays
(CPU tensors are accepted and read as arrays).

Array layout: only pairs with a free (non-fixed) candidate are searched; the others take their fixed matches. The
paths of all searched pairs are rows of three flat arrays (``pair``, the used-word bitset ``int64[R, W]`` of both
lines, five counters ``int32[R, 5]``); one step per line-2 position expands every live row into children that
carry counters only (placed in Java's insertion order by arithmetic, not sorted; a candidate's fit is read from
the four bitset words its spans touch), one stable sort ranks them, a per-pair cut keeps ``beam``, and only the
kept children get bitsets (the parent's, OR the match's words). The chosen matches are recovered by
back-pointers; chunks are counted on them as the jar's final count does.

Memory is linear in the candidates ``M`` (a few int64 per candidate: no per-candidate bitset), plus per step the
children of the live paths and ``beam`` bitsets per pair (``(len1 + len2) / 64`` words each), plus ``beam``
back-pointers per pair and line-2 position (``gpumetrics.text.meteor.jar.pair_bytes`` estimates it). Work per step
is linear in the children: ``O(beam · M)`` for a pair, where the jar also copies ``O(len1 + len2)`` words per child.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

import numpy as np

from gpumetrics.kernels.ragged import size_buckets

_BITS = 64
_PAD_SLACK_WORDS = 1 << 16  # bitset words (per path) padding may waste over all pairs before pairs are grouped


# ------------------------------------------------------------------------------------- ragged arrays on the host
def ragged_ids(lengths: np.ndarray) -> np.ndarray:
    """The segment of every item of segments of ``lengths``: ``int64[Σ lengths]``.

    Example:
        >>> ragged_ids(np.array([2, 0, 1])).tolist()
        [0, 0, 2]
    """
    return np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)


def ragged_starts(lengths: np.ndarray) -> np.ndarray:
    """Index of the first item of every segment (exclusive prefix sum): ``int64[S]``.

    Example:
        >>> ragged_starts(np.array([2, 0, 1])).tolist()
        [0, 2, 2]
    """
    return np.cumsum(lengths) - lengths


def ragged_offsets(lengths: np.ndarray, ids: Optional[np.ndarray] = None) -> np.ndarray:
    """Position of every item inside its segment: ``int64[Σ lengths]`` (``ids``: :func:`ragged_ids`, if known).

    Example:
        >>> ragged_offsets(np.array([2, 0, 3])).tolist()
        [0, 1, 0, 1, 2]
    """
    if ids is None:
        ids = ragged_ids(lengths)
    return np.arange(ids.size, dtype=np.int64) - ragged_starts(lengths)[ids]


def _host(values: Any) -> np.ndarray:
    """An ``int64`` numpy array of host data (a numpy array, a CPU tensor or a list)."""
    return np.asarray(values, dtype=np.int64)


class Matches(NamedTuple):
    """Candidate matches of P pairs, sorted by ``(pair, start)`` and, within one start, in the matchers' order.

    Attributes:
        pair: ``int64[M]`` pair of each match.
        start, length: ``int64[M]`` line-2 (reference) span.
        match_start, match_length: ``int64[M]`` line-1 (hypothesis) span.
        weight_sum: ``int64[M]`` the search weight of the match, already truncated as the caller's search does.
    """

    pair: np.ndarray
    start: np.ndarray
    length: np.ndarray
    match_start: np.ndarray
    match_length: np.ndarray
    weight_sum: np.ndarray


class Alignment(NamedTuple):
    """The best alignment of every pair.

    Attributes:
        chosen: ``bool[M]`` the matches of the best path.
        chunks: ``int64[P]`` its number of chunks.
    """

    chosen: np.ndarray
    chunks: np.ndarray


def _low_bits(count: np.ndarray) -> np.ndarray:
    """``int64`` with the lowest ``count`` bits set (``0 <= count <= 64``; two's complement wraps bit 63)."""
    shifted = np.left_shift(np.int64(1), np.minimum(count, _BITS - 1))
    return np.where(count >= _BITS, np.int64(-1), shifted - 1)


def _touch(start: np.ndarray, length: np.ndarray, column_offset: int) -> tuple[np.ndarray, np.ndarray]:
    """The bitset words a span's first and last positions fall in (``+ column_offset``) and the span's bits in each.

    A span of at most 65 positions lies in those two words (spans are single words or paraphrase phrases); a span
    inside one word lists it twice with the same bits. ``(columns int64[M, 2], bits int64[M, 2])``.
    """
    end = start + length
    first = start // _BITS
    last = (end - 1) // _BITS
    bits = []
    for column in (first, last):
        base = column * _BITS
        low, high = np.clip(start - base, 0, _BITS), np.clip(end - base, 0, _BITS)
        bits.append(_low_bits(high) & ~_low_bits(low))
    return np.stack((first, last), 1) + column_offset, np.stack(bits, 1)


def _span_bits_into(bits: np.ndarray, row: np.ndarray, start: np.ndarray, length: np.ndarray,
                    column_offset: int) -> None:
    """OR the positions of spans into ``bits[row[k]]`` (words ``column_offset + q // 64``), in place."""
    span = ragged_ids(length)
    position = start[span] + ragged_offsets(length, span)
    word = row[span] * bits.shape[1] + column_offset + position // _BITS
    np.bitwise_or.at(bits.reshape(-1), word, np.left_shift(np.int64(1), position % _BITS))


def _fixed_matches(m: Matches, len1: np.ndarray, len2: np.ndarray) -> np.ndarray:
    """``bool[M]``: the only candidate at its line-2 start, and every word it touches covered once."""
    offset1, offset2 = ragged_starts(len1), ragged_starts(len2)
    flat2 = offset2[m.pair] + m.start
    at_start = np.bincount(flat2, minlength=int(len2.sum()))
    shared = np.zeros(m.pair.size, dtype=bool)
    for offset, start, length, size in ((offset1, m.match_start, m.match_length, len1),
                                        (offset2, m.start, m.length, len2)):
        span = ragged_ids(length)
        position = offset[m.pair][span] + start[span] + ragged_offsets(length, span)
        coverage = np.bincount(position, minlength=int(size.sum()))
        shared[span[coverage[position] != 1]] = True
    return (at_start[flat2] == 1) & ~shared


def count_chunks(m: Matches, chosen: np.ndarray, pairs: int) -> np.ndarray:
    """``int64[P]``: runs of chosen matches adjacent in line 2 and contiguous in line 1 (the jar's count)."""
    index = np.flatnonzero(chosen)  # already in (pair, start) order
    pair, start, match_start = m.pair[index], m.start[index], m.match_start[index]
    new_chunk = np.ones(pair.size, dtype=bool)
    if index.size > 1:
        previous_end2 = start[:-1] + m.length[index[:-1]]
        previous_end1 = match_start[:-1] + m.match_length[index[:-1]]
        new_chunk[1:] = (pair[1:] != pair[:-1]) | (start[1:] != previous_end2) | (match_start[1:] != previous_end1)
    return np.bincount(pair[new_chunk], minlength=pairs).astype(np.int64)


# the counters of a path
_SCORE, _CHUNKS, _IDX, _LAST, _DISTANCE = range(5)


class _Rows(NamedTuple):
    """Live partial alignments, one row each.

    Attributes:
        pair: ``int64[R]``.
        bits: ``int64[R, W1 + W2]`` used words of line 1, then of line 2.
        state: ``int32[R, 5]``: weighted matches of both lines (the jar's matches1 + matches2), chunks, the next
            line-2 position the path expects, the line-1 end of the open chunk (-1: none), distance.
    """

    pair: np.ndarray
    bits: np.ndarray
    state: np.ndarray

    def take(self, index: np.ndarray) -> "_Rows":
        return _Rows(*(field[index] for field in self))


class _Search(NamedTuple):
    """Per-match data the search reads (matches of the searched pairs only, pairs renumbered)."""

    matches: Matches
    touch_col: np.ndarray  # int64[M, 4]: the bitset words a match's spans touch (line 1 first/last, line 2 first/last)
    touch_bits: np.ndarray  # int64[M, 4]: the span's bits in each of those words
    fixed_at: np.ndarray  # int64[Σ len2]: the fixed match at each line-2 position, -1 if none
    offset2: np.ndarray  # int64[P]
    free_ids: np.ndarray  # free candidates grouped by line-2 position (CSR with the two below)
    free_count: np.ndarray
    free_first: np.ndarray
    words1: int


def _rank_order(pair: np.ndarray, state: np.ndarray) -> np.ndarray:
    """Stable order by (pair, more score, fewer chunks, smaller distance): the jar's comparator, ties kept.

    One sort of a packed ``int64`` key when the four ranges fit in 62 bits (always, for sentences of ordinary
    length); otherwise two stable sorts.
    """
    if pair.size == 0:
        return pair
    distance, score, chunks = (state[:, k].astype(np.int64) for k in (_DISTANCE, _SCORE, _CHUNKS))
    top_pair, top_score, top_chunks, top_distance = (int(pair.max()), int(score.max()), int(chunks.max()),
                                                     int(distance.max()))
    if (top_pair + 1) * (top_score + 1) * (top_chunks + 1) * (top_distance + 1) < 1 << 62:
        key = (((pair * (top_score + 1) + (top_score - score)) * (top_chunks + 1) + chunks) * (top_distance + 1)
               + distance)
        return np.argsort(key, kind="stable")
    order = np.argsort(chunks * (top_distance + 1) + distance, kind="stable")
    return order[np.argsort(pair[order] * (top_score + 1) + (top_score - score[order]), kind="stable")]


def _group_rank(pair: np.ndarray) -> np.ndarray:
    """Rank of every item inside its run of equal ``pair`` values."""
    first = np.ones(pair.size, dtype=bool)
    first[1:] = pair[1:] != pair[:-1]
    position = np.arange(pair.size, dtype=np.int64)
    return position - np.maximum.accumulate(np.where(first, position, 0)) if pair.size else position


def beam_align(matches: Matches, len1: Any, len2: Any, beam: int = 40) -> Alignment:
    """The jar's best alignment of every pair (see the module docstring).

    Memory: ``O(M + beam · (widest step + P · (len1 + len2) / 64 + Σ len2))`` — linear in the candidates (which
    the jar holds too); bitsets are materialised only for the ``beam`` paths kept per pair, never per candidate.
    Pairs are independent: a caller can align a batch in groups of pairs under a memory budget.

    Args:
        matches: M candidates of P pairs, sorted by pair, then line-2 start, then candidate order (``int64``
            arrays; CPU tensors are read as arrays).
        len1: ``int64[P]`` words of each pair's line 1 (hypothesis).
        len2: ``int64[P]`` words of each pair's line 2 (reference).
        beam: partial alignments kept per pair and position (the jar's 40).

    Returns:
        :class:`Alignment`: the chosen matches ``bool[M]`` and the chunks of every pair ``int64[P]`` (numpy).

    Example:
        >>> a = np.array
        >>> # "a b" vs "a a b": "a" matches either reference "a", "b" is fixed
        >>> m = Matches(a([0, 0, 0]), a([0, 1, 2]), a([1, 1, 1]), a([0, 0, 1]), a([1, 1, 1]), a([2, 2, 2]))
        >>> result = beam_align(m, a([2]), a([3]))
        >>> result.chosen.tolist(), result.chunks.tolist()
        ([False, True, True], [1])
    """
    if beam < 1:
        raise ValueError(f"`beam` must be >= 1, got {beam}")
    matches = Matches(*(_host(field) for field in matches))
    len1, len2 = _host(len1), _host(len2)
    pairs = len1.size
    fixed = _fixed_matches(matches, len1, len2)
    searched = np.zeros(pairs, dtype=bool)
    searched[matches.pair[~fixed]] = True
    in_search_mask = searched[matches.pair]
    chosen = fixed & ~in_search_mask
    in_search = np.flatnonzero(in_search_mask)
    if in_search.size:
        for members in _search_groups(searched, len1, len2):
            part = in_search if members is searched else in_search[members[matches.pair[in_search]]]
            chosen[part[_search(matches, fixed, part, members, len1, len2, beam)]] = True
    return Alignment(chosen, count_chunks(matches, chosen, pairs))


def _search_groups(searched: np.ndarray, len1: np.ndarray, len2: np.ndarray) -> list[np.ndarray]:
    """The searched pairs (``bool[P]``) in groups searched one after the other: all of them at once, or buckets of
    similar bitset widths when padding every path's bitset to the longest lines would waste more than the pairs' own
    words plus ``_PAD_SLACK_WORDS``: one pair of 16,000-word lines among 5,000 short pairs gave each of their paths
    500 bitset words."""
    pair_ids = np.flatnonzero(searched)
    words1, words2 = (np.maximum(1, -(-lengths[pair_ids] // _BITS)) for lengths in (len1, len2))
    buckets = size_buckets(words1, words2, _PAD_SLACK_WORDS)
    if buckets is None:
        return [searched]
    groups = []
    for bucket in buckets:
        members = np.zeros_like(searched)
        members[pair_ids[bucket]] = True
        groups.append(members)
    return groups


def _search(matches: Matches, fixed: np.ndarray, in_search: np.ndarray, searched: np.ndarray, len1: np.ndarray,
            len2: np.ndarray, beam: int) -> np.ndarray:
    """The beam search over the pairs that have free candidates: the chosen entries of ``in_search``."""
    pair_ids = np.flatnonzero(searched)
    if in_search.size == matches.pair.size:  # every pair is searched (long texts): no copy of the matches
        m, pairs = matches, len1.size
    else:
        renumber = np.cumsum(searched) - 1
        m = Matches(renumber[matches.pair[in_search]], *(field[in_search] for field in matches[1:]))
        fixed = fixed[in_search]
        len1, len2 = len1[pair_ids], len2[pair_ids]
        pairs = pair_ids.size
    words1 = max(1, -(-int(len1.max()) // _BITS))
    words2 = max(1, -(-int(len2.max()) // _BITS))
    col1, bits1 = _touch(m.match_start, m.match_length, 0)
    col2, bits2 = _touch(m.start, m.length, words1)
    touch_col, touch_bits = np.concatenate((col1, col2), 1), np.concatenate((bits1, bits2), 1)
    del col1, bits1, col2, bits2
    offset2 = ragged_starts(len2)
    flat2 = offset2[m.pair] + m.start
    size2 = int(len2.sum())
    fixed_ids, free_ids = np.flatnonzero(fixed), np.flatnonzero(~fixed)
    fixed_at = np.full(size2, -1, dtype=np.int64)
    fixed_at[flat2[fixed_ids]] = fixed_ids
    free_count = np.bincount(flat2[free_ids], minlength=size2).astype(np.int64)
    del flat2
    s = _Search(m, touch_col, touch_bits, fixed_at, offset2, free_ids, free_count, ragged_starts(free_count), words1)

    # the fixed matches' words are in use from the start (fixed spans are disjoint)
    bits = np.zeros((pairs, words1 + words2), dtype=np.int64)
    fixed_pair = m.pair[fixed_ids]
    _span_bits_into(bits, fixed_pair, m.match_start[fixed_ids], m.match_length[fixed_ids], 0)
    _span_bits_into(bits, fixed_pair, m.start[fixed_ids], m.length[fixed_ids], words1)
    state = np.zeros((pairs, 5), dtype=np.int32)  # counters stay far below 2^31
    state[:, _LAST] = -1
    rows = _Rows(np.arange(pairs, dtype=np.int64), bits, state)
    parents: list[np.ndarray] = []
    taken: list[np.ndarray] = []
    final_row = np.zeros(pairs, dtype=np.int64)
    longest = int(len2.max())
    # pairs by length: the rows of the pairs that end at a position are closed there
    ending = np.bincount(len2, minlength=longest + 1)
    for position in range(longest + 1):
        some_end = ending[position] > 0
        if some_end:
            ends = len2[rows.pair] == position
            done = np.flatnonzero(ends)
            closing = rows.state[done]
            closing[:, _CHUNKS] += closing[:, _LAST] != -1
            closing_pair = rows.pair[done]
            order = _rank_order(closing_pair, closing)
            best = order[_group_rank(closing_pair[order]) == 0]
            final_row[closing_pair[best]] = done[best]
        if position == longest:
            break
        if some_end:
            live = np.flatnonzero(~ends)
            rows = rows.take(live)
        pair, state, parent, match = _step(rows, position, s)
        order = _rank_order(pair, state)
        order = order[_group_rank(pair[order]) < beam]
        parent, match = parent[order], match[order]
        rows = _Rows(pair[order], _child_bits(rows.bits, parent, match, s), state[order])
        parents.append(live[parent] if some_end else parent)
        taken.append(match)

    chosen = np.zeros(m.pair.size, dtype=bool)
    current = final_row
    # after step t the rows live at time t + 1; a pair that ended at time e starts from final_row at e
    by_length = np.argsort(-len2, kind="stable")  # pairs walking at time t: the first (len2 >= t) of them
    walking_count = np.cumsum(ending[::-1])[::-1]  # walking_count[t]: pairs with len2 >= t
    for time in range(longest, 0, -1):
        walking = by_length[: walking_count[time]]
        row = current[walking]
        match = taken[time - 1][row]
        chosen[match[match >= 0]] = True
        current[walking] = parents[time - 1][row]
    return chosen


def _child_bits(bits: np.ndarray, parent: np.ndarray, match: np.ndarray, s: _Search) -> np.ndarray:
    """``int64[R, W]`` used words of the kept children: the parent's, with the words of the match taken (if any).

    A fixed match's words are set from the start, so OR-ing them again changes nothing.
    """
    child = bits[parent]
    took = np.flatnonzero(match >= 0)
    if took.size:
        taken = match[took]
        flat = (took[:, None] * child.shape[1] + s.touch_col[taken]).reshape(-1)
        cells = child.reshape(-1)
        # a span within one word lists that word twice with the same bits, so both writes agree
        cells[flat] = cells[flat] | s.touch_bits[taken].reshape(-1)
    return child


def _take_state(state: np.ndarray, s: _Search, match: np.ndarray) -> np.ndarray:
    """Counters after taking ``match[r]``, updated in place on the caller's own copy ``state`` (the distance is the
    caller's: the jar adds it to a different path)."""
    m = s.matches
    last = state[:, _LAST]
    match_start = m.match_start[match]
    state[:, _CHUNKS] += (last != -1) & (match_start != last)
    state[:, _SCORE] += m.weight_sum[match].astype(np.int32)
    state[:, _IDX] = m.start[match] + m.length[match]
    state[:, _LAST] = match_start + m.match_length[match]
    return state


def _step(rows: _Rows, position: int, s: _Search) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Expand every row at line-2 ``position``: ``(pair, counters, parent row, match taken or -1)`` of the children.

    Children of one parent are laid out as the jar appends them: its free candidates that fit (candidate order),
    then the skip child; a parent whose position is in use has one child (continue, or take the fixed match).
    Children carry counters only: the caller ranks and cuts them, then builds the bitsets of the kept ones.
    """
    m = s.matches
    count = rows.pair.size
    width = rows.bits.shape[1]
    flat = s.offset2[rows.pair] + position
    column = s.words1 + position // _BITS
    in_use = ((rows.bits[:, column] >> (position % _BITS)) & 1).astype(bool)
    fixed_here = s.fixed_at[flat]
    takes_fixed = in_use & (rows.state[:, _IDX] <= position)
    dropped = takes_fixed & (fixed_here < 0)  # the jar drops such a path (cannot happen with consistent input)

    n_candidates = np.where(in_use, 0, s.free_count[flat])
    first_candidate = ragged_starts(n_candidates)
    owner = ragged_ids(n_candidates)
    first_of_owner = first_candidate[owner]
    candidate = s.free_ids[s.free_first[flat[owner]] + np.arange(owner.size, dtype=np.int64) - first_of_owner]
    # the four touched words of each (row, candidate), read straight from the rows' bitsets
    cell = owner[:, None] * width + s.touch_col[candidate]
    fits = ~((rows.bits.reshape(-1)[cell] & s.touch_bits[candidate]) != 0).any(1)
    del cell
    step = np.abs(m.start[candidate] - m.match_start[candidate]) * fits
    before = np.cumsum(step) - step
    rank = np.cumsum(fits) - fits
    if owner.size:
        before = before - before[first_of_owner]
        rank = rank - rank[first_of_owner]
    step_total = np.bincount(owner, weights=step, minlength=count).astype(np.int64)
    fitting = np.bincount(owner[fits], minlength=count).astype(np.int64)
    base = ragged_starts(np.where(in_use, (~dropped).astype(np.int64), fitting + 1))

    # children that take a free candidate: the parent's distance grew by the free siblings before them
    keep = np.flatnonzero(fits)
    parent_c, match_c = owner[keep], candidate[keep]
    state_c = _take_state(rows.state[parent_c], s, match_c)
    state_c[:, _DISTANCE] += before[keep].astype(np.int32)
    slot_c = base[parent_c] + rank[keep]
    del owner, candidate, step, before, rank, fits, keep

    # one more child per parent: skip (carrying every free sibling's distance), continue, or the fixed match
    if dropped.any():
        single = np.flatnonzero(~dropped)
        state = rows.state[single]
        use_skip, skip_distance = ~in_use[single], step_total[single]
        fixed_rows = np.flatnonzero(takes_fixed[single])
        base_s, fitting_s = base[single], fitting[single]
    else:
        single, state = np.arange(count, dtype=np.int64), rows.state.copy()
        use_skip, skip_distance = ~in_use, step_total
        fixed_rows = np.flatnonzero(takes_fixed)
        base_s, fitting_s = base, fitting
    match_s = np.full(single.size, -1, dtype=np.int64)
    if fixed_rows.size:
        fixed_match = fixed_here[single[fixed_rows]]
        with_fixed = _take_state(state[fixed_rows], s, fixed_match)
        with_fixed[:, _DISTANCE] += np.abs(m.start[fixed_match] - m.match_start[fixed_match]).astype(np.int32)
    state[:, _CHUNKS] += use_skip & (state[:, _LAST] != -1)
    state[use_skip, _LAST] = -1
    state[:, _IDX] += use_skip
    state[:, _DISTANCE] += skip_distance.astype(np.int32)
    if fixed_rows.size:
        state[fixed_rows] = with_fixed
        match_s[fixed_rows] = fixed_match
    slot_s = base_s + np.where(use_skip, fitting_s, 0)
    total = slot_c.size + slot_s.size

    def placed(taking_child: np.ndarray, other_child: np.ndarray) -> np.ndarray:
        out = np.empty((total, *taking_child.shape[1:]), dtype=taking_child.dtype)
        out[slot_c] = taking_child
        out[slot_s] = other_child
        return out

    pair = rows.pair
    return (placed(pair[parent_c], pair[single]), placed(state_c, state), placed(parent_c, single),
            placed(match_c, match_s))
