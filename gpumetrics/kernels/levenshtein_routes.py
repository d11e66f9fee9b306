"""Which Levenshtein kernel serves a batch, and how texts and token rows reach it: the three entries of edit distance.

* :func:`levenshtein_texts` (and :func:`levenshtein_strings`, which wraps it): pairs of strings — characters or
  ``str.split()`` words — or of token lists, with each text's length;
* :func:`levenshtein_ragged`: token tensors stored flat (values + offsets), on any device;
* :func:`levenshtein_distance`: padded ``[B, L]`` token tensors with lengths.

Kernels (``backend``): rapidfuzz's C++ batch API on the host (:mod:`gpumetrics.kernels.host`: strings, and CPU token
tensors written as code-point strings), the fused Triton kernel on CUDA when triton imports
(:mod:`gpumetrics.kernels.levenshtein_triton`), the tensor kernel elsewhere (:mod:`gpumetrics.kernels.levenshtein`).

Inputs and devices
------------------
Text pairs enter through :func:`levenshtein_texts` (characters, ``str.split()`` words or token lists;
:func:`levenshtein_strings` wraps it). On CUDA strings travel as code points with a separator after each
(:mod:`gpumetrics.kernels.text_rows`: no per-string host work, the blocks staged straight into pinned memory), and
their rows — for words also the words and their exact content ids — are found on the GPU; elsewhere they are encoded
flat with host lengths (:func:`~gpumetrics.kernels.text_rows.encode_chars_blocks`) and go to the device as values +
offsets in two uploads (:func:`~gpumetrics.kernels.text_rows.upload_rows`), each chunk padded there. On CUDA (when
triton imports) every entry point runs the fused kernel instead of the tensor kernel's step loop: one launch per
batch, one host sync for token tensors (the input checks), none for strings' characters, one for their words (the
word ids' collision flag). The tensor kernel's own syncs: :mod:`gpumetrics.kernels.levenshtein`.
"""

from __future__ import annotations

import functools
import os
import shutil
from itertools import chain
from typing import Callable, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core.checks import check_device, check_integer_tensor
from gpumetrics.core.transfer import upload, upload_all
from gpumetrics.core.warn import warn_caller
from gpumetrics.kernels.host import (
    MAX_CODE_ID, has_rapidfuzz, host_beats_device_route, id_strings, rapidfuzz_distances,
)
from gpumetrics.kernels.levenshtein import DEFAULT_MAX_ELEMENTS, levenshtein_padded, levenshtein_ragged_rows
from gpumetrics.kernels.text_rows import (
    encode_chars_blocks, rows_from_separators, split_words, stage_pairs_separated, upload_rows, upload_staged,
)
from gpumetrics.kernels.vocab import dense_ids

__all__ = ["levenshtein_distance", "levenshtein_ragged", "levenshtein_strings", "levenshtein_texts", "BACKENDS",
           "TOKEN_BACKENDS", "TEXT_UNITS"]

BACKENDS = ("auto", "torch", "rapidfuzz")


