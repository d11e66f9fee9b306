"""Ragged batches stored flat: S segments of ``lengths[s]`` items concatenated into one tensor of T items.

Every metric that handles variable-length data (tokens of texts, n-grams of texts, gold answers of questions, boxes
of images) uses these helpers instead of its own ``repeat_interleave(arange)``. All of them stay on the device of
their inputs. Where a result's size depends on values (``Σ lengths``, ``max(lengths)``), the caller may pass it when
it is already known on the host; otherwise the helper reads it, which is one host synchronisation on a GPU.
:class:`Ragged` is the public form of such a batch (values + offsets), as token tensors enter edit distance.
"""

from __future__ import annotations

from typing import Iterator, NamedTuple, Optional

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core.checks import check_integer_tensor, describe_value
from gpumetrics.core.transfer import upload


def segment_ids(lengths: Tensor, total: Optional[int] = None) -> Tensor:
    """The segment of every item: ``LongTensor[T]`` with ``T = Σ lengths``.

    Args:
        lengths: ``LongTensor[S]`` non-negative segment lengths.
        total: ``Σ lengths`` when known on the host (no synchronisation); read from ``lengths`` otherwise.

    Example:
        >>> segment_ids(torch.tensor([2, 0, 1]))
        tensor([0, 0, 2])
    """
    segments = torch.arange(lengths.numel(), device=lengths.device)
    return torch.repeat_interleave(segments, lengths, output_size=total)


def segment_starts(lengths: Tensor) -> Tensor:
    """Index of the first item of every segment (exclusive prefix sum): ``LongTensor[S]``.

    Example:
        >>> segment_starts(torch.tensor([2, 0, 1]))
        tensor([0, 2, 2])
    """
    return torch.cumsum(lengths, 0) - lengths


def offsets_in_segment(lengths: Tensor, segment: Optional[Tensor] = None) -> Tensor:
    """Position of every item inside its segment: ``LongTensor[T]``.

    Args:
        lengths: ``LongTensor[S]``.
        segment: ``segment_ids(lengths)`` when the caller already has it.

    Example:
        >>> offsets_in_segment(torch.tensor([2, 0, 3]))
        tensor([0, 1, 0, 1, 2])
    """
    if segment is None:
        segment = segment_ids(lengths)
    return torch.arange(segment.numel(), device=lengths.device) - segment_starts(lengths).index_select(0, segment)


def expand_segments(values: Tensor, lengths: Tensor, owner: Tensor,
                    total: Optional[int] = None) -> tuple[Tensor, Tensor]:
    """Copy segment ``owner[k]`` for every k: the items of a ragged batch repeated per pair.

    Used where one text is compared with each of its references (segment = text, k = pair).

    Args:
        values: ``Tensor[T, ...]`` items of all segments, concatenated.
        lengths: ``LongTensor[S]`` items per segment.
        owner: ``LongTensor[K]`` segment to copy for each k.
        total: ``Σ lengths[owner]`` when known on the host.

    Returns:
        ``(values: Tensor[T', ...], k: LongTensor[T'])``: the copied items, k after k, and the k of each.

    Example:
        >>> expand_segments(torch.tensor([7, 8, 9]), torch.tensor([2, 1]), torch.tensor([0, 1, 0]))
        (tensor([7, 8, 9, 7, 8]), tensor([0, 0, 1, 2, 2]))
    """
    owner_lengths = lengths[owner]
    k_of_item = segment_ids(owner_lengths, total)
    source = segment_starts(lengths)[owner][k_of_item] + offsets_in_segment(owner_lengths, k_of_item)
    return values[source], k_of_item


