"""Batched longest-common-subsequence kernels on padded id tensors (ROUGE-L, ROUGE-Lsum, ROUGE-W).

Every function takes a batch of ``P`` sequence pairs as right-padded ``LongTensor``s plus their lengths; padding
values are never read as tokens. The work is tensor ops vectorised over the pairs, on the device of the inputs (the
same code on CPU and CUDA; one exception, the CPU read-out of few long walks below):

* :func:`lcs_length` — bit-parallel LCS (Allison–Dix 1986, Crochemore et al. 2001, Hyyrö 2004):
  ``O(n·⌈m/62⌉)`` word operations per pair. The longer side is packed into 62-bit limbs of an ``int64`` (so a limb
  sum never overflows and carries are explicit); each token of the shorter side updates
  ``V ← (V + (V & M)) | (V & ~M)``. The limbs run as a wavefront (limb ``w`` handles token ``t - w`` at step ``t``
  and passes its carry to limb ``w + 1`` for the next step), so a step is 7 element-wise tensor ops over all limbs
  of all pairs, whatever the length, and ``min(La, Lb) + ⌈max(La, Lb)/62⌉ - 1`` steps finish.
* :func:`lcs_backtrack_mask` — the LCS that rouge-score's ``_backtrack_norec`` reads out (needed for ROUGE-Lsum's
  union), walked back over the stored bit rows of the same kernel (``n·m/62`` bits per pair, not a DP table): all
  pairs of a chunk a step at a time (tensor ops), or — a CPU chunk of few long walks — pair by pair in Python.
* :func:`lcs_table` — the full DP table, row by row (a row is a ``cummax``); a reference for tests, no metric uses it.
* :func:`weighted_lcs` — Lin (2004)'s weighted LCS with ``f(k) = k**weight``, by anti-diagonals (``O(n·m)``).
* :func:`gpumetrics.kernels.host.lcs_length_rapidfuzz` — the CPU path of :func:`lcs_length` for host token ids:
  rapidfuzz's C++ bit-parallel ``LCSseq`` over the rows as strings of code points (one decode for the batch, no
  Python call per pair).
"""

from __future__ import annotations

from typing import Any, Optional

import torch
from torch import Tensor

_WORD_BITS = 62
_WORD_MASK = (1 << _WORD_BITS) - 1
_MATCH_BYTES_PER_CHUNK = 1 << 25  # bounds the match vectors built at once (a chunk of wavefront steps)
_ROW_BYTES_PER_CHUNK = 1 << 27  # bounds the stored bit rows of lcs_backtrack_mask (a chunk of pairs)
_EXIT_CHECK_STEPS = 1024  # the backtracking walk checks for its end (one host sync) every so many steps
# a CPU chunk walks pair by pair in Python (:func:`_walk_on_host`) while the pairs' walks together are at most this
# many times the longest one: a batched step (~10 small tensor ops) costs about as much as that many Python steps
_HOST_WALK_STEPS_PER_STEP = 12
_HOST_WALK_MIN_STEPS = 256  # below this the batched walk takes a few ms at most: one path for ordinary sentences


def _check_pairs(a: Tensor, a_lengths: Tensor, b: Tensor, b_lengths: Tensor) -> None:
    if a.dim() != 2 or b.dim() != 2 or a.shape[0] != b.shape[0]:
        raise ValueError(f"`a` and `b` must be [P, La] and [P, Lb] tensors, got {tuple(a.shape)} and {tuple(b.shape)}")
    if a_lengths.shape != (a.shape[0],) or b_lengths.shape != (b.shape[0],):
        raise ValueError("`a_lengths` and `b_lengths` must be [P] tensors")


def _valid(lengths: Tensor, width: int) -> Tensor:
    return torch.arange(width, device=lengths.device) < lengths.unsqueeze(1)