def levenshtein_distance(
    a: Tensor,
    a_lengths: Tensor,
    b: Tensor,
    b_lengths: Tensor,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
    *,
    backend: str = "auto",
    names: tuple[str, str] = ("a", "b"),
) -> Tensor:
    """Levenshtein distance of every pair ``(a[i, :a_lengths[i]], b[i, :b_lengths[i]])`` on the device of ``a``.

    Unit costs (insertion, deletion, substitution = 1). Symbols are any integers in ``[0, 2**32)`` (code points,
    vocabulary ids); values past a row's length are ignored (padding may hold any value). ``backend`` (see
    :data:`TOKEN_BACKENDS`): ``"auto"`` runs rapidfuzz's C++ kernel on CPU tensors (rows written as code-point
    strings, :func:`gpumetrics.kernels.host.id_strings`), the fused kernel of
    :mod:`gpumetrics.kernels.levenshtein_triton` on CUDA with triton importable (one host sync: the checks, read at
    once), the tensor kernel (:mod:`gpumetrics.kernels.levenshtein`) elsewhere.

    Args:
        a: ``LongTensor[B, La]`` padded symbols of the first sequences.
        a_lengths: ``LongTensor[B]`` lengths, ``0 ≤ a_lengths ≤ La``.
        b: ``LongTensor[B, Lb]`` padded symbols of the second sequences, same device.
        b_lengths: ``LongTensor[B]`` lengths.
        max_elements: bound on the int64 values of one chunk's working buffers (memory ≈ 8 bytes × this × ~3).
        backend: ``"auto"``, ``"torch"`` (the tensor kernel), ``"triton"`` or ``"rapidfuzz"`` (CPU tensors).
        names: what errors call ``a`` and ``b`` (and ``{name}_lengths``): the caller's own argument names.

    Returns:
        ``LongTensor[B]`` distances, on the device of ``a``.

    Raises:
        TypeError: a non-integer tensor.
        ValueError: shapes or lengths that do not fit.

    Example:
        >>> from gpumetrics.kernels.text_rows import encode_chars
        >>> a, b = encode_chars(["kitten", "", "flaw"]), encode_chars(["sitting", "abc", "lawn"])
        >>> levenshtein_distance(*a, *b)
        tensor([3, 3, 2])
    """
    name_a, name_b = names
    for name, value in ((name_a, a), (name_b, b)):
        if not isinstance(value, Tensor):
            raise TypeError(f"`{name}` must be a tensor, got {type(value).__name__}")
        if value.dim() != 2:
            raise ValueError(f"`{name}` must be a 2-D tensor [B, L], got shape {tuple(value.shape)}")
        check_integer_tensor(value, name)
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"`{name_a}` and `{name_b}` must have the same batch size, got {a.shape[0]} and {b.shape[0]}")
    if a.device != b.device:
        raise ValueError(f"`{name_a}` and `{name_b}` must be on the same device, got {a.device} and {b.device}")
    batch = a.shape[0]
    dtypes = (a.dtype, b.dtype)
    for name, lengths in ((f"{name_a}_lengths", a_lengths), (f"{name_b}_lengths", b_lengths)):
        if not isinstance(lengths, Tensor) or lengths.dim() != 1 or lengths.shape[0] != batch:
            raise ValueError(f"`{name}` must be a 1-D tensor of {batch} lengths")
        check_integer_tensor(lengths, name)
    if batch == 0:
        return torch.zeros(0, dtype=torch.long, device=a.device)
    a_lengths, b_lengths = a_lengths.to(a.device).long(), b_lengths.to(a.device).long()
    # padding may hold anything (-100, -1 …): only the symbols inside the rows are checked and used
    a = torch.where(torch.arange(a.shape[1], device=a.device) < a_lengths[:, None], a.long(), 0)
    b = torch.where(torch.arange(b.shape[1], device=b.device) < b_lengths[:, None], b.long(), 0)
    zero = torch.zeros((), dtype=torch.long, device=a.device)
    bounds = torch.stack([  # every check in one host read
        a.min() if a.numel() else zero, a.max() if a.numel() else zero,
        b.min() if b.numel() else zero, b.max() if b.numel() else zero,
        a_lengths.min(), a_lengths.max(), b_lengths.min(), b_lengths.max(),
    ])

    def check(values: np.ndarray) -> None:
        _check_symbol_bounds(names, values[:4], dtypes)
        for name, low, high, width in ((f"{name_a}_lengths", *values[4:6], a.shape[1]),
                                       (f"{name_b}_lengths", *values[6:8], b.shape[1])):
            if low < 0 or high > width:
                raise ValueError(f"`{name}` must lie in [0, {width}] (the padded width), got [{low}, {high}]")

    route = _token_route(backend, a.device)
    if route != "torch":  # the tensor kernel reads the bounds with the stripped lengths it plans from
        check(bounds.cpu().numpy())
    if route == "rapidfuzz":
        keep_a = torch.arange(a.shape[1]) < a_lengths[:, None]
        keep_b = torch.arange(b.shape[1]) < b_lengths[:, None]
        found = _rapidfuzz_rows(torch.cat([a[keep_a], b[keep_b]]), torch.cat([a_lengths, b_lengths]), backend)
        if found is not None:
            return found
    if route == "triton":
        from gpumetrics.kernels.levenshtein_triton import levenshtein_triton_rows

        starts_a = torch.arange(batch, device=a.device) * a.shape[1]
        starts_b = torch.arange(batch, device=a.device) * b.shape[1]
        found = _fused(lambda: levenshtein_triton_rows(a.contiguous(), starts_a, a_lengths, b.contiguous(), starts_b,
                                                       b_lengths), explicit=backend == "triton")
        if found is not None:
            return found
    # the tensor kernel reads the bounds with the stripped lengths it plans from: one host read in all
    return levenshtein_padded([(a, a_lengths, b, b_lengths)], max_elements, bounds, check)[0]