def pad_segments(values: Tensor, lengths: Tensor, fill: float | int, width: Optional[int] = None) -> Tensor:
    """Right-pad every segment to a common width: ``Tensor[S, W, ...]`` (``W = max(lengths)`` unless given).

    Example:
        >>> pad_segments(torch.tensor([1, 2, 3]), torch.tensor([1, 0, 2]), -1)
        tensor([[ 1, -1],
                [-1, -1],
                [ 2,  3]])
    """
    if width is None:
        width = int(lengths.max()) if lengths.numel() else 0
    out = values.new_full((lengths.numel(), width, *values.shape[1:]), fill)
    if values.shape[0]:
        segment = segment_ids(lengths, values.shape[0])
        out[segment, offsets_in_segment(lengths, segment)] = values
    return out


def scatter_any(mask: Tensor, index: Tensor, size: int) -> Tensor:
    """``BoolTensor[size]``: True at ``i`` iff some ``k`` has ``index[k] == i`` and ``mask[k]``.

    Example:
        >>> scatter_any(torch.tensor([True, False, True]), torch.tensor([2, 0, 2]), 3)
        tensor([False, False,  True])
    """
    out = torch.zeros(size, dtype=torch.long, device=index.device)
    return out.index_add_(0, index, mask.long()) > 0


def segment_products(counts_a: Tensor, counts_b: Tensor, total: Optional[int] = None) -> tuple[Tensor, Tensor, Tensor]:
    """Every (a, b) combination inside each segment: the per-segment Cartesian product of two ragged batches.

    Args:
        counts_a, counts_b: ``LongTensor[S]`` items of each segment on either side.
        total: ``Σ counts_a · counts_b`` when known on the host.

    Returns:
        ``(segment, a, b)``, each ``LongTensor[Σ counts_a · counts_b]``, segment-major, then a, then b; ``a`` and
        ``b`` are positions inside the segment (add ``segment_starts(counts_*)[segment]`` for flat indices).

    Example:
        >>> [x.tolist() for x in segment_products(torch.tensor([2, 1]), torch.tensor([1, 2]))]
        [[0, 0, 1, 1], [0, 1, 0, 0], [0, 0, 0, 1]]
    """
    per_segment = counts_a * counts_b
    segment = segment_ids(per_segment, total)
    local = offsets_in_segment(per_segment, segment)
    width = counts_b.index_select(0, segment).clamp_min(1)
    return segment, torch.div(local, width, rounding_mode="floor"), local % width


def size_buckets(sizes_a: np.ndarray, sizes_b: np.ndarray, slack: int) -> Optional[list[np.ndarray]]:
    """Items (pairs, groups) in buckets of similar ``(a, b)`` sizes, for padded ``[n, max a, max b]`` work.

    Padding every item to the largest sizes costs ``n · max a · max b`` cells of work and ``n · (max a + max b)`` of
    memory: one item of 10^4 among 10^4 of 10 makes both quadratic. Within a bucket both sizes lie in the same
    power-of-two octave, so its padded work is at most 4× its own ``Σ a·b`` (and its memory 2× ``Σ a + b``).

    Args:
        sizes_a, sizes_b: host ``int64[n]`` sizes of every item on either side.
        slack: cells a single padded block may waste before the items are split.

    Returns:
        ``None`` when one padded block wastes at most the items' own cells plus ``slack`` (work and memory);
        otherwise ``int64`` index arrays, one per bucket (ascending inside a bucket). Items with a size 0 are in no
        bucket: they have no ``(a, b)`` cell.

    Example:
        >>> size_buckets(np.array([1000, 2, 2, 0, 3]), np.array([900, 2, 2, 5, 1]), slack=0)
        [array([1, 2]), array([4]), array([0])]
    """
    n = sizes_a.size
    width_a, width_b = int(sizes_a.max(initial=0)), int(sizes_b.max(initial=0))
    cells, items = int((sizes_a * sizes_b).sum()), int((sizes_a + sizes_b).sum())
    if n * width_a * width_b <= 2 * cells + slack and n * (width_a + width_b) <= 2 * items + slack:
        return None
    octave_a, octave_b = (np.ceil(np.log2(np.maximum(sizes, 1))).astype(np.int64) for sizes in (sizes_a, sizes_b))
    key = octave_a * 64 + octave_b
    kept = np.flatnonzero((sizes_a > 0) & (sizes_b > 0))
    kept = kept[np.argsort(key[kept], kind="stable")]
    return np.split(kept, np.flatnonzero(np.diff(key[kept])) + 1) if kept.size else []