def _match_chunks(a: Tensor, a_lengths: Tensor, b: Tensor, b_lengths: Tensor, n_words: int):
    """Yield ``M: LongTensor[C, P, W]``, the match bit-vectors of the next ``C`` steps of :func:`_bit_parallel`'s
    wavefront **in reverse order** (``M[C - 1]`` first): at step ``t`` limb ``w`` works on column ``j = t - w`` of
    ``b``, and limb ``w`` of its vector holds bit ``i - 62w`` set iff ``a[p, i] == b[p, j]`` (valid ``i``; 0 when
    ``j`` is not a valid column of pair ``p``).

    Per chunk, the values of ``b`` in the chunk's window of columns are sorted per pair; every position of ``a`` finds
    its value's first slot there (``searchsorted``) and adds its bit to that slot's vector (``scatter_add``: the bits
    are distinct, so the sum is the OR); each (step, limb) then gathers limb ``w`` of its column's vector. Work
    ``O(P·(La + (C + W)·W))`` per chunk, memory ``O(P·(C + W)·W)`` with ``P·C·W`` int64 bounded by
    ``_MATCH_BYTES_PER_CHUNK``; no host sync.
    """
    n_pairs, width_a, width_b = a.shape[0], a.shape[1], b.shape[1]
    device = a.device
    steps = width_b + n_words - 1
    chunk = max(1, min(steps, _MATCH_BYTES_PER_CHUNK // (8 * n_pairs * n_words)))
    position = torch.arange(width_a, device=device)
    bits = torch.bitwise_left_shift(torch.ones_like(position), position % _WORD_BITS) * _valid(a_lengths, width_a)
    word = torch.div(position, _WORD_BITS, rounding_mode="floor")
    limbs = torch.arange(n_words, device=device)
    pairs = torch.arange(n_pairs, device=device)
    a = a.contiguous()
    for first in range(0, steps, chunk):
        size = min(chunk, steps - first)
        low, high = max(0, first - n_words + 1), min(width_b, first + size)  # the columns these steps reach
        values = b[:, low:high].contiguous()
        window = values.shape[1]
        ordered = torch.sort(values, dim=1).values
        slot = torch.searchsorted(ordered, values, side="left")  # [P, S]: a value's first slot in `ordered`
        found = torch.searchsorted(ordered, a, side="left").clamp_max(window - 1)  # [P, La]
        hit = ordered.gather(1, found) == a
        vectors = torch.zeros(n_pairs, window + 1, n_words, dtype=torch.long, device=device)  # slot S: no match
        vectors.view(n_pairs, -1).scatter_add_(1, found * n_words + word, torch.where(hit, bits, 0))
        # slot of every column the chunk reaches, k = 0 … C+W-2 for column first-(W-1)+k; S where no valid column
        column = first - (n_words - 1) + torch.arange(size + n_words - 1, device=device)
        reached = (column >= 0) & (column < width_b) & (column < b_lengths.unsqueeze(1))
        slots = torch.where(reached, slot[:, (column - low).clamp(0, window - 1)], window)
        offsets = ((pairs * (window + 1)).unsqueeze(1) + slots) * n_words  # [P, C + W - 1]
        # step t, limb w reads column k = t - w + W - 1: with k reversed and steps reversed (t' = C-1-t) that is
        # k' = t' + w, a sliding window — a strided view, no index tensor built per (step, limb) beyond one add
        reversed_offsets = offsets.flip(1).contiguous()
        index = reversed_offsets.as_strided((size, n_pairs, n_words), (1, reversed_offsets.stride(0), 1)) + limbs
        yield vectors.view(-1)[index]  # [C, P, W], steps in reverse order


def _bit_parallel(
    a: Tensor, a_lengths: Tensor, b: Tensor, b_lengths: Tensor, rows: Optional[Tensor] = None
) -> Tensor:
    """The bit-vector ``V`` after all of ``b``: ``LongTensor[P, W]`` (``W = ⌈La/62⌉`` limbs, low limb first).

    Bit ``i`` of ``V`` after ``j`` tokens of ``b`` is 0 iff ``LCS(a[:i+1], b[:j]) = LCS(a[:i], b[:j]) + 1``, so the
    LCS of the pair is the number of zero bits among its first ``len_a``. One token updates
    ``V ← (V + (V & M)) | (V & ~M)``. The limbs run as a wavefront: at step ``t`` limb ``w`` processes token
    ``t - w``, adding the carry that limb ``w - 1`` produced on that token at step ``t - 1`` — so a step is a few
    element-wise ops over all limbs, and ``Lb + W - 1`` steps finish every limb. A column that is padding (or before
    the start / past the end) matches nothing, which leaves its limb unchanged and produces no carry.

    With ``rows`` (``LongTensor[Lb + W, P, W]``), ``rows[t]`` receives the state after ``t`` steps, so limb ``w``
    of ``V`` after ``j`` tokens is ``rows[j + w][:, w]``.
    """
    n_pairs, width_a = a.shape[0], a.shape[1]
    device = a.device
    n_words = (width_a + _WORD_BITS - 1) // _WORD_BITS
    state = torch.full((n_pairs, n_words), _WORD_MASK, dtype=torch.long, device=device)
    if rows is not None:
        rows[0] = state
    carry = torch.zeros(n_pairs, n_words, dtype=torch.long, device=device)  # limb 0 never receives one
    step = 0
    for matches in _match_chunks(a, a_lengths, b, b_lengths, n_words):
        for match in reversed(matches.unbind(0)):
            match = state & match  # U = V & M
            kept = state ^ match  # V - U (U ⊆ V: no borrow)
            total = state + match  # V + U, limb by limb: < 2**63
            if n_words > 1:
                total.add_(carry)  # still < 2**63
                torch.bitwise_right_shift(total[:, :-1], _WORD_BITS, out=carry[:, 1:])  # for the next limb, next step
            state = total.bitwise_and_(_WORD_MASK).bitwise_or_(kept)
            step += 1
            if rows is not None:
                rows[step] = state
    return state


def _popcount(x: Tensor) -> Tensor:
    """Number of one bits of every element of a non-negative ``int64`` tensor below ``2**62`` (SWAR, no overflow)."""
    x = x - (torch.bitwise_right_shift(x, 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + (torch.bitwise_right_shift(x, 2) & 0x3333333333333333)
    x = (x + torch.bitwise_right_shift(x, 4)) & 0x0F0F0F0F0F0F0F0F
    x = x + torch.bitwise_right_shift(x, 8)
    x = x + torch.bitwise_right_shift(x, 16)
    x = x + torch.bitwise_right_shift(x, 32)
    return x & 0x7F


def lcs_length(a: Tensor, a_lengths: Tensor, b: Tensor, b_lengths: Tensor) -> Tensor:
    """Length of the longest common subsequence of each pair, bit-parallel.

    ``O(⌈max(La, Lb)/62⌉)`` word operations per pair and step, ``min(La, Lb) + ⌈max(La, Lb)/62⌉ - 1`` steps (the
    longer side is packed into bit-vectors, the shorter one walked), each 7 tensor ops over all pairs; memory
    ``O(P·⌈max(La, Lb)/62⌉)`` plus the bounded match vectors. No host sync.

    Args:
        a: ``LongTensor[P, La]`` token ids (right-padded, any padding value).
        a_lengths: ``LongTensor[P]`` valid lengths of ``a``.
        b: ``LongTensor[P, Lb]`` token ids.
        b_lengths: ``LongTensor[P]`` valid lengths of ``b``.

    Returns:
        ``LongTensor[P]``.

    Example:
        >>> a = torch.tensor([[1, 2, 3, 4], [5, 6, 0, 0]])
        >>> b = torch.tensor([[2, 4, 1, 3], [6, 6, 5, 0]])
        >>> lcs_length(a, torch.tensor([4, 2]), b, torch.tensor([4, 3]))
        tensor([2, 1])
    """
    _check_pairs(a, a_lengths, b, b_lengths)
    n_pairs = a.shape[0]
    if n_pairs == 0 or a.shape[1] == 0 or b.shape[1] == 0:
        return torch.zeros(n_pairs, dtype=torch.long, device=a.device)
    if b.shape[1] > a.shape[1]:  # LCS is symmetric: walk the shorter padded side, pack the longer one
        a, a_lengths, b, b_lengths = b, b_lengths, a, a_lengths
    a, b, a_lengths, b_lengths = a.long(), b.long(), a_lengths.long(), b_lengths.long()
    state = _bit_parallel(a, a_lengths, b, b_lengths)
    first = torch.arange(state.shape[1], device=a.device) * _WORD_BITS
    valid_bits = (a_lengths.unsqueeze(1) - first).clamp(0, _WORD_BITS)  # [P, W]
    valid_mask = torch.bitwise_left_shift(torch.ones_like(valid_bits), valid_bits) - 1
    return _popcount(~state & valid_mask).sum(1)


def lcs_table(a: Tensor, b: Tensor) -> Tensor:
    """The LCS dynamic-programming table of every pair: ``T[p, i, j] = LCS(a[p, :i], b[p, :j])``.

    Cells are exact for every prefix; cells that reach into padding are meaningless, so read
    ``T[p, a_len[p], b_len[p]]`` for the LCS of the valid parts. Row ``i`` is ``cummax`` over ``j`` of
    ``max(T[i-1, j], T[i-1, j-1] + [a_i = b_j])``. ``O(P·La·Lb)`` memory: a reference for tests and small inputs.

    Args:
        a: ``LongTensor[P, La]``.
        b: ``LongTensor[P, Lb]``.

    Returns:
        ``IntTensor[P, La + 1, Lb + 1]``.

    Example:
        >>> lcs_table(torch.tensor([[1, 2]]), torch.tensor([[2, 1, 2]]))[0]
        tensor([[0, 0, 0, 0],
                [0, 0, 1, 1],
                [0, 1, 1, 2]], dtype=torch.int32)
    """
    n_pairs, width_a, width_b = a.shape[0], a.shape[1], b.shape[1]
    table = torch.zeros(n_pairs, width_a + 1, width_b + 1, dtype=torch.int32, device=a.device)
    previous = table[:, 0]
    for i in range(width_a):
        equal = a[:, i : i + 1] == b
        candidate = torch.maximum(previous[:, 1:], torch.where(equal, previous[:, :-1] + 1, 0))
        table[:, i + 1, 1:] = torch.cummax(candidate, dim=1).values
        previous = table[:, i + 1]
    return table


def _backtrack_chunk(a: Tensor, a_lengths: Tensor, b: Tensor, b_lengths: Tensor,
                     host_walks: Optional[tuple[list[int], list[int]]] = None) -> Tensor:
    """rouge-score's read-out over stored bit rows. At a mismatch in cell ``(i, j)``, ``T[i][j] = max(T[i][j-1],
    T[i-1][j])``, so ``T[i][j-1] > T[i-1][j]`` holds iff ``T[i-1][j] = T[i][j] - 1``, i.e. iff bit ``i-1`` of the
    row after ``j`` tokens of ``b`` is 0: one bit read per step. ``host_walks`` (the pairs' lengths as ints, CPU
    tensors only): walk each pair in Python (:func:`_walk_on_host`) instead of stepping all pairs together."""
    n_pairs, width_a, width_b = a.shape[0], a.shape[1], b.shape[1]
    device = a.device
    n_words = (width_a + _WORD_BITS - 1) // _WORD_BITS
    rows = torch.empty(width_b + n_words, n_pairs, n_words, dtype=torch.long, device=device)
    _bit_parallel(a, a_lengths, b, b_lengths, rows)
    if host_walks is not None:
        return _walk_on_host(rows, a, b, *host_walks)
    rows = rows.reshape(-1)
    pairs = torch.arange(n_pairs, device=device)
    a_flat, a_base = a.reshape(-1), pairs * width_a
    b_flat, b_base = b.reshape(-1), pairs * width_b
    mask = torch.zeros(n_pairs * (width_a + 1), dtype=torch.bool, device=device)
    no_op = pairs * (width_a + 1) + width_a  # column La of each row collects the non-matching steps
    i, j = a_lengths.clone(), b_lengths.clone()
    for step in range(width_a + width_b):  # every walk ends within len_a + len_b steps
        active = (i > 0) & (j > 0)
        if step % _EXIT_CHECK_STEPS == _EXIT_CHECK_STEPS - 1 and not bool(active.any()):
            break  # long walks only: one host sync every _EXIT_CHECK_STEPS steps
        im1, jm1 = (i - 1).clamp_min(0), (j - 1).clamp_min(0)
        match = active & (a_flat[a_base + im1] == b_flat[b_base + jm1])
        word = torch.div(im1, _WORD_BITS, rounding_mode="floor")
        limb = rows[((j + word) * n_pairs + pairs) * n_words + word]  # limb `word` of V after j tokens of b
        up_is_lower = (torch.bitwise_right_shift(limb, im1 % _WORD_BITS) & 1) == 0
        go_left = active & ~match & up_is_lower
        mask[torch.where(match, pairs * (width_a + 1) + im1, no_op)] = True
        i = i - (match | (active & ~go_left)).long()
        j = j - (match | go_left).long()
    return mask.view(n_pairs, width_a + 1)[:, :-1]


def _walk_on_host(rows: Tensor, a: Tensor, b: Tensor, a_lengths: list[int], b_lengths: list[int]) -> Tensor:
    """:func:`_backtrack_chunk`'s walk one pair at a time in Python, over CPU ``rows`` (``[Lb + W, P, W]``): a step
    costs well under a microsecond here against ~10 tensor ops (tens of µs) for a step of all pairs, so a chunk whose
    walks are few and long (a long reference line against short ones, ROUGE-Lsum) goes this way."""
    n_pairs, width_a = a.shape
    bits = rows.numpy()
    mask = torch.zeros(n_pairs, width_a, dtype=torch.bool)
    marked = mask.numpy()  # shares mask's memory
    for pair, (a_row, b_row, i, j) in enumerate(zip(a.tolist(), b.tolist(), a_lengths, b_lengths)):
        while i > 0 and j > 0:
            if a_row[i - 1] == b_row[j - 1]:
                marked[pair, i - 1] = True
                i, j = i - 1, j - 1
            elif (int(bits[j + (i - 1) // _WORD_BITS, pair, (i - 1) // _WORD_BITS]) >> ((i - 1) % _WORD_BITS)) & 1:
                i -= 1
            else:  # T[i-1][j] is the lower: the walk goes along b
                j -= 1
    return mask


def lcs_backtrack_mask(
    a: Tensor, a_lengths: Tensor, b: Tensor, b_lengths: Tensor, host_lengths: Optional[tuple[Any, Any]] = None
) -> Tensor:
    """Positions of ``a`` in the LCS that rouge-score's ``lcs_ind(a, b)`` reads out, for every pair.

    The read-out walks back from ``(len_a, len_b)``: on equal tokens it takes both, else it moves along ``b`` when
    ``T[i][j-1] > T[i-1][j]`` and along ``a`` otherwise. ROUGE-Lsum's union LCS depends on exactly this choice.
    The walk reads one bit per step from the rows of the bit-parallel kernel (:func:`lcs_length`'s), stored for
    every step: ``(Lb + ⌈La/62⌉)·⌈La/62⌉`` int64 per pair, pairs in chunks of ``_ROW_BYTES_PER_CHUNK``
    (a single pair larger than that still runs, in one chunk). Time ``O(Lb·⌈La/62⌉ + La + Lb)`` per pair.

    Args:
        a: ``LongTensor[P, La]`` token ids (right-padded).
        a_lengths: ``LongTensor[P]``.
        b: ``LongTensor[P, Lb]``.
        b_lengths: ``LongTensor[P]``.
        host_lengths: ``(a_lengths, b_lengths)`` as host arrays (numpy) when the caller has them: each chunk's
            padding is then trimmed without reading the device (2 host syncs per chunk otherwise).

    Returns:
        ``BoolTensor[P, La]``, True at the positions of ``a`` in the chosen LCS.

    Example:
        >>> lcs_backtrack_mask(torch.tensor([[1, 2, 1]]), torch.tensor([3]), torch.tensor([[1, 9]]), torch.tensor([2]))
        tensor([[ True, False, False]])
    """
    _check_pairs(a, a_lengths, b, b_lengths)
    n_pairs, width_a, width_b = a.shape[0], a.shape[1], b.shape[1]
    if n_pairs == 0 or width_a == 0 or width_b == 0:
        return torch.zeros(n_pairs, width_a, dtype=torch.bool, device=a.device)
    a, b, a_lengths, b_lengths = a.long(), b.long(), a_lengths.long(), b_lengths.long()
    n_words = (width_a + _WORD_BITS - 1) // _WORD_BITS
    chunk = max(1, _ROW_BYTES_PER_CHUNK // (8 * (width_b + n_words) * n_words))
    parts = []
    for start in range(0, n_pairs, chunk):
        part = slice(start, start + chunk)
        la, lb = a_lengths[part], b_lengths[part]
        if host_lengths is None:
            wa, wb = max(int(la.max().item()), 1), max(int(lb.max().item()), 1)  # trim padding shared by the chunk
        else:
            wa, wb = (max(int(lengths[part].max(initial=0)), 1) for lengths in host_lengths)
        walks = None
        # the rows must be in host memory: a plain CPU tensor, not an accelerator's (nor the CPU tests' stand-in
        # accelerator `cpu:0`, whose host reads are counted as syncs)
        if host_lengths is not None and a.device == torch.device("cpu"):
            walks = tuple(lengths[part].tolist() for lengths in host_lengths)
            if wa + wb < _HOST_WALK_MIN_STEPS or sum(walks[0]) + sum(walks[1]) > _HOST_WALK_STEPS_PER_STEP * (wa + wb):
                walks = None  # short walks cost little either way; many: one step of all costs less than each walk
        piece = _backtrack_chunk(a[part, :wa], la, b[part, :wb], lb, walks)
        parts.append(torch.nn.functional.pad(piece, (0, width_a - wa)))
    return torch.cat(parts)


def weighted_lcs(a: Tensor, a_lengths: Tensor, b: Tensor, b_lengths: Tensor, weight: float = 1.2) -> Tensor:
    """Weighted LCS score ``WLCS(a, b)`` of Lin (2004), §3.3, with ``f(k) = k**weight``.

    Consecutive matches are rewarded: a run of ``k`` matched tokens scores ``f(k)``. The DP keeps, per cell, the
    score ``c`` and the length ``w`` of the run ending there; matches extend the diagonal run
    (``c += f(w+1) - f(w)``), other cells take ``max(c_up, c_left)`` and reset ``w``. Computed by anti-diagonals.

    Args:
        a: ``LongTensor[P, La]`` (the reference in ROUGE-W).
        a_lengths: ``LongTensor[P]``.
        b: ``LongTensor[P, Lb]``.
        b_lengths: ``LongTensor[P]``.
        weight: exponent of ``f``; must be > 1 (1 gives the plain LCS length).

    Returns:
        ``DoubleTensor[P]`` — ``WLCS``; ROUGE-W's recall is ``(WLCS / f(len_a)) ** (1 / weight)``.

    Example:
        >>> a = torch.tensor([[1, 2, 3, 4, 5, 6, 7]])
        >>> b = torch.tensor([[1, 2, 3, 4, 8, 9, 0], [1, 8, 2, 9, 3, 0, 4]])
        >>> weighted_lcs(a.expand(2, 7), torch.tensor([7, 7]), b, torch.tensor([7, 7]), weight=2.0)
        tensor([16.,  4.], dtype=torch.float64)
    """
    _check_pairs(a, a_lengths, b, b_lengths)
    device, n_pairs = a.device, a.shape[0]
    width_a, width_b = a.shape[1], b.shape[1]
    result = torch.zeros(n_pairs, dtype=torch.float64, device=device)
    if n_pairs == 0 or width_a == 0 or width_b == 0:
        return result
    runs = torch.arange(min(width_a, width_b) + 1, dtype=torch.float64, device=device)
    gain = (runs + 1) ** weight - runs**weight  # f(k + 1) - f(k), indexed by k

    rows = torch.arange(width_a + 1, device=device)  # cell (i, d - i) of diagonal d lives at index i
    a_ext = torch.cat([a.new_zeros(n_pairs, 1), a], 1)  # a_ext[:, i] = a_i (1-based)
    a_in = rows >= 1
    final_diagonal = a_lengths + b_lengths
    zeros_c = torch.zeros(n_pairs, width_a + 1, dtype=torch.float64, device=device)
    zeros_w = torch.zeros(n_pairs, width_a + 1, dtype=torch.long, device=device)
    c_prev2, c_prev, w_prev2, w_prev = zeros_c, zeros_c, zeros_w, zeros_w
    for d in range(2, width_a + width_b + 1):
        cols = d - rows
        inside = a_in & (cols >= 1) & (cols <= width_b)
        b_tok = b[:, (cols - 1).clamp(0, width_b - 1)]
        match = inside & (a_ext == b_tok)
        # neighbours: up (i-1, j) and diagonal (i-1, j-1) sit at index i-1 of diagonals d-1 and d-2
        c_up = torch.nn.functional.pad(c_prev[:, :-1], (1, 0))
        c_left = c_prev
        c_diag = torch.nn.functional.pad(c_prev2[:, :-1], (1, 0))
        w_diag = torch.nn.functional.pad(w_prev2[:, :-1], (1, 0))
        c_new = torch.where(match, c_diag + gain[w_diag], torch.maximum(c_up, c_left))
        c_new = torch.where(inside, c_new, 0.0)
        w_new = torch.where(match, w_diag + 1, 0)
        done = final_diagonal == d
        result = torch.where(done, c_new.gather(1, a_lengths.unsqueeze(1)).squeeze(1), result)
        c_prev2, c_prev = c_prev, c_new
        w_prev2, w_prev = w_prev, w_new
    return result