def _check_ragged(values: Tensor, offsets: Tensor, name: str) -> None:
    if not isinstance(values, Tensor) or not isinstance(offsets, Tensor):
        raise TypeError(f"`{name}` and `{name}_offsets` must be tensors")
    if values.dim() != 1:
        raise ValueError(f"`{name}` must be a 1-D tensor of concatenated symbols, got shape {tuple(values.shape)}")
    if offsets.dim() != 1 or offsets.shape[0] < 1:
        raise ValueError(f"`{name}_offsets` must be a 1-D tensor of B + 1 offsets")
    check_integer_tensor(values, name)
    check_integer_tensor(offsets, f"{name}_offsets")
    if offsets.device != values.device:
        raise ValueError(f"`{name}_offsets` must be on the device of `{name}` ({values.device}), got {offsets.device}")


TOKEN_BACKENDS = ("auto", "torch", "triton", "rapidfuzz")
# torch has no min / max (and few other kernels) for these: their symbols are read as int64 (a uint64 id ≥ 2**63 then
# reads as negative: refused by _check_symbol_bounds, which names it)
_NARROW_KERNEL_DTYPES = (torch.uint16, torch.uint32, torch.uint64)


def _check_symbol_bounds(names: tuple[str, str], bounds: np.ndarray, dtypes: tuple[torch.dtype, torch.dtype]) -> None:
    """Both sides' symbols in ``[0, 2**32)``: ``bounds`` = (min a, max a, min b, max b) read as int64, where a
    ``uint64`` id ≥ 2**63 reads as negative (named as what it is)."""
    for name, low, high, dtype in ((names[0], *bounds[0:2], dtypes[0]), (names[1], *bounds[2:4], dtypes[1])):
        if low < 0 and dtype == torch.uint64:
            raise ValueError(f"`{name}` symbols must lie in [0, 2**32), got a uint64 id of 2**63 or more")
        if low < 0 or high >= 1 << 32:
            raise ValueError(f"`{name}` symbols must lie in [0, 2**32), got [{low}, {high}]")


def _widened(values: Tensor) -> Tensor:
    return values.long() if values.dtype in _NARROW_KERNEL_DTYPES else values


def _token_route(backend: str, device: torch.device) -> str:
    """The kernel for token tensors on ``device``: ``"rapidfuzz"``, ``"triton"`` or ``"torch"`` (see
    :data:`TOKEN_BACKENDS`)."""
    if backend not in TOKEN_BACKENDS:
        raise ValueError(f"`backend` must be one of {', '.join(map(repr, TOKEN_BACKENDS))}; got {backend!r}")
    if backend == "rapidfuzz":
        if device.type != "cpu":
            raise ValueError(f"`backend='rapidfuzz'` runs on the host: the tokens must be CPU tensors, got {device}")
        if not has_rapidfuzz():
            raise ValueError("`backend='rapidfuzz'` needs the rapidfuzz package: pip install rapidfuzz")
        return "rapidfuzz"
    if backend == "auto":
        if device.type == "cpu" and has_rapidfuzz():
            return "rapidfuzz"
        return "triton" if _fused_kernel_serves(device) else "torch"
    return backend


def _rapidfuzz_rows(ids: Tensor, lengths: Tensor, backend: str) -> Optional[Tensor]:
    """Distances of the pairs ``(row i, row B + i)`` of ``2·B`` checked CPU rows (flat ``ids``, ``lengths``) by
    rapidfuzz, the rows written as code-point strings; ``None`` when the ids cannot be (``backend="auto"`` then runs
    the tensor kernel; an explicit ``"rapidfuzz"`` raises)."""
    rows = id_strings(ids.numpy(), lengths.numpy())
    if rows is None:
        if backend == "rapidfuzz":
            raise ValueError("`backend='rapidfuzz'` writes ids as code points: more distinct ids than "
                             f"{MAX_CODE_ID:,} do not fit")
        return None
    half = len(rows) // 2
    return torch.from_numpy(rapidfuzz_distances(rows[:half], rows[half:]))