def bucket_indices(buckets: list[np.ndarray], device: torch.device) -> Iterator[tuple[np.ndarray, Tensor]]:
    """Each bucket of :func:`size_buckets` with its indices on ``device`` (one upload for all buckets).

    Example:
        >>> [(b.tolist(), t.tolist()) for b, t in bucket_indices([np.array([1, 2]), np.array([0])], "cpu")]
        [([1, 2], [1, 2]), ([0], [0])]
    """
    order = upload(np.concatenate(buckets) if buckets else np.zeros(0, dtype=np.int64), device)
    first = 0
    for bucket in buckets:
        yield bucket, order[first:first + bucket.size]
        first += bucket.size


def pad_rows(
    flat: Tensor, lengths: Tensor, rows: Tensor, host_lengths: np.ndarray, fill: float
) -> tuple[Tensor, Tensor]:
    """Segments ``rows`` (``LongTensor[r]``) of ``flat`` / ``lengths`` right-padded with ``fill`` to the longest of
    them: ``(Tensor[r, W], LongTensor[r])``; ``host_lengths``: their lengths on the host (no sync).

    Example:
        >>> pad_rows(torch.tensor([1, 2, 3]), torch.tensor([2, 1]), torch.tensor([1, 0]), np.array([1, 2]), -1)
        (tensor([[ 3, -1],
                [ 1,  2]]), tensor([1, 2]))
    """
    tokens, _ = expand_segments(flat, lengths, rows, int(host_lengths.sum()))
    return pad_segments(tokens, lengths[rows], fill, int(host_lengths.max(initial=0))), lengths[rows]


class Ragged(NamedTuple):
    """A batch of ``B`` integer sequences stored flat on any device: row ``i`` is ``values[offsets[i]:offsets[i+1]]``.

    The natural layout of decoder output that was compacted (CTC greedy decoding after dropping blanks and repeats):
    no padding, no host copy.

    Attributes:
        values: ``IntTensor[T]`` the rows' symbols (token ids, code points), concatenated.
        offsets: ``LongTensor[B + 1]``, ``offsets[0] = 0``, non-decreasing, ``offsets[B] = T``.

    Example:
        >>> Ragged(torch.tensor([5, 6, 7]), torch.tensor([0, 2, 3])).lengths()
        tensor([2, 1])
    """

    values: Tensor
    offsets: Tensor

    def lengths(self) -> Tensor:
        """``LongTensor[B]`` row lengths (offsets read as int64 first: a narrow or unsigned dtype's difference wraps
        or has no kernel)."""
        return self.offsets.long().diff()

    @classmethod
    def from_lengths(cls, values: Tensor, lengths: Tensor) -> "Ragged":
        """Rows of ``lengths[i]`` symbols each, in order (``Σ lengths = len(values)``).

        Raises:
            TypeError: ``lengths`` is not an integer tensor (a float length would be truncated without a word).
            ValueError: ``lengths`` is not 1-D ``[B]``.
        """
        if not isinstance(lengths, Tensor):
            raise TypeError(f"`lengths` must be a 1-D integer tensor, got {describe_value(lengths)}")
        check_integer_tensor(lengths, "lengths")
        if lengths.dim() != 1:
            raise ValueError(f"`lengths` must be a 1-D tensor [B] of row lengths, got shape {tuple(lengths.shape)}")
        offsets = torch.zeros(lengths.shape[0] + 1, dtype=torch.long, device=lengths.device)
        offsets[1:] = lengths.long().cumsum(0)
        return cls(values, offsets)
