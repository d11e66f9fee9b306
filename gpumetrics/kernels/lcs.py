"""Batched longest-common-subsequence kernels on padded id tensors (ROUGE-L, ROUGE-Lsum, ROUGE-W).

Every function takes a batch of ``P`` sequence pairs as right-padded ``LongTensor``s plus their lengths; padding
values are never read as tokens. All work is tensor ops vectorised over the pairs, on the device of the inputs:

* :func:`lcs_length` — bit-parallel LCS (Allison–Dix / Hyyrö): one word-parallel step per token of ``b``;
  ``a`` is packed into 62-bit words of an ``int64`` (so that a word sum never overflows and carries are explicit).
* :func:`lcs_table` / :func:`lcs_backtrack_mask` — the full DP table, row by row (a row is a ``cummax``), and the
  LCS that rouge-score's ``_backtrack_norec`` reads out of it, as a mask over ``a`` (needed for ROUGE-Lsum's union).
* :func:`weighted_lcs` — Lin (2004)'s weighted LCS with ``f(k) = k**weight``, by anti-diagonals.
"""

from __future__ import annotations

import torch
from torch import Tensor

_WORD_BITS = 62
_WORD_MASK = (1 << _WORD_BITS) - 1
_TABLE_CELLS_PER_CHUNK = 1 << 24  # bounds the memory of lcs_backtrack_mask's DP tables


def _check_pairs(a: Tensor, a_lengths: Tensor, b: Tensor, b_lengths: Tensor) -> None:
    if a.dim() != 2 or b.dim() != 2 or a.shape[0] != b.shape[0]:
        raise ValueError(f"`a` and `b` must be [P, La] and [P, Lb] tensors, got {tuple(a.shape)} and {tuple(b.shape)}")
    if a_lengths.shape != (a.shape[0],) or b_lengths.shape != (b.shape[0],):
        raise ValueError("`a_lengths` and `b_lengths` must be [P] tensors")


def _valid(lengths: Tensor, width: int) -> Tensor:
    return torch.arange(width, device=lengths.device) < lengths.unsqueeze(1)


def lcs_length(a: Tensor, a_lengths: Tensor, b: Tensor, b_lengths: Tensor) -> Tensor:
    """Length of the longest common subsequence of each pair, bit-parallel.

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
    device, n_pairs = a.device, a.shape[0]
    width_a, width_b = a.shape[1], b.shape[1]
    result = torch.zeros(n_pairs, dtype=torch.long, device=device)
    if n_pairs == 0 or width_a == 0 or width_b == 0:
        return result
    a, b = a.long(), b.long()
    n_words = (width_a + _WORD_BITS - 1) // _WORD_BITS

    # Match bit-vectors M[p, j] = OR of (1 << i) over the positions i of a[p] equal to b[p, j]. Each row of a is
    # sorted; the positions of a value form a run whose OR (= sum, the bits being distinct) is a difference of
    # prefix sums, found with two row-wise binary searches — small, cache-friendly per-row work.
    a_valid = _valid(a_lengths, width_a)
    beyond = torch.iinfo(torch.long).max  # sorts padding of a last; no real id reaches it
    a_sorted, order = torch.sort(torch.where(a_valid, a, beyond), dim=1, stable=True)
    one_hot = torch.zeros(n_pairs, width_a, n_words, dtype=torch.long, device=device)
    bit = torch.bitwise_left_shift(torch.ones_like(order), order % _WORD_BITS) * (a_sorted < beyond)
    one_hot.scatter_(2, torch.div(order, _WORD_BITS, rounding_mode="floor").unsqueeze(-1), bit.unsqueeze(-1))
    prefix = torch.nn.functional.pad(torch.cumsum(one_hot, dim=1), (0, 0, 1, 0))  # [P, La + 1, W]
    below = torch.iinfo(torch.long).min  # padding of b never matches
    b_values = torch.where(_valid(b_lengths, width_b), b, below).contiguous()
    low = torch.searchsorted(a_sorted, b_values, side="left")
    high = torch.searchsorted(a_sorted, b_values, side="right")
    gather = lambda index: prefix.gather(1, index.unsqueeze(-1).expand(-1, -1, n_words))  # noqa: E731
    matches = (gather(high) - gather(low)).transpose(0, 1).contiguous()  # [Lb, P, W]: column j contiguous

    state = torch.full((n_pairs, n_words), _WORD_MASK, dtype=torch.long, device=device)
    for j in range(width_b):  # a padded column matches nothing, which leaves the state unchanged
        match = matches[j]
        kept = state & ~match
        total = state + (state & match)
        if n_words == 1:
            state = (total & _WORD_MASK) | kept
            continue
        words = []
        carry = torch.zeros(n_pairs, dtype=torch.long, device=device)
        for w in range(n_words):
            word = total[:, w] + carry
            carry = torch.bitwise_right_shift(word, _WORD_BITS)
            words.append(word & _WORD_MASK)
        state = torch.stack(words, 1) | kept

    # LCS = number of zero bits of the state among the first a_length positions.
    shifts = torch.arange(_WORD_BITS, device=device)
    ones = torch.bitwise_right_shift(state.unsqueeze(-1), shifts) & 1
    ones = ones.reshape(n_pairs, n_words * _WORD_BITS)[:, :width_a]
    return ((1 - ones) * a_valid).sum(1)


def lcs_table(a: Tensor, b: Tensor) -> Tensor:
    """The LCS dynamic-programming table of every pair: ``T[p, i, j] = LCS(a[p, :i], b[p, :j])``.

    Cells are exact for every prefix; cells that reach into padding are meaningless, so read
    ``T[p, a_len[p], b_len[p]]`` for the LCS of the valid parts. Row ``i`` is ``cummax`` over ``j`` of
    ``max(T[i-1, j], T[i-1, j-1] + [a_i = b_j])``.

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