def levenshtein_ragged(
    a: Tensor,
    a_offsets: Tensor,
    b: Tensor,
    b_offsets: Tensor,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
    backend: str = "auto",
    *,
    names: tuple[str, str] = ("a", "b"),
) -> Tensor:
    """Levenshtein distance of every pair of ragged rows ``(a[a_offsets[i]:a_offsets[i+1]], b[...])`` on their device.

    Rows travel flat (values + offsets), never padded as a whole batch: the tensor kernel gathers each chunk of
    similar-length pairs into its own padded block on the device, and the fused Triton kernel
    (:mod:`gpumetrics.kernels.levenshtein_triton`, used on CUDA when triton is importable) reads the flat rows
    directly.

    Host syncs: one read of the checks' bounds (min/max of values and offsets) with the ``2·B`` lengths (the padded
    widths), one read of the common-affix-stripped lengths the chunks are planned from, and one ``unique`` per chunk
    (one chunk for every batch whose padded chunk fits ``max_elements``): the same for any lengths. On the Triton
    path only the first read.

    Args:
        a: ``IntTensor[Ta]`` symbols of the first sequences, concatenated (any integers in ``[0, 2**32)``).
        a_offsets: ``LongTensor[B + 1]``: row ``i`` is ``a[a_offsets[i]:a_offsets[i + 1]]``.
        b: ``IntTensor[Tb]`` symbols of the second sequences, same device.
        b_offsets: ``LongTensor[B + 1]``.
        max_elements: bound on one chunk's int64 working values (tensor kernel).
        backend: ``"auto"`` (rapidfuzz on CPU tensors when installed, Triton on CUDA when importable, else the
            tensor kernel), ``"torch"`` (the tensor kernel), ``"triton"`` or ``"rapidfuzz"`` (CPU tensors).
        names: what errors call ``a`` and ``b`` (and ``{name}_offsets``): the caller's own argument names.

    Returns:
        ``LongTensor[B]`` on the device of ``a``.

    Raises:
        TypeError: a non-integer tensor.
        ValueError: shapes, offsets or devices that do not fit.

    Example:
        >>> from gpumetrics.kernels.text_rows import encode_chars_ragged
        >>> a, b = encode_chars_ragged(["kitten", "", "flaw"]), encode_chars_ragged(["sitting", "abc", "lawn"])
        >>> levenshtein_ragged(*a, *b)
        tensor([3, 3, 2])
    """
    name_a, name_b = names
    _check_ragged(a, a_offsets, name_a)
    _check_ragged(b, b_offsets, name_b)
    if b.device != a.device:
        raise ValueError(f"`{name_a}` and `{name_b}` must be on the same device, got {a.device} and {b.device}")
    if a_offsets.shape[0] != b_offsets.shape[0]:
        raise ValueError(f"`{name_a}_offsets` and `{name_b}_offsets` must have the same length (the same number of "
                         f"rows), got {a_offsets.shape[0]} and {b_offsets.shape[0]}")
    device = a.device
    batch = a_offsets.shape[0] - 1
    dtypes = (a.dtype, b.dtype)
    a, b = _widened(a), _widened(b)
    a_offsets, b_offsets = a_offsets.long(), b_offsets.long()  # a narrow dtype's diff would wrap a falling offset
    a_len, b_len = a_offsets.diff(), b_offsets.diff()
    route = _token_route(backend, device)
    use_triton = route == "triton"
    # every bound in one host read (symbols in [0, 2**32), offsets from 0 to T, non-decreasing), with the 2·B
    # lengths the tensor kernel plans from
    zero = torch.zeros((), dtype=torch.long, device=device)
    bounds = torch.stack([
        a.min().long() if a.numel() else zero, a.max().long() if a.numel() else zero,
        b.min().long() if b.numel() else zero, b.max().long() if b.numel() else zero,
        a_offsets[0].long(), a_offsets[-1].long(), b_offsets[0].long(), b_offsets[-1].long(),
        a_len.min() if batch else zero, b_len.min() if batch else zero,
    ])
    host = (bounds if use_triton else torch.cat([bounds, a_len, b_len])).cpu().numpy()
    _check_symbol_bounds(names, host[:4], dtypes)
    for name, first, last, shortest, total in ((name_a, *host[4:6], host[8], a.shape[0]),
                                               (name_b, *host[6:8], host[9], b.shape[0])):
        if first != 0 or last != total or shortest < 0:
            raise ValueError(f"`{name}_offsets` must rise from 0 to len({name}) = {total}")
    if batch == 0:
        return torch.zeros(0, dtype=torch.long, device=device)
    if route == "rapidfuzz":
        found = _rapidfuzz_rows(torch.cat([a, b]), torch.cat([a_len, b_len]), backend)
        if found is not None:
            return found
    if use_triton:
        from gpumetrics.kernels.levenshtein_triton import levenshtein_triton

        found = _fused(lambda: levenshtein_triton(a, a_offsets, b, b_offsets), explicit=backend == "triton")
        if found is not None:
            return found
        host = np.concatenate([host, torch.cat([a_len, b_len]).cpu().numpy()])  # the tensor kernel plans from them
    return levenshtein_ragged_rows(a, a_offsets[:-1], a_len, b, b_offsets[:-1], b_len, host[10 : 10 + batch],
                                   host[10 + batch :], max_elements)


