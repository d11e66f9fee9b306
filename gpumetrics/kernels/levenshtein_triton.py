"""Fused Levenshtein kernels for CUDA (Triton): Myers / Hyyrö bit-parallel columns, one launch per kernel and batch.

Layout: pairs come as ragged rows of one flat symbol array (values + start + length per row), as
:func:`gpumetrics.kernels.levenshtein.levenshtein_ragged` passes them; nothing is padded. The longer row of a pair
is the pattern (``m`` symbols, ``W = ceil(m / 64)`` words), the shorter one the text (``n`` columns). Both kernels
first strip the common prefix and suffix 64 symbols at a time (``_strip_common``: a ``[BLOCK, 64]`` compare per
round), keep a word's column state (``Pv``, ``Mv``: 64-bit vertical deltas) in registers, build a step's match mask
by comparing the text symbol with the word's 64 pattern symbols (no match-mask table: symbols are any integers
below ``2**32``), and score ``lev = n + popcount(Pv) − popcount(Mv)`` over each word's real rows of the last column.

**Column kernel** (``_levenshtein_kernel``): a program holds ``BLOCK`` pairs, one per lane, and runs word 0 over all
``n`` columns, then word 1, …: ``W · n`` strictly sequential word steps (~25 integer ops, the 64-wide compare
reduced across the warp). The three bits a word passes to the next one at column ``j`` (the carry of the addition,
the top bits of ``Ph`` and ``Mh``) go through a one-byte-per-text-symbol buffer, so a pattern of any length needs no
more registers. Launch shape: one pair per program on one warp (``LANES``, ``WARPS``), measured on an H200
(BENCHMARKS.md, ``edit_gpu_kernel_short`` / ``edit_gpu_kernel_long``: the kernel alone on code points already on the
device): on 500,000 short pairs 1.5 ms against 2.1 / 2.4 / 2.9 / 3.6 ms for 2 / 4 / 8 / 16 pairs on one warp and
6.7 ms for the 32 pairs on 4 warps launched first; on 2,000 long pairs (500–2,000 symbols) 15.9 ms against 28 / 48 /
95 / 210 ms and 117 ms (16 pairs on 4 warps). The sm_90 code Triton generates says part of why: 32 lanes on 4 warps
spilled 712 bytes of registers (75 local loads and stores in the inner loop), while 4 lanes on a warp fit in 128
registers; with one lane the ``[1, 64]`` compare spreads over the warp's 32 threads, and no lane's long loop holds
back others. One lane on one warp: 57 registers (61 with Triton 3.6), an inner loop of ~90 SASS instructions with
10 dependent shuffles (the 64-bit reduction); 15.9 ms for the 2,000 long pairs is ~1,100 cycles per word step and
warp: latency-bound.

**Wavefront kernel** (``_wavefront_kernel``): one pair per program; the program holds ``WORDS`` lanes (a power of
two; the default 32 on one warp is one pattern word per thread, patterns up to 2,048 symbols; longer ones run in
consecutive groups of ``WORDS`` words). At wave step ``t`` lane ``k`` runs column ``j = t − k``, so a group takes
``n + WORDS − 1`` steps instead of ``WORDS · n`` (only its real words: ``n + W − 1`` for ``W ≤ WORDS``). Word ``k``
needs one thing from word ``k − 1`` at column ``j``: the horizontal delta leaving its top row, ``hin ∈ {−1, 0, +1}``
(Myers' block formulation, as edlib's ``calculateMacroblock``: ``hin < 0`` sets bit 0 of ``Eq`` — the addition's
carry —, and ``hin`` is the bit shifted into ``Ph`` / ``Mh``; row 0 of the table gives word 0 ``+1``). Lane ``k − 1``
produced it one step earlier, so each step shifts a ``[WORDS]`` vector by one lane with ``tl.gather`` (in Triton 3.6
and 3.8, the interpreter's too): within a warp it lowers to one index shuffle (``SHFL.IDX``); a scratch round trip
through global memory would add a barrier and a store / load to the chain of every step, a ``[WORDS, WORDS]`` masked
reduction five butterfly shuffles. A group's lowest word reads ``hin`` from the group below through the
one-byte-per-text-symbol buffer (a barrier between groups; within a group a column's byte is read — at the step
before its own — long before the group's top word rewrites it, and that write depends on the read through the lanes'
chain of deltas). Each step loads the next step's text symbols (a gather, masked) while it computes.

The pattern tile is ``[64, WORDS]`` (row, word), loaded flat — element ``e = row · WORDS + word`` — and reshaped: a
1-D load's layout deals consecutive elements to consecutive threads, so each thread holds whole words and the match
mask's reduction over a word's 64 rows stays in the thread (LLVM turns it into 64 compares and an OR tree: the bits
are disjoint). A 2-D load leaves the layout to Triton's coalescing, which follows the pointer's contiguity (along a
word's rows) or, without any, a tie order that differs between versions: Triton 3.8 laid a tile read in memory order
out by rows, and 3.6 did so even with the rows read backwards (no contiguity) — then the reduction crossed the warp
every step (hundreds of shuffles in the loop, 1 KiB of shared memory; the compile test holds it at none). The tile is
int32: symbols are below ``2**32``, and the cast, a truncation, keeps different ones different. At the default shape
(sm_90): 157 registers with Triton 3.8, 134 with 3.6 (the GPU machine's), no spills, no shared memory; one wave step
is ~231 SASS instructions with either (64 compares, the OR tree, the block step in 64-bit pairs, one shuffle, two
prefetching loads), no barrier.

What is measured and what is a bet: nothing of the wavefront kernel has run on a GPU yet. The expectation, from the
instruction counts: a wave step issues ~231 instructions against the column kernel's ~90 per word step, but the
column kernel waits ~1,100 cycles per step on its dependent shuffles and memory round trip, so 3–4 of its warps on a
scheduler still leave it latency-bound (~275 cycles per word step and scheduler, which roughly reproduces its
15.9 ms), while the wavefront kernel's ~4 warps per scheduler keep the issue slots busy (~231 cycles per wave step,
whether 8 or 32 of its threads hold real words). The 2,000 long pairs have ``W`` ≈ 20 words on average, so ~20×
fewer steps at ~1.2× lower cost each: roughly 1 ms instead of 15.9 ms if issue-bound, a few ms if the longest
pairs' latency dominates — hence a 5–15× guess.
``WAVEFRONT_MIN_WORDS = 4`` (``kernel="auto"``) is a bet by design, unmeasured: the next GPU run's
``edit_gpu_kernel_long`` / ``edit_gpu_kernel_medium`` rows decide it (by the same count a wave step on 1–2 words
costs about as much as a column step, so the threshold may move down).

Dispatch (``levenshtein_triton_rows``, which every route goes through): pairs are sorted on the device by
``(pattern words, n)``; under ``kernel="auto"`` the pairs of at least ``WAVEFRONT_MIN_WORDS`` words — the end of
that order — are the wavefront kernel's, counted on the device (one int64), and both kernels are launched over the
whole order, each skipping the other's pairs: no host sync. The wavefront grid is at most ``WAVE_PROGRAMS``
programs, each taking every ``num_programs``-th of its pairs, so a batch of short pairs pays a few thousand idle
programs, not one per pair. Under ``TRITON_INTERPRET=1`` both kernels run on CPU tensors (numpy), which is how the
tests hold them equal to the tensor kernel and to rapidfuzz.
"""