def _backtrack_chunk(a: Tensor, a_lengths: Tensor, b: Tensor, b_lengths: Tensor) -> Tensor:
    n_pairs, width_a, width_b = a.shape[0], a.shape[1], b.shape[1]
    table = lcs_table(a, b).reshape(-1)  # flat indexing: one gather per read instead of 3-d advanced indexing
    rows = torch.arange(n_pairs, device=a.device)
    cell_base, row_stride = rows * ((width_a + 1) * (width_b + 1)), width_b + 1
    a_flat, a_base = a.reshape(-1), rows * width_a
    b_flat, b_base = b.reshape(-1), rows * width_b
    mask = torch.zeros(n_pairs * (width_a + 1), dtype=torch.bool, device=a.device)
    no_op = rows * (width_a + 1) + width_a  # column La of each row collects the non-matching steps
    i, j = a_lengths.clone(), b_lengths.clone()
    for _ in range(width_a + width_b):  # every walk ends within len_a + len_b steps; no early exit (no host sync)
        active = (i > 0) & (j > 0)
        im1, jm1 = (i - 1).clamp_min(0), (j - 1).clamp_min(0)
        match = active & (a_flat[a_base + im1] == b_flat[b_base + jm1])
        left = table[cell_base + i * row_stride + jm1]
        up = table[cell_base + im1 * row_stride + j]
        go_left = active & ~match & (left > up)
        mask[torch.where(match, rows * (width_a + 1) + im1, no_op)] = True
        i = i - (match | (active & ~go_left)).long()
        j = j - (match | go_left).long()
    return mask.view(n_pairs, width_a + 1)[:, :-1]


def lcs_backtrack_mask(a: Tensor, a_lengths: Tensor, b: Tensor, b_lengths: Tensor) -> Tensor:
    """Positions of ``a`` in the LCS that rouge-score's ``lcs_ind(a, b)`` reads out, for every pair.

    The read-out walks back from ``(len_a, len_b)``: on equal tokens it takes both, else it moves along ``b`` when
    ``T[i][j-1] > T[i-1][j]`` and along ``a`` otherwise. ROUGE-Lsum's union LCS depends on exactly this choice.

    Args:
        a: ``LongTensor[P, La]`` token ids (right-padded).
        a_lengths: ``LongTensor[P]``.
        b: ``LongTensor[P, Lb]``.
        b_lengths: ``LongTensor[P]``.

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
    chunk = max(1, _TABLE_CELLS_PER_CHUNK // ((width_a + 1) * (width_b + 1)))
    parts = []
    for start in range(0, n_pairs, chunk):
        part = slice(start, start + chunk)
        la, lb = a_lengths[part], b_lengths[part]
        wa, wb = max(int(la.max().item()), 1), max(int(lb.max().item()), 1)  # trim padding shared by the chunk
        piece = _backtrack_chunk(a[part, :wa], la, b[part, :wb], lb)
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
