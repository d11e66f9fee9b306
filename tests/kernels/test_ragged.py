"""Ragged-batch helpers against list comprehensions, including empty segments and empty batches."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from gpumetrics.kernels.ragged import (
    Ragged,
    expand_segments,
    offsets_in_segment,
    pad_segments,
    scatter_any,
    segment_ids,
    segment_products,
    segment_starts,
    size_buckets,
)


def flatten_lists(lists: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """A list of int lists as ``(values: LongTensor[T], lengths: LongTensor[S])``."""
    lengths = torch.tensor([len(items) for items in lists], dtype=torch.long)
    return torch.tensor([value for items in lists for value in items], dtype=torch.long), lengths


def random_lists(seed: int, count: int = 30) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng.randrange(100) for _ in range(rng.choice([0, 0, 1, rng.randint(0, 9)]))] for _ in range(count)]


def test_segments_starts_offsets() -> None:
    lists = random_lists(1)
    values, lengths = flatten_lists(lists)
    assert values.tolist() == [v for items in lists for v in items] and lengths.tolist() == list(map(len, lists))
    expected_ids = [s for s, items in enumerate(lists) for _ in items]
    assert segment_ids(lengths).tolist() == expected_ids
    assert segment_ids(lengths, total=values.numel()).tolist() == expected_ids
    assert segment_starts(lengths).tolist() == [sum(map(len, lists[:s])) for s in range(len(lists))]
    assert offsets_in_segment(lengths).tolist() == [i for items in lists for i in range(len(items))]


def test_expand_and_pad() -> None:
    lists = random_lists(2)
    values, lengths = flatten_lists(lists)
    owner = torch.tensor([3, 0, 3, 7, 29, 1])
    expanded, k = expand_segments(values, lengths, owner)
    assert expanded.tolist() == [v for o in owner.tolist() for v in lists[o]]
    assert k.tolist() == [i for i, o in enumerate(owner.tolist()) for _ in lists[o]]
    padded = pad_segments(values, lengths, -1)
    width = max(map(len, lists))
    assert padded.tolist() == [items + [-1] * (width - len(items)) for items in lists]
    rows = pad_segments(values[:, None].expand(-1, 2), lengths, 0, width=width + 1)  # trailing dims, given width
    assert rows.shape == (len(lists), width + 1, 2)


def test_products_and_scatter_any() -> None:
    counts_a, counts_b = torch.tensor([2, 0, 1, 3]), torch.tensor([1, 4, 2, 0])
    segment, a, b = segment_products(counts_a, counts_b)
    expected = [(s, i, j) for s in range(4) for i in range(int(counts_a[s])) for j in range(int(counts_b[s]))]
    assert list(zip(segment.tolist(), a.tolist(), b.tolist())) == expected
    mask, index = torch.tensor([True, False, True, False]), torch.tensor([4, 1, 4, 0])
    assert scatter_any(mask, index, 6).tolist() == [False, False, False, False, True, False]


def test_empty_batches() -> None:
    values, lengths = flatten_lists([])
    assert segment_ids(lengths).numel() == 0 and pad_segments(values, lengths, 0).shape == (0, 0)
    values, lengths = flatten_lists([[], []])
    assert pad_segments(values, lengths, 0).shape == (2, 0)
    assert expand_segments(values, lengths, torch.tensor([1, 0]))[0].numel() == 0
    assert [x.numel() for x in segment_products(lengths, lengths)] == [0, 0, 0]


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.uint16, torch.uint32, torch.int32])
def test_ragged_lengths_of_narrow_and_unsigned_offsets(dtype):
    """``offsets.diff()`` in the offsets' own dtype wrapped a falling uint8 offset to 255 and has no kernel for uint16 /
    uint32 (NotImplementedError; found by fuzzing): the lengths are taken in int64."""
    assert Ragged(torch.tensor([1, 2, 3]), torch.tensor([0, 2, 2, 3], dtype=dtype)).lengths().tolist() == [2, 0, 1]
    assert Ragged(torch.tensor([1, 2]), torch.tensor([0, 2, 1, 2], dtype=dtype)).lengths().tolist() == [2, -1, 1]



def test_ragged_from_lengths_refuses_float_and_misshapen_lengths():
    """Float lengths were cast with ``.long()``: ``[1.5, 2.5]`` became rows of 1 and 2 symbols without a word; a 0-d
    or 2-D tensor or a list failed deep inside (IndexError, RuntimeError, AttributeError; found by fuzzing)."""
    values = torch.arange(3)
    assert Ragged.from_lengths(values, torch.tensor([1, 2], dtype=torch.uint8)).offsets.tolist() == [0, 1, 3]
    for lengths in (torch.tensor([1.5, 2.5]), torch.tensor([True, True]), [1, 2], np.array([1, 2])):
        with pytest.raises(TypeError, match="`lengths`"):
            Ragged.from_lengths(values, lengths)
    for lengths in (torch.tensor(3), torch.tensor([[1, 2]])):
        with pytest.raises(ValueError, match="`lengths` must be a 1-D tensor"):
            Ragged.from_lengths(values, lengths)

def test_size_buckets_bound_the_padding_of_every_bucket():
    """Every item with both sizes positive is in exactly one bucket, whose padded block is at most 4× its cells."""
    rng = np.random.default_rng(0)
    sizes_a = np.concatenate([rng.integers(0, 20, 500), [5_000]])
    sizes_b = np.concatenate([rng.integers(0, 20, 500), [3_000]])
    assert size_buckets(sizes_a[:-1], sizes_b[:-1], slack=1 << 20) is None  # one block wastes little
    buckets = size_buckets(sizes_a, sizes_b, slack=1 << 20)
    kept = np.sort(np.concatenate(buckets))
    assert np.array_equal(kept, np.flatnonzero((sizes_a > 0) & (sizes_b > 0)))
    for bucket in buckets:
        a, b = sizes_a[bucket], sizes_b[bucket]
        assert np.all(np.diff(bucket) > 0)
        assert bucket.size * a.max() * b.max() <= 4 * (a * b).sum()