from __future__ import annotations

import torch
from torch import Tensor

from gpumetrics.core.checks import check_choice, check_int

try:
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - the tensor kernel serves every device then
    triton = None

__all__ = ["levenshtein_triton", "levenshtein_triton_rows", "KERNELS", "LANES", "WARPS", "WAVE_WORDS", "WAVE_WARPS",
           "WAVE_PROGRAMS", "WAVEFRONT_MIN_WORDS"]

KERNELS = ("auto", "columns", "wavefront")
LANES = 1  # column kernel: pairs per program (the module docstring: why this launch shape)
WARPS = 1  # column kernel: warps per program
WAVE_WORDS = 32  # wavefront kernel: pattern words per program (a power of two), one per thread of a warp
WAVE_WARPS = 1  # wavefront kernel: warps per program
WAVE_PROGRAMS = 4096  # wavefront kernel: programs at most; each takes every WAVE_PROGRAMS-th of its pairs
WAVEFRONT_MIN_WORDS = 4  # auto: patterns of at least this many words go to the wavefront kernel (a bet: docstring)


if triton is not None:

    @triton.jit
    def _popcount(x):
        # int64 SWAR bit count; the arithmetic right shifts are masked, so the sign bit is harmless
        x = x - ((x >> 1) & 0x5555555555555555)
        x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
        return ((x * 0x0101010101010101) >> 56) & 0xFF


    @triton.jit
    def _strip_common(values, ps, m, ts, n, live):
        """The common prefix, then the common suffix of the pairs ``[BLOCK]`` (pattern ``ps``, ``m``; text ``ts``,
        ``n``; ``live`` lanes only) stripped 64 symbols a round (a ``[BLOCK, 64]`` compare per round): the new
        ``ps, m, ts, n``."""
        cols = tl.arange(0, 64)
        shortest = tl.minimum(m, n)
        prefix = m * 0
        active = live & (shortest > 0)
        while tl.max(active.to(tl.int32), axis=0) > 0:
            pos = prefix[:, None] + cols[None, :]
            ok = active[:, None] & (pos < shortest[:, None])
            x = tl.load(values + ps[:, None] + pos, mask=ok, other=0)
            y = tl.load(values + ts[:, None] + pos, mask=ok, other=0)
            run = tl.min(tl.where(ok & (x == y), 64, cols[None, :]), axis=1)
            prefix += tl.where(active, run, 0)
            active = active & (run == 64)
        rest = shortest - prefix
        suffix = m * 0
        active = live & (rest > 0)
        while tl.max(active.to(tl.int32), axis=0) > 0:
            back = suffix[:, None] + cols[None, :]
            ok = active[:, None] & (back < rest[:, None])
            x = tl.load(values + ps[:, None] + (m[:, None] - 1 - back), mask=ok, other=0)
            y = tl.load(values + ts[:, None] + (n[:, None] - 1 - back), mask=ok, other=0)
            run = tl.min(tl.where(ok & (x == y), 64, cols[None, :]), axis=1)
            suffix += tl.where(active, run, 0)
            active = active & (run == 64)
        return ps + prefix, m - prefix - suffix, ts + prefix, n - prefix - suffix

    @triton.jit
    def _levenshtein_kernel(values, p_start_ptr, p_len_ptr, t_start_ptr, t_len_ptr, carry_ptr, out_ptr, order_ptr,
                            pairs, count_ptr, BLOCK: tl.constexpr):
        # the last ``count`` pairs of the order are the wavefront kernel's
        lane = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        live = lane < pairs - tl.load(count_ptr)
        pair = tl.load(order_ptr + lane, mask=live, other=0)
        ps = tl.load(p_start_ptr + pair, mask=live, other=0)
        m = tl.load(p_len_ptr + pair, mask=live, other=0)
        ts = tl.load(t_start_ptr + pair, mask=live, other=0)
        n = tl.load(t_len_ptr + pair, mask=live, other=0)
        ps, m, ts, n = _strip_common(values, ps, m, ts, n, live)

        # bit-parallel columns, one pattern word at a time over all text steps
        cols = tl.arange(0, 64)
        distance = tl.where(live, n, 0)
        distance = tl.where(n == 0, m, distance)
        words = tl.where(n > 0, (m + 63) // 64, 0)
        max_words = tl.max(words, axis=0)
        max_steps = tl.max(tl.where(words > 0, n, 0), axis=0)
        bits = tl.full([64], 1, dtype=tl.int64) << cols.to(tl.int64)
        zeros = tl.zeros([BLOCK], dtype=tl.int64)
        ones = zeros - 1
        sign = tl.full([BLOCK], -9223372036854775808, dtype=tl.int64)  # flips the order of int64 into unsigned order
        for w in range(0, max_words):
            base = w * 64
            running = live & (w < words)
            in_word = running[:, None] & (base + cols[None, :] < m[:, None])
            pattern = tl.load(values + ps[:, None] + base + cols[None, :], mask=in_word, other=-1)
            pv = ones
            mv = zeros
            for j in range(0, max_steps):
                stepping = running & (j < n)
                symbol = tl.load(values + ts + j, mask=stepping, other=-2)
                eq = tl.sum(tl.where(in_word & (pattern == symbol[:, None]), bits[None, :], 0), axis=1)
                incoming = tl.load(carry_ptr + ts + j, mask=stepping & (w > 0), other=2).to(tl.int64)  # word 0: +1 in
                add_in = incoming & 1
                ph_in = (incoming >> 1) & 1
                mh_in = (incoming >> 2) & 1
                x = eq & pv
                partial = x + pv
                total = partial + add_in
                add_out = (((partial ^ sign) < (x ^ sign)) | ((add_in == 1) & (total == 0))).to(tl.int64)
                xh = (total ^ pv) | eq
                xv = eq | mv
                ph = mv | ~(xh | pv)
                mh = pv & xh
                outgoing = add_out | (((ph >> 63) & 1) << 1) | (((mh >> 63) & 1) << 2)
                # the last word's carries are never read: a one-word pattern stores nothing
                tl.store(carry_ptr + ts + j, outgoing.to(tl.int8), mask=stepping & (w + 1 < words))
                ph = (ph << 1) | ph_in
                mh = (mh << 1) | mh_in
                pv = tl.where(stepping, mh | ~(xv | ph), pv)
                mv = tl.where(stepping, ph & xv, mv)
            # word w + 1 reads the carries word w stored, possibly from other warps of the program: every store
            # lands before any of those loads (the per-step reductions' own barriers are not a guarantee)
            tl.debug_barrier()
            left = m - base
            mask = tl.where(left >= 64, ones, (tl.full([BLOCK], 1, dtype=tl.int64) << tl.minimum(left, 63)) - 1)
            distance += tl.where(running, _popcount(pv & mask) - _popcount(mv & mask), 0)
        tl.store(out_ptr + pair, distance, mask=live)

    @triton.jit
    def _wavefront_kernel(values, p_start_ptr, p_len_ptr, t_start_ptr, t_len_ptr, hout_ptr, out_ptr, order_ptr,
                          pairs, count_ptr, WORDS: tl.constexpr):
        lanes = tl.arange(0, WORDS)
        bits = tl.full([64, 1], 1, dtype=tl.int64) << tl.arange(0, 64)[:, None].to(tl.int64)
        # the pattern tile [64, WORDS] is loaded flat, element e = row · WORDS + word: a 1-D load's layout deals
        # consecutive elements to consecutive threads, so a thread holds whole words and the match mask's
        # reduction over a word's 64 rows stays in the thread (the module docstring)
        tile_word = tl.arange(0, 64 * WORDS) % WORDS
        tile_row = tl.arange(0, 64 * WORDS) // WORDS
        one = tl.arange(0, 1)
        zeros = tl.zeros([WORDS], dtype=tl.int64)
        ones = zeros - 1
        first = lanes == 0
        # the last ``count`` pairs of the order (the longest patterns), a program's every ``num_programs``-th
        for i in range(pairs - tl.load(count_ptr) + tl.program_id(0), pairs, tl.num_programs(0)):
            pair = tl.load(order_ptr + i + one)  # [1]: the stripping helper's lanes
            ps, m, ts, n = _strip_common(values, tl.load(p_start_ptr + pair), tl.load(p_len_ptr + pair),
                                         tl.load(t_start_ptr + pair), tl.load(t_len_ptr + pair), one == 0)
            ps, m, ts, n = tl.sum(ps, axis=0), tl.sum(m, axis=0), tl.sum(ts, axis=0), tl.sum(n, axis=0)
            words = tl.where(n > 0, (m + 63) // 64, 0)
            distance = tl.where(n > 0, n, m)
            for group in range(0, tl.cdiv(words, WORDS)):
                word = group * WORDS + lanes
                real = word < words
                pos = (group * WORDS + tile_word) * 64 + tile_row
                # symbols are < 2**32: int32 keeps them apart (fewer registers); a padding row's bit is never read
                pattern = tl.reshape(tl.load(values + ps + pos, mask=pos < m, other=0).to(tl.int32), [64, WORDS])
                pv = ones
                mv = zeros
                hout = tl.zeros([WORDS], dtype=tl.int32)
                # wave step t: word k at text column j = t - k; each step loads the next step's symbols (and the
                # group below's deltas: the horizontal delta into a group's low row) while it computes
                j = -lanes
                stepping = real & (j >= 0) & (j < n)
                symbol = tl.load(values + ts + j, mask=stepping, other=0).to(tl.int32)
                below = tl.load(hout_ptr + ts + j, mask=stepping & first & (group > 0), other=1).to(tl.int32)
                for t in range(0, n + tl.minimum(words - group * WORDS, WORDS) - 1):
                    following = real & (j + 1 >= 0) & (j + 1 < n)
                    next_symbol = tl.load(values + ts + j + 1, mask=following, other=0).to(tl.int32)
                    next_below = tl.load(hout_ptr + ts + j + 1, mask=following & first & (group > 0), other=1)
                    eq = tl.sum(tl.where(pattern == symbol[None, :], bits, 0), axis=0)
                    # the delta into a word's low row at column j: what the word below left at its top row one wave
                    # step earlier (row 0 of the table: +1)
                    hin = tl.where(first, below, tl.gather(hout, tl.maximum(lanes - 1, 0), axis=0))
                    negative = (hin < 0).to(tl.int64)
                    xv = eq | mv
                    eq |= negative
                    xh = (((eq & pv) + pv) ^ pv) | eq
                    ph = mv | ~(xh | pv)
                    mh = pv & xh
                    hout = (((ph >> 63) & 1) - ((mh >> 63) & 1)).to(tl.int32)
                    top = stepping & (lanes == WORDS - 1) & (word + 1 < words)
                    tl.store(hout_ptr + ts + j, hout.to(tl.int8), mask=top)
                    ph = (ph << 1) | (hin > 0).to(tl.int64)
                    mh = (mh << 1) | negative
                    pv = tl.where(stepping, mh | ~(xv | ph), pv)
                    mv = tl.where(stepping, ph & xv, mv)
                    j += 1
                    stepping = following
                    symbol = next_symbol
                    below = next_below.to(tl.int32)
                # the next group's lowest word reads the deltas this group's top word stored
                tl.debug_barrier()
                left = tl.minimum(tl.maximum(m - word * 64, 0), 64)  # a lane past the last word: 0
                mask = tl.where(left == 64, ones, (tl.full([WORDS], 1, dtype=tl.int64) << tl.minimum(left, 63)) - 1)
                distance += tl.sum(tl.where(real, _popcount(pv & mask) - _popcount(mv & mask), 0), axis=0)
            tl.store(out_ptr + pair, distance + one * 0)


def levenshtein_triton(
    a: Tensor, a_offsets: Tensor, b: Tensor, b_offsets: Tensor, block: int = 0, num_warps: int = 0, *,
    kernel: str = "auto", words: int = 0,
) -> Tensor:
    """Distances of the ragged pairs ``(a[a_offsets[i]:a_offsets[i+1]], b[b_offsets[i]:b_offsets[i+1]])``.

    Inputs are already checked by :func:`~gpumetrics.kernels.levenshtein.levenshtein_ragged` (symbols in
    ``[0, 2**32)``, offsets from 0 to the end). No host sync.

    Args:
        a, b: ``IntTensor[Ta]``, ``IntTensor[Tb]`` flat symbols (CUDA, or CPU under ``TRITON_INTERPRET=1``).
        a_offsets, b_offsets: ``LongTensor[B + 1]``.
        block, num_warps, kernel, words: the launch (:func:`levenshtein_triton_rows`).

    Returns:
        ``LongTensor[B]``.
    """
    return levenshtein_triton_rows(a, a_offsets[:-1], a_offsets.diff(), b, b_offsets[:-1], b_offsets.diff(), block,
                                   num_warps, kernel=kernel, words=words)


def levenshtein_triton_rows(
    a: Tensor, a_start: Tensor, a_len: Tensor, b: Tensor, b_start: Tensor, b_len: Tensor, block: int = 0,
    num_warps: int = 0, *, shared: bool = False, kernel: str = "auto", words: int = 0,
) -> Tensor:
    """Distances of the pairs ``(a[a_start[i]:a_start[i] + a_len[i]], b[b_start[i]:b_start[i] + b_len[i]])``: rows
    of flat symbol arrays that need not be adjacent (a padded ``[B, L]`` tensor is ``a.flatten()`` with
    ``a_start = L · arange(B)``). Rows of one side must not overlap (each text row owns its carry bytes).
    ``shared=True`` (``b`` is ``a``): one buffer holds both sides' rows (the string routes), read in place without a
    concatenated copy; then no row of ``a`` may overlap a row of ``b`` either — which one tensor under two offsets,
    as a caller may pass it, does not promise, so sharing is asked for, never inferred from ``b is a``.

    ``kernel``: ``"auto"`` gives the pairs whose longer row has at least :data:`WAVEFRONT_MIN_WORDS` 64-symbol words
    to the wavefront kernel and the others to the column kernel (both launched, no host sync); ``"columns"`` or
    ``"wavefront"`` runs every pair on that one. ``block`` (column kernel: pairs per program, 0: :data:`LANES`),
    ``words`` (wavefront kernel: pattern words per program, a power of two, 0: :data:`WAVE_WORDS`), ``num_warps``
    (warps per program of either, 0: :data:`WARPS` / :data:`WAVE_WARPS`) set the launch shapes."""
    if triton is None:
        raise ImportError("the fused Levenshtein kernel needs triton: pip install triton")
    check_choice(kernel, "kernel", KERNELS)
    words = check_int(words, "words", at_least=0) or WAVE_WORDS
    if words & (words - 1):
        raise ValueError(f"`words` must be a power of two, got {words}")
    device = a.device
    batch = a_start.shape[0]
    out = torch.empty(batch, dtype=torch.long, device=device)
    if batch == 0:
        return out
    if shared and b is not a:
        raise ValueError("`shared=True` reads one buffer for both sides: pass the same tensor as `a` and `b`")
    # the kernel indexes the flat buffer itself: a strided view is made contiguous (a copy only then)
    values = a.reshape(-1).long().contiguous() if shared else torch.cat([a.reshape(-1).long(), b.reshape(-1).long()])
    if values.numel() == 0:
        values = torch.zeros(1, dtype=torch.long, device=device)
    a_start, b_start = a_start.long(), b_start.long() + (0 if shared else a.numel())
    a_len, b_len = a_len.long(), b_len.long()
    swap = b_len > a_len
    p_start, t_start = torch.where(swap, b_start, a_start), torch.where(swap, a_start, b_start)
    p_len, t_len = torch.where(swap, b_len, a_len), torch.where(swap, a_len, b_len)
    # similar loops in one block: sort by (pattern words, text steps); the wavefront kernel's pairs come last
    pattern_words = (p_len + 63) // 64
    order = torch.argsort(pattern_words * (1 << 32) + t_len).contiguous()
    if kernel == "auto":
        count = (pattern_words >= WAVEFRONT_MIN_WORDS).sum().reshape(1)
    else:
        count = torch.full((1,), batch if kernel == "wavefront" else 0, dtype=torch.long, device=device)
    carry = torch.empty(values.shape[0], dtype=torch.int8, device=device)
    if kernel != "wavefront":
        block = block or LANES
        _levenshtein_kernel[(triton.cdiv(batch, block),)](values, p_start, p_len, t_start, t_len, carry, out, order,
                                                          batch, count, BLOCK=block, num_warps=num_warps or WARPS)
    if kernel != "columns":  # a text row's bytes: the column kernel's carries, then the wavefront kernel's deltas
        _wavefront_kernel[(min(batch, WAVE_PROGRAMS),)](values, p_start, p_len, t_start, t_len, carry, out, order,
                                                        batch, count, WORDS=words, num_warps=num_warps or WAVE_WARPS)
    return out