def _levenshtein_rows(values: Tensor, starts: Tensor, lengths: Tensor, host_lengths: Optional[np.ndarray] = None,
                      max_elements: int = DEFAULT_MAX_ELEMENTS) -> Tensor:
    """Pairs ``(row i, row B + i)`` of ``2·B`` checked rows of ``values`` (``starts``, ``lengths``:
    ``LongTensor[2B]`` on the device; rows need not be contiguous): the Triton kernel on CUDA when importable (no host
    sync), else the tensor kernel, planned from ``host_lengths`` (``int64[2B]``) when the host knows them (strings,
    word ids) or from one read of ``lengths`` (then one read of the stripped lengths, one ``unique`` per chunk)."""
    batch = lengths.shape[0] // 2
    if batch == 0:
        return torch.zeros(0, dtype=torch.long, device=values.device)
    if _fused_kernel_serves(values.device):
        from gpumetrics.kernels.levenshtein_triton import levenshtein_triton_rows

        found = _fused(lambda: levenshtein_triton_rows(values, starts[:batch], lengths[:batch], values, starts[batch:],
                                                       lengths[batch:], shared=True))
        if found is not None:
            return found
    if host_lengths is None:
        host_lengths = lengths.cpu().numpy()
    return levenshtein_ragged_rows(values, starts[:batch], lengths[:batch], values, starts[batch:], lengths[batch:],
                                   host_lengths[:batch], host_lengths[batch:], max_elements)


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
        backend: ``"torch"`` (device kernels on ``device``: the Triton kernel on CUDA when importable, else the
            tensor kernel), ``"rapidfuzz"`` (C++ on the host, result moved to ``device``) or ``"auto"`` (rapidfuzz
            when installed on the CPU; elsewhere the device kernels, unless rapidfuzz's threads on the free cores
            finish first: :func:`_auto_backend`).
        device: where the result (and the device kernels) lives; CPU by default.
        check: for string items, a validation ``check(a, b)`` that raises a descriptive error for a non-string item.
            The rapidfuzz path first counts the item types at C level and calls ``check``
            only when one is not a string; the torch path calls ``check`` first.

    Returns:
        ``LongTensor[B]`` on ``device``.

    Example:
        >>> levenshtein_strings(["kitten", "a b c"], ["sitting", "a c"], backend="torch")
        tensor([3, 2])
        >>> levenshtein_strings([["a", "b", "c"]], [["a", "c"]], backend="rapidfuzz")
        tensor([1])
    """
    unit = "tokens" if len(a) and not isinstance(a[0], str) else "char"
    return levenshtein_texts(a, b, unit=unit, backend=backend, device=device, check=check, lengths=False)[0]


TEXT_UNITS = ("char", "word", "tokens")


def levenshtein_texts(
    a: Sequence,
    b: Sequence,
    unit: str = "char",
    backend: str = "auto",
    device: Optional[torch.device | str] = None,
    check: Optional[Callable[[Sequence, Sequence], None]] = None,
    lengths: bool = True,
) -> tuple[Tensor, Optional[Tensor], Optional[Tensor]]:
    """Levenshtein distance of every pair of texts, and each text's length, in characters, words or given tokens.

    On CUDA (``backend`` ``"torch"``, or ``"auto"`` there) strings travel with a separator
    after each (:func:`~gpumetrics.kernels.text_rows.stage_pairs_separated`: no per-string host work) and their rows —
    and for ``unit="word"`` their words and word ids — are found on the device (one host sync for the word ids'
    collision flag, none for characters). A string holding ``"\\0"``, or a word-hash collision, takes the host
    encoding instead (same values).

    Args:
        a: ``B`` strings (``unit`` ``"char"`` or ``"word"``: ``str.split()`` tokens) or ``B`` lists of hashable
            tokens (``unit="tokens"``, ids by first appearance over both sides).
        b: ``B`` items of the same kind.
        unit: ``"char"``, ``"word"`` or ``"tokens"``.
        backend: as :func:`levenshtein_strings`.
        device: where the results (and the device kernels) live; CPU by default.
        check: for string items, ``check(a, b)`` raises a descriptive error for a non-string item (see
            :func:`levenshtein_strings`).
        lengths: ``False``: skip the lengths where they would cost host work (they are ``None`` then).

    Returns:
        ``(distances, lengths_a, lengths_b)``: ``LongTensor[B]`` each, on ``device``.

    Example:
        >>> levenshtein_texts(["a b  c", "x"], ["a c", ""], unit="word", backend="torch")
        (tensor([1, 1]), tensor([3, 1]), tensor([2, 0]))
    """
    device = check_device(device, "device")
    if backend not in BACKENDS:
        raise ValueError(f"`backend` must be one of {', '.join(map(repr, BACKENDS))}; got {backend!r}")
    if unit not in TEXT_UNITS:
        raise ValueError(f"`unit` must be one of {', '.join(map(repr, TEXT_UNITS))}; got {unit!r}")
    if backend == "auto":
        backend = _auto_backend(a, b, unit, device)
    if backend == "rapidfuzz" and not has_rapidfuzz():
        raise ValueError("`backend='rapidfuzz'` needs the rapidfuzz package: pip install rapidfuzz")
    if backend == "torch":  # it checks where its route needs it (:func:`_torch_pair_distances`)
        distances, both_lengths = _torch_pair_distances(a, b, unit, device, check)
        return distances, both_lengths[: len(a)], both_lengths[len(a) :]
    if check is not None and unit == "word":  # split before rapidfuzz: the items must be strings first
        check(a, b)
        check = None
    if unit == "word":
        a, b = list(map(str.split, a)), list(map(str.split, b))
    # rapidfuzz accepts lists and bytes too: string inputs are held to strings (C-level type counts, chunk by
    # chunk); on a failure ``check`` raises the descriptive error
    try:
        distances = upload(rapidfuzz_distances(a, b, strings=check is not None), device)
    except TypeError:
        if check is not None:
            check(a, b)
        raise
    if not lengths:
        return distances, None, None
    lengths_a = np.fromiter(map(len, a), dtype=np.int64, count=len(a))
    lengths_b = np.fromiter(map(len, b), dtype=np.int64, count=len(b))
    return distances, *upload_all([lengths_a, lengths_b], device)


def _auto_backend(a: Sequence, b: Sequence, unit: str, device: torch.device) -> str:
    """``backend="auto"``: rapidfuzz on the CPU; on a device the device kernels — except for long character pairs
    that rapidfuzz on the host's free cores scores before the device route would
    (:func:`~gpumetrics.kernels.host.host_beats_device_route`: enough pairs for threads and ≥ 2 free cores): the
    strings are on the host already, so the result is computed there and uploaded.
    Words and token lists always take the device kernels (splitting on the host costs more than the distances)."""
    if not has_rapidfuzz():
        return "torch"
    if device.type == "cpu":
        return "rapidfuzz"
    if unit == "char" and host_beats_device_route(a, b):
        return "rapidfuzz"
    return "torch"


def _torch_pair_distances(a: Sequence, b: Sequence, unit: str, device: torch.device,
                          check: Optional[Callable[[Sequence, Sequence], None]] = None) -> tuple[Tensor, Tensor]:
    """Device-kernel distances of pairs and ``LongTensor[2B]`` lengths of ``[*a, *b]``, on ``device``. ``check``
    (for string items not checked yet): called where the device route's ``str.join`` met a non-string item, so that
    the error names it, or before the host encoding when that route did not serve (it may not have read every item).
    A pass of its own over a million strings costs as much as their encoding."""
    if unit != "tokens":
        try:
            found = _device_route(a, b, unit, device)
        except TypeError:
            if check is not None:
                check(a, b)
            raise
        if found is not None:
            return found
    if check is not None:
        check(a, b)
    both = [*a, *b]  # both sides in one encoding and one upload of values, one of offsets
    if unit == "word":
        both = list(map(str.split, both))
    if unit == "char":
        ids, host_lengths = encode_chars_blocks(both)
    else:  # token lists: ids by first appearance over both sides
        ids, _ = dense_ids(list(chain.from_iterable(both)))
        host_lengths = np.fromiter(map(len, both), dtype=np.int64, count=len(both))
    values, offsets = upload_rows(ids, host_lengths, device, private=True)
    row_lengths = offsets.diff()
    return _levenshtein_rows(values, offsets[:-1], row_lengths, host_lengths), row_lengths


def _rows_on_device(device: torch.device) -> bool:
    """Whether text rows are found where the kernel runs: on CUDA (on the CPU the host's lengths are cheaper than
    a pass over every symbol; other accelerators keep the host route; tests switch this on to run the device route
    on the CPU)."""
    return device.type == "cuda"


_DEVICE_ROUTE_SYMBOLS = 1 << 24  # symbols per device pass: word splitting holds ~12 int64 values per symbol (1.6 GB)


def _device_route(a: Sequence[str], b: Sequence[str], unit: str,
                  device: torch.device) -> Optional[tuple[Tensor, Tensor]]:
    """Distances ``LongTensor[B]`` and lengths ``LongTensor[2B]`` (``a``'s then ``b``'s) of string pairs whose rows
    — and for ``unit="word"`` words and word ids — are found on ``device`` (:mod:`gpumetrics.kernels.text_rows`),
    in chunks of pairs of at most ``_DEVICE_ROUTE_SYMBOLS`` symbols (one for usual batches). ``None`` where the host
    encoding must serve: off CUDA, for a string holding ``"\\0"``, or on a word-hash collision in any chunk (one
    host sync reads all chunks' flags at the end)."""
    if not _rows_on_device(device):
        return None
    distances, lengths_a, lengths_b, collisions = [], [], [], []
    for chunk in stage_pairs_separated(a, b, _DEVICE_ROUTE_SYMBOLS, device):  # the next chunk is staged meanwhile
        if chunk is None:
            return None
        pairs, staged = chunk
        values = upload_staged(staged, device)
        starts, row_lengths = rows_from_separators(values, 2 * pairs)
        if unit == "word":
            values, starts, row_lengths, collided = split_words(values, starts, row_lengths)
            collisions.append(collided)
        distances.append(_levenshtein_rows(values, starts, row_lengths))
        lengths_a.append(row_lengths[:pairs])
        lengths_b.append(row_lengths[pairs:])
    if collisions and bool(torch.stack(collisions).any()):
        return None
    if not distances:
        empty = torch.zeros(0, dtype=torch.long, device=device)
        return empty, empty
    return torch.cat(distances), torch.cat(lengths_a + lengths_b)


#: the first failure of the fused kernel in this process ("Type: message"); the tensor kernel serves from then on
_FUSED_FAILURE: list[str] = []


def _fused_kernel_serves(device: torch.device) -> bool:
    """The fused Triton kernel runs ``backend="auto"`` on ``device``: CUDA, triton importable with a C compiler, and
    no launch of it failed in this process."""
    return device.type == "cuda" and _has_triton() and not _FUSED_FAILURE


def _fused(launch: Callable[[], Tensor], explicit: bool = False) -> Optional[Tensor]:
    """``launch()`` of the fused kernel, or ``None`` — with one warning per process — where Triton cannot build or
    launch it on this machine (its compiler, ``ptxas`` or the driver fails: an install problem, not an input's), so
    the caller runs the tensor kernel, with the same values. ``explicit`` (``backend="triton"``): the error is
    raised."""
    try:
        return launch()
    except torch.OutOfMemoryError:  # a batch too large for the device now, not a broken install
        raise
    except Exception as err:  # Triton's own error types vary by version (CompilationError, RuntimeError, OSError …)
        if explicit:
            raise
        if not _FUSED_FAILURE:
            _FUSED_FAILURE.append(f"{type(err).__name__}: {err}")
            warn_caller(f"the fused Triton Levenshtein kernel failed on this machine ({_FUSED_FAILURE[0][:300]}); "
                          "the tensor kernel serves edit distance in this process", RuntimeWarning)
        return None


@functools.lru_cache(maxsize=1)
def _has_triton() -> bool:
    """Triton imports and can build its launcher (it compiles a small C stub with the machine's C compiler on first
    use: without one every launch would fail, so the tensor kernel runs instead)."""
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return any(shutil.which(name) for name in (os.environ.get("CC") or "cc", "gcc", "clang"))

