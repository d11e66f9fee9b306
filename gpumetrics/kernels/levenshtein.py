"""Batched Levenshtein distance on any device: bit-parallel Myers / Hyyrö over padded integer tensors.

Algorithm
---------
For every pair the *longer* sequence is the pattern ``P`` (``m`` symbols, packed in ``W = ceil(m / 64)`` int64
words per column) and the shorter one the text ``T`` (``n`` symbols, one step per symbol). The column of the DP
matrix is held as two bit vectors of vertical deltas (``Pv``, ``Mv``) and advanced by Myers' / Hyyrö's recurrence
(Hyyrö 2003, as in edlib's block step). Blocks of one column are chained by the horizontal delta ``hout`` of the
block above (the ``+1`` boundary of row 0 enters block 0). To keep the Python loop short for long strings the
blocks run as a **wavefront**: at step ``t`` block ``w`` processes column ``t − w``, so every step updates all
``W`` blocks of all pairs at once (``[B, W]`` tensors) and a chunk needs ``n_max + W − 1`` steps instead of
``n_max · W``. At the end ``lev = n + popcount(Pv) − popcount(Mv)`` over the ``m`` real rows (rows below ``m``
never influence rows above, so padding is harmless).

Match masks ``Peq[pair, symbol, block]`` are built once per chunk with a per-pair local alphabet (``unique`` on
``(pair, symbol)`` keys, padding mapped to a symbol that never occurs) and a ``scatter_add`` of the bits. Blocks are
stored in reverse order so that the skewed masks of 64 steps come from one ``index_select`` and a strided view.

Cost per step and per (pair, block of 64 pattern symbols): 18 elementwise int64 ops for ``W = 1`` (strings up to
64 symbols), ~30 for ``W > 1`` (carry in/out of neighbouring blocks, wavefront mask, two ``where``), plus ~2 for the
amortised mask gather — i.e. **~20 ops per text character** for short strings and ~0.5 op per DP cell for long
ones. Pairs are sorted by text length (descending) so that the pairs still running at a step are a prefix of the
chunk; chunks keep padded symbols and states under ``max_elements`` int64 values and are halved again when their
match masks (pairs × alphabet × W) would not fit, so memory is bounded for huge batches and long strings.

Why bit-parallel and not an anti-diagonal DP
--------------------------------------------
Measured on this project's shared 2-core CPU (torch 2.14, 1 thread, same process and data, both exact vs
rapidfuzz): an anti-diagonal DP (``m + n`` steps of ~12 ops on ``[B, m + 1]`` diagonals) took 0.68 s for 2,000
pairs of 5–40 characters and 26 s for 50 pairs of 500–2,000 characters, against 0.11 s and 1.4 s for this kernel
(6× and 18× faster): the bit-parallel form does ~30× fewer elementwise operations per cell and needs ``n + W − 1``
instead of ``m + n`` Python steps, which is what bounds a GPU run on short strings (kernel launches).

The CPU dispatch for strings (``backend="rapidfuzz"``) lives in :func:`levenshtein_strings`; it maps rapidfuzz's
C++ ``Levenshtein.distance`` over the pairs, which is faster than any tensor kernel on CPU.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core.checks import check_device

__all__ = ["levenshtein_distance", "levenshtein_strings", "encode_chars", "encode_words", "BACKENDS"]

BACKENDS = ("auto", "torch", "rapidfuzz")
_WORD = 64
_STEP_BLOCK = 64  # steps whose match masks are gathered at once
_DEFAULT_MAX_ELEMENTS = 1 << 24  # int64 values in one chunk's largest buffers (~128 MB)

_M1 = 0x5555555555555555
_M2 = 0x3333333333333333
_M4 = 0x0F0F0F0F0F0F0F0F
_H01 = 0x0101010101010101


def _popcount(x: Tensor) -> Tensor:
    """Bit count of every int64 element (SWAR; arithmetic right shifts are masked so the sign bit is harmless)."""
    x = x - ((x >> 1) & _M1)
    x = (x & _M2) + ((x >> 2) & _M2)
    x = (x + (x >> 4)) & _M4
    return ((x * _H01) >> 56) & 0xFF


def _check_lengths(lengths: Tensor, name: str, batch: int, width: int) -> None:
    if not isinstance(lengths, Tensor) or lengths.dim() != 1 or lengths.shape[0] != batch:
        raise ValueError(f"`{name}` must be a 1-D tensor of {batch} lengths")
    if lengths.dtype.is_floating_point or lengths.dtype == torch.bool:
        raise TypeError(f"`{name}` must be an integer tensor, got {lengths.dtype}")
    if batch and (int(lengths.min()) < 0 or int(lengths.max()) > width):
        raise ValueError(f"`{name}` must lie in [0, {width}]")


def levenshtein_distance(
    a: Tensor,
    a_lengths: Tensor,
    b: Tensor,
    b_lengths: Tensor,
    max_elements: int = _DEFAULT_MAX_ELEMENTS,
) -> Tensor:
    """Levenshtein distance of every pair ``(a[i, :a_lengths[i]], b[i, :b_lengths[i]])`` on the device of ``a``.

    Unit costs (insertion, deletion, substitution = 1). Symbols are any integers (code points, vocabulary ids);
    values past a row's length are ignored.

    Args:
        a: ``LongTensor[B, La]`` padded symbols of the first sequences.
        a_lengths: ``LongTensor[B]`` lengths, ``0 ≤ a_lengths ≤ La``.
        b: ``LongTensor[B, Lb]`` padded symbols of the second sequences, same device.
        b_lengths: ``LongTensor[B]`` lengths.
        max_elements: bound on the int64 values of one chunk's working buffers (memory ≈ 8 bytes × this × ~3).

    Returns:
        ``LongTensor[B]`` distances, on the device of ``a``.

    Raises:
        TypeError: a non-integer tensor.
        ValueError: shapes or lengths that do not fit.

    Example:
        >>> a, b = encode_chars(["kitten", "", "flaw"]), encode_chars(["sitting", "abc", "lawn"])
        >>> levenshtein_distance(*a, *b)
        tensor([3, 3, 2])
    """
    for name, value in (("a", a), ("b", b)):
        if not isinstance(value, Tensor):
            raise TypeError(f"`{name}` must be a tensor, got {type(value).__name__}")
        if value.dim() != 2:
            raise ValueError(f"`{name}` must be a 2-D tensor [B, L], got shape {tuple(value.shape)}")
        if value.dtype.is_floating_point or value.dtype.is_complex or value.dtype == torch.bool:
            raise TypeError(f"`{name}` must be an integer tensor, got {value.dtype}")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"`a` and `b` must have the same batch size, got {a.shape[0]} and {b.shape[0]}")
    if a.device != b.device:
        raise ValueError(f"`a` and `b` must be on the same device, got {a.device} and {b.device}")
    batch = a.shape[0]
    for name, value in (("a", a), ("b", b)):
        if value.numel() and (int(value.min()) < 0 or int(value.max()) >= 1 << 32):
            raise ValueError(f"`{name}` symbols must lie in [0, 2**32)")
    _check_lengths(a_lengths, "a_lengths", batch, a.shape[1])
    _check_lengths(b_lengths, "b_lengths", batch, b.shape[1])
    device = a.device
    out = torch.zeros(batch, dtype=torch.long, device=device)
    if batch == 0:
        return out
    a, b = a.long(), b.long()
    a_len, b_len = a_lengths.to(device=device, dtype=torch.long), b_lengths.to(device=device, dtype=torch.long)

    # pattern = longer sequence (bits), text = shorter one (steps); swapped per chunk, not for the whole batch
    swap = b_len > a_len
    p_len, t_len = torch.where(swap, b_len, a_len), torch.where(swap, a_len, b_len)

    # trivial pairs need no DP: an empty text costs the pattern length
    out.copy_(p_len)
    busy = torch.nonzero(t_len > 0).flatten()
    if busy.numel() == 0:
        return out

    # sort by text length descending (the active rows of a step are then a prefix) and cut chunks whose padded
    # symbols and states stay under max_elements; _levenshtein_chunk splits again if its match masks do not fit
    n_cpu, m_cpu = (x[busy].cpu().numpy() for x in (t_len, p_len))
    order = np.lexsort((-m_cpu, -n_cpu))
    n_sorted = n_cpu[order]
    peak_m = m_cpu[order]
    start, total = 0, len(order)
    while start < total:
        window = peak_m[start : start + max_elements // 83 + 1]  # a row costs at least 83 values (below)
        longest = np.maximum.accumulate(window)
        # per row: keys, ids and symbols (~3 per symbol), gathered masks of one step block and states (~80 per word)
        peak = 3 * (longest + n_sorted[start]) + 80 * ((longest + _WORD - 1) // _WORD)
        fits = np.arange(1, len(window) + 1) * peak <= max_elements
        end = start + max(1, int(fits.sum()))
        rows = busy[torch.as_tensor(order[start:end], device=device)]
        columns = int(longest[end - start - 1])  # no symbol of this chunk lies further right
        a_rows = a[:, :columns][rows]
        b_rows = b[:, :columns][rows]
        a_rows = torch.nn.functional.pad(a_rows, (0, columns - a_rows.shape[1]))
        b_rows = torch.nn.functional.pad(b_rows, (0, columns - b_rows.shape[1]))
        flip = swap[rows, None]
        out[rows] = _levenshtein_chunk(
            torch.where(flip, b_rows, a_rows), p_len[rows], torch.where(flip, a_rows, b_rows), t_len[rows], max_elements
        )
        start = end
    return out


def _levenshtein_chunk(pattern: Tensor, p_len: Tensor, text: Tensor, t_len: Tensor, max_elements: int) -> Tensor:
    """Distances of one chunk: rows sorted by text length descending, all texts non-empty."""
    device = pattern.device
    rows = pattern.shape[0]
    n_max = int(t_len[0])
    n_words = (int(p_len.max()) + _WORD - 1) // _WORD
    pattern = pattern[:, : int(p_len.max())]
    text = text[:, :n_max]
    row_index = torch.arange(rows, device=device)

    # per-pair local alphabet without masking: key = (row, symbol), padding gets the symbol 2**32 (never real);
    # unique sorts by row first, so the ids of one row are contiguous and start at first[row]
    pad_key = 1 << 32
    p_keys = torch.where(torch.arange(pattern.shape[1], device=device) < p_len[:, None], pattern, pad_key)
    t_keys = torch.where(torch.arange(n_max, device=device) < t_len[:, None], text, pad_key)
    p_keys = p_keys | (row_index[:, None] << 33)
    t_keys = t_keys | (row_index[:, None] << 33)
    uniq, inverse = torch.unique(torch.cat([p_keys.flatten(), t_keys.flatten()]), return_inverse=True)
    counts = torch.bincount(uniq >> 33, minlength=rows)
    first = torch.cumsum(counts, 0) - counts
    alphabet = int(counts.max())
    if rows > 1 and rows * alphabet * n_words > max_elements:
        half = rows // 2
        return torch.cat(
            [
                _levenshtein_chunk(pattern[:half], p_len[:half], text[:half], t_len[:half], max_elements),
                _levenshtein_chunk(pattern[half:], p_len[half:], text[half:], t_len[half:], max_elements),
            ]
        )
    p_local = inverse[: p_keys.numel()].view_as(p_keys) - first[:, None]
    t_local = inverse[p_keys.numel():].view_as(t_keys) - first[:, None]

    # Peq[row, symbol, word]: bit i of word w set where pattern[row, 64 w + i] == symbol
    # Peq[row, symbol, slot]: bit i of slot j set where pattern[row, 64 w + i] == symbol, w = W - 1 - j. Blocks are
    # stored in reverse so that the wavefront (block w reads column t - w) is a plain strided view, see below
    positions = torch.arange(pattern.shape[1], device=device)
    bits = (torch.ones_like(positions) << (positions % _WORD)).expand_as(p_local)
    peq = torch.zeros(rows * alphabet, n_words, dtype=torch.long, device=device)
    flat = (row_index[:, None] * alphabet + p_local) * n_words + (n_words - 1 - positions // _WORD)
    peq.view(-1).scatter_add_(0, flat.flatten(), bits.flatten())

    pv = torch.full((rows, n_words), -1, dtype=torch.long, device=device)
    mv = torch.zeros((rows, n_words), dtype=torch.long, device=device)
    # horizontal deltas leaving each block; the extra last slot is the row-0 boundary (+1) entering block 0
    hp_buf = torch.zeros((rows, n_words + 1), dtype=torch.long, device=device)
    hn_buf = torch.zeros((rows, n_words + 1), dtype=torch.long, device=device)
    hp_buf[:, n_words] = 1
    word_of_slot = torch.arange(n_words - 1, -1, -1, device=device)
    t_len_cpu = t_len.cpu()
    # rows are sorted by text length descending: the active rows at step t form a prefix
    remaining = torch.searchsorted(-t_len_cpu, -torch.arange(n_max + n_words, dtype=torch.long), right=False)
    one = torch.ones((), dtype=torch.long, device=device)
    steps = n_max + n_words - 1
    block = max(1, min(steps, _STEP_BLOCK, max_elements // (4 * rows * n_words)))
    span = block + n_words - 1
    for step in range(steps):
        # rows with t_len > step - (W - 1) still have a block that has columns left
        k = int(remaining[max(0, step - n_words + 1)])
        if step % block == 0:
            # masks of columns step-W+1 .. step+block-1, one contiguous row of W words per column; slot j of step
            # step+s reads column step+s-(W-1-j), i.e. buffer row s+j: a view with strides (span·W, W, W+1)
            k_block = k
            cols = torch.arange(step - n_words + 1, step + block, device=device).clamp(0, n_max - 1)
            symbols = t_local[:k_block].index_select(1, cols) + row_index[:k_block, None] * alphabet
            masks = peq.index_select(0, symbols.flatten())
            eq_block = masks.as_strided((k_block, block, n_words), (span * n_words, n_words, n_words + 1))
        eq = eq_block[:k, step % block]
        p, m = pv[:k], mv[:k]
        xv = eq | m
        if n_words > 1:
            hp_in, hn_in = hp_buf[:k, 1:], hn_buf[:k, 1:]
            eq = eq | hn_in
        else:
            hp_in, hn_in = one, None
        xh = (((eq & p) + p) ^ p) | eq
        ph = m | ~(xh | p)
        mh = p & xh
        ph_shift = (ph << 1) | hp_in
        mh_shift = mh << 1
        if hn_in is not None:
            mh_shift = mh_shift | hn_in
            hp_buf[:k, :n_words] = (ph >> 63) & 1  # after the last read of hp_in / hn_in (views of these buffers)
            hn_buf[:k, :n_words] = (mh >> 63) & 1
        new_p = mh_shift | ~(xv | ph_shift)
        new_m = ph_shift & xv
        if n_words > 1:
            columns = step - word_of_slot
            live = (columns >= 0)[None, :] & (columns[None, :] < t_len[:k, None])
            new_p = torch.where(live, new_p, p)
            new_m = torch.where(live, new_m, m)
        pv[:k] = new_p
        mv[:k] = new_m

    left = (p_len[:, None] - word_of_slot[None, :] * _WORD).clamp(0, _WORD)
    full = torch.full_like(left, -1)
    mask = torch.where(left >= _WORD, full, (torch.ones_like(left) << left.clamp(max=_WORD - 1)) - 1)
    return t_len + (_popcount(pv & mask) - _popcount(mv & mask)).sum(1)


def encode_chars(texts: Sequence[str], device: Optional[torch.device | str] = None) -> tuple[Tensor, Tensor]:
    """Code points of a batch of strings as a padded tensor.

    Args:
        texts: ``B`` strings.
        device: device of the result (CPU by default).

    Returns:
        ``(LongTensor[B, L], LongTensor[B])`` code points padded with 0 (``L`` = longest string) and lengths.

    Example:
        >>> encode_chars(["ab", "é"])
        (tensor([[ 97,  98],
                [233,   0]]), tensor([2, 1]))
    """
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    flat = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
    return _pad(flat, lengths, device)


def encode_words(
    texts: Sequence[Sequence[str]], vocabulary: dict[str, int], device: Optional[torch.device | str] = None
) -> tuple[Tensor, Tensor]:
    """Vocabulary ids of a batch of token lists as a padded tensor; new tokens are added to ``vocabulary``.

    Example:
        >>> vocab = {}
        >>> encode_words([["a", "b"], ["b"]], vocab)
        (tensor([[0, 1],
                [1, 0]]), tensor([2, 1]))
    """
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    setdefault = vocabulary.setdefault
    flat = np.fromiter(
        (setdefault(tok, len(vocabulary)) for tokens in texts for tok in tokens),
        dtype=np.int64,
        count=int(lengths.sum()),
    )
    return _pad(flat, lengths, device)


def _pad(flat: np.ndarray, lengths: np.ndarray, device: Optional[torch.device | str]) -> tuple[Tensor, Tensor]:
    batch = len(lengths)
    width = int(lengths.max()) if batch else 0
    padded = np.zeros((batch, width), dtype=np.int64)
    if flat.size:
        padded[np.arange(width)[None, :] < lengths[:, None]] = flat
    device = check_device(device, "device")
    return torch.from_numpy(padded).to(device), torch.from_numpy(lengths).to(device)


def levenshtein_strings(
    a: Sequence,
    b: Sequence,
    backend: str = "auto",
    device: Optional[torch.device | str] = None,
    check: Optional[Callable[[Sequence, Sequence], None]] = None,
) -> Tensor:
    """Levenshtein distance of every pair ``(a[i], b[i])``: strings (characters) or lists of tokens (words).

    Args:
        a: ``B`` strings or ``B`` lists of string tokens.
        b: ``B`` items of the same kind.
        backend: ``"torch"`` (tensor kernel on ``device``), ``"rapidfuzz"`` (C++ on CPU) or ``"auto"`` (the tensor
            kernel when ``device`` is not the CPU, else rapidfuzz when installed).
        device: where the result (and the tensor kernel) lives; CPU by default.
        check: for string items, a validation ``check(a, b)`` that raises a descriptive error for a non-string item.
            The rapidfuzz path then verifies item types inline at C speed (``str.__str__`` is the identity on
            ``str`` and raises ``TypeError`` on anything else) and calls ``check`` only when that fails, so the
            strings are read from memory once; the torch path calls ``check`` first.

    Returns:
        ``LongTensor[B]`` on ``device``.

    Example:
        >>> levenshtein_strings(["kitten", "a b c"], ["sitting", "a c"], backend="torch")
        tensor([3, 2])
        >>> levenshtein_strings([["a", "b", "c"]], [["a", "c"]], backend="rapidfuzz")
        tensor([1])
    """
    device = check_device(device, "device")
    if backend not in BACKENDS:
        raise ValueError(f"`backend` must be one of {', '.join(map(repr, BACKENDS))}; got {backend!r}")
    if backend == "auto":
        backend = "rapidfuzz" if device.type == "cpu" and _has_rapidfuzz() else "torch"
    if backend == "rapidfuzz":
        if not _has_rapidfuzz():
            raise ValueError("`backend='rapidfuzz'` needs the rapidfuzz package: pip install rapidfuzz")
        from rapidfuzz.distance import Levenshtein

        # a C-level map over rapidfuzz's scorer: measured faster here than ``process.cpdist(workers=1)``
        distance = Levenshtein.distance
        if check is None:
            pairs = map(distance, a, b)
        else:
            pairs = map(distance, map(str.__str__, a), map(str.__str__, b))
        try:
            result = np.fromiter(pairs, dtype=np.int64, count=len(a))
        except TypeError:
            if check is not None:
                check(a, b)  # raises the descriptive error
            raise
        return torch.from_numpy(result).to(device)
    if check is not None:
        check(a, b)
    if len(a) and not isinstance(a[0], str):
        vocabulary: dict[str, int] = {}
        ea, eb = encode_words(a, vocabulary, device), encode_words(b, vocabulary, device)
    else:
        ea, eb = encode_chars(a, device), encode_chars(b, device)
    return levenshtein_distance(*ea, *eb)


def _has_rapidfuzz() -> bool:
    try:
        import rapidfuzz  # noqa: F401
    except ImportError:
        return False
    return True
