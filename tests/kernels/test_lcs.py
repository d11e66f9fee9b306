"""Batched LCS kernels against direct dynamic programs (and rouge-score's own LCS read-out)."""

import random

import numpy as np
import pytest
import torch
from rouge_score.rouge_scorer import _lcs_table, lcs_ind

from gpumetrics.kernels import host
from gpumetrics.kernels.host import lcs_length_rapidfuzz
from gpumetrics.kernels.lcs import (
    lcs_backtrack_mask, lcs_length, lcs_table, weighted_lcs,
)
from tests.text.test_rouge import wlcs_lin2004


def _pad(seqs, value):
    width = max([len(s) for s in seqs] + [0])
    data = torch.tensor([s + [value] * (width - len(s)) for s in seqs], dtype=torch.long).reshape(len(seqs), width)
    return data, torch.tensor([len(s) for s in seqs], dtype=torch.long)


def _random_pairs(seed, n_pairs, lengths_a, lengths_b):
    rng = random.Random(seed)
    vocab = rng.randint(1, 6)
    a = [[rng.randrange(vocab) for _ in range(rng.choice(lengths_a))] for _ in range(n_pairs)]
    b = [[rng.randrange(vocab) for _ in range(rng.choice(lengths_b))] for _ in range(n_pairs)]
    return a, b


@pytest.mark.parametrize("seed", range(3))
def test_lcs_kernels_match_direct_dynamic_programs(seed):
    # lengths around the 62-bit word boundaries of the bit-parallel kernel
    a, b = _random_pairs(seed, 14, [0, 1, 2, 7, 61, 62, 63, 124, 125], [0, 1, 3, 11, 30])
    (ta, la), (tb, lb) = _pad(a, -1), _pad(b, 0)  # padding values that collide with real ids must not matter
    expected = [_lcs_table(x, y)[-1][-1] for x, y in zip(a, b)]
    assert lcs_length(ta, la, tb, lb).tolist() == expected
    assert lcs_length(ta - 3, la, tb - 3, lb).tolist() == expected  # negative ids, padding equal to real ids
    mask = lcs_backtrack_mask(ta, la, tb, lb)
    for p, (x, y) in enumerate(zip(a, b)):
        assert [i for i in range(len(x)) if mask[p, i]] == (lcs_ind(x, y) if x and y else [])
    for weight in (1.2, 2.0):
        got = weighted_lcs(ta, la, tb, lb, weight).tolist()
        expected = [wlcs_lin2004(x, y, weight) for x, y in zip(a, b)]
        assert all(abs(g - e) <= 1e-9 * max(1.0, e) for g, e in zip(got, expected)), (got, expected)


@pytest.mark.parametrize("id_range", [(0, 6), (0, 300), (0xD7F0, 0xD810), (0, 70_000), (1_111_000, 1_112_064)])
def test_rapidfuzz_lcs_equals_the_tensor_kernel(monkeypatch, id_range):
    """Rows as code points in every storage width (Latin-1, BMP across the skipped surrogate block, astral, the
    largest id that fits), empty rows, rows paired with several partners and with themselves, chunk edges."""
    monkeypatch.setattr(host, "_RAPIDFUZZ_CHUNK", 7)
    rng = random.Random(id_range[1])
    low, high = id_range
    vocab = [rng.randrange(low, high) for _ in range(5)]
    rows = [[rng.choice(vocab) for _ in range(rng.choice([0, 1, 3, 40, 63, 64, 65, 130]))] for _ in range(30)]
    a_rows = np.array([rng.randrange(30) for _ in range(45)] + [3], dtype=np.int64)
    b_rows = np.array([rng.randrange(30) for _ in range(45)] + [3], dtype=np.int64)
    ids = np.array([token for row in rows for token in row], dtype=np.int64)
    lengths = np.array([len(row) for row in rows], dtype=np.int64)
    got = lcs_length_rapidfuzz(ids, lengths, a_rows, b_rows)
    (ta, la), (tb, lb) = _pad([rows[i] for i in a_rows], -1), _pad([rows[i] for i in b_rows], -2)
    assert got.dtype == np.int64 and got.tolist() == lcs_length(ta, la, tb, lb).tolist()
    assert got[-1] == len(rows[3])
    empty = lcs_length_rapidfuzz(np.zeros(0, dtype=np.int64), np.zeros(2, dtype=np.int64), np.array([0]), np.array([1]))
    assert empty.tolist() == [0]


def test_rapidfuzz_lcs_ranks_large_ids_and_declines_what_it_cannot_encode(monkeypatch):
    """Ids at or above 1,112,064 are ranked densely first (same LCS); negative ids, more distinct ids than code
    points, or no rapidfuzz: ``None``, so the caller runs the tensor kernel."""
    lengths = np.array([3, 2])
    big = np.array([2**40, 7, 2**40 + 1, 7, 2**40 + 1], dtype=np.int64)
    assert lcs_length_rapidfuzz(big, lengths, np.array([0]), np.array([1])).tolist() == [2]
    assert lcs_length_rapidfuzz(np.array([-1, 2, 3, 4, 5]), lengths, np.array([0]), np.array([1])) is None
    monkeypatch.setattr(host, "MAX_CODE_ID", 2)  # more distinct ids than symbols
    assert lcs_length_rapidfuzz(big, lengths, np.array([0]), np.array([1])) is None
    monkeypatch.undo()
    monkeypatch.setattr(host, "has_rapidfuzz", lambda: False)
    assert lcs_length_rapidfuzz(np.array([1, 2, 3, 4, 5]), lengths, np.array([0]), np.array([1])) is None


def test_lcs_table_prefix_values_and_small_chunks(monkeypatch):
    a, b = _random_pairs(9, 40, [0, 5, 12], [0, 4, 9])
    (ta, la), (tb, lb) = _pad(a, 0), _pad(b, 0)
    table = lcs_table(ta, tb)
    for p, (x, y) in enumerate(zip(a, b)):
        expected = _lcs_table(x, y)
        assert table[p, : len(x) + 1, : len(y) + 1].tolist() == expected
    full = lcs_backtrack_mask(ta, la, tb, lb)
    lengths = lcs_length(ta, la, tb, lb)
    monkeypatch.setattr("gpumetrics.kernels.lcs._ROW_BYTES_PER_CHUNK", 200)  # forces several chunks of pairs
    monkeypatch.setattr("gpumetrics.kernels.lcs._MATCH_BYTES_PER_CHUNK", 300)  # and of columns of b
    assert torch.equal(lcs_backtrack_mask(ta, la, tb, lb), full)
    assert torch.equal(lcs_length(ta, la, tb, lb), lengths)


def _dp_lcs(x, y):
    """The textbook O(len(x)·len(y)) dynamic program, one row at a time."""
    previous = [0] * (len(y) + 1)
    for token in x:
        current = [0]
        for j, other in enumerate(y):
            current.append(previous[j] + 1 if token == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


BOUNDARY_LENGTHS = [0, 1, 61, 62, 63, 64, 65, 124, 127, 128, 129, 1000]  # around 62-bit limbs and 64-bit words


@pytest.mark.parametrize("alphabet", [1, 2, 4, 50])
def test_bit_parallel_length_equals_dynamic_program_across_word_boundaries(alphabet):
    rng = random.Random(alphabet)
    a, b = [], []
    for la in BOUNDARY_LENGTHS:  # every length against a few others, in one batch of uneven lengths
        for lb in rng.sample(BOUNDARY_LENGTHS, 4) + [la]:
            a.append([rng.randrange(alphabet) for _ in range(la)])
            b.append([rng.randrange(alphabet) for _ in range(lb)])
    (ta, la), (tb, lb) = _pad(a, 0), _pad(b, 0)  # padding equal to a real id
    expected = [_dp_lcs(x, y) for x, y in zip(a, b)]
    assert lcs_length(ta, la, tb, lb).tolist() == expected
    assert lcs_length(tb, lb, ta, la).tolist() == expected  # symmetric (the kernel packs the wider side)
    assert lcs_length(ta[:, :1100].contiguous(), la, tb[:, :70], lb.clamp_max(70)).tolist() == [
        _dp_lcs(x, y[:70]) for x, y in zip(a, b)
    ]
    # each pair alone (no padding at all) gives the same
    for p in rng.sample(range(len(a)), 6):
        assert lcs_length(ta[p : p + 1, : len(a[p])], la[p : p + 1], tb[p : p + 1, : len(b[p])],
                          lb[p : p + 1]).item() == expected[p]


def test_bit_parallel_carries_run_through_many_limbs():
    """All-equal tokens: every step adds a carry that ripples through every limb of a 1000-token side."""
    for la, lb in [(1000, 1), (1000, 999), (1000, 1000), (129, 1000), (64, 64)]:
        a = torch.zeros(1, la, dtype=torch.long)
        b = torch.zeros(1, lb, dtype=torch.long)
        assert lcs_length(a, torch.tensor([la]), b, torch.tensor([lb])).item() == min(la, lb)
        assert lcs_length(a, torch.tensor([la]), b + 1, torch.tensor([lb])).item() == 0
    # one side alternating, the other constant: the LCS is the count of the matching token
    a = torch.tensor([[0, 1] * 300])
    assert lcs_length(a, torch.tensor([600]), torch.ones(1, 700, dtype=torch.long), torch.tensor([700])).item() == 300


def test_backtrack_over_bit_rows_equals_rouge_score_read_out_on_long_pairs():
    rng = random.Random(31)
    a = [[rng.randrange(3) for _ in range(n)] for n in (300, 65, 129, 0, 700)]
    b = [[rng.randrange(3) for _ in range(n)] for n in (290, 200, 62, 5, 500)]
    (ta, la), (tb, lb) = _pad(a, 0), _pad(b, 0)
    mask = lcs_backtrack_mask(ta, la, tb, lb)  # walks of up to 1,200 steps pass the periodic end check
    for p, (x, y) in enumerate(zip(a, b)):
        assert [i for i in range(len(x)) if mask[p, i]] == (lcs_ind(x, y) if x and y else [])


@pytest.mark.parametrize("walk", ["batched", "host"])
def test_both_walks_equal_rouge_score_read_out(monkeypatch, walk):
    """The batched walk (every pair one step at a time, tensor ops) and the host walk (a pair at a time in Python,
    for few long walks on the CPU) read out the same LCS as rouge-score: long against short, uneven, empty."""
    monkeypatch.setattr("gpumetrics.kernels.lcs._HOST_WALK_STEPS_PER_STEP", 0 if walk == "batched" else 10**9)
    monkeypatch.setattr("gpumetrics.kernels.lcs._HOST_WALK_MIN_STEPS", 0)
    rng = random.Random(47)
    a = [[rng.randrange(k) for _ in range(n)] for n, k in ((3000, 4), (130, 3), (1, 2), (0, 2), (64, 9), (400, 2))]
    b = [[rng.randrange(k) for _ in range(n)] for n, k in ((7, 4), (2, 3), (5, 2), (3, 2), (640, 9), (0, 2))]
    (ta, la), (tb, lb) = _pad(a, 0), _pad(b, 0)
    mask = lcs_backtrack_mask(ta, la, tb, lb, host_lengths=(la.numpy(), lb.numpy()))
    for p, (x, y) in enumerate(zip(a, b)):
        assert [i for i in range(len(x)) if mask[p, i]] == (lcs_ind(x, y) if x and y else [])


def test_many_limbs_in_small_chunks_of_steps_and_pairs(monkeypatch):
    """Chunks of a few wavefront steps (the window of columns a chunk reaches spans several chunks) and of pairs."""
    a, b = _random_pairs(12, 9, [0, 1, 70, 130, 250], [0, 2, 64, 190, 300])
    (ta, la), (tb, lb) = _pad(a, 1), _pad(b, 2)
    expected = [_dp_lcs(x, y) for x, y in zip(a, b)]
    monkeypatch.setattr("gpumetrics.kernels.lcs._MATCH_BYTES_PER_CHUNK", 8 * 9 * 5 * 3)  # 3 steps of 5 limbs
    monkeypatch.setattr("gpumetrics.kernels.lcs._ROW_BYTES_PER_CHUNK", 8 * 300 * 5 * 2)  # ~2 pairs
    assert lcs_length(ta, la, tb, lb).tolist() == expected
    mask = lcs_backtrack_mask(ta, la, tb, lb)
    for p, (x, y) in enumerate(zip(a, b)):
        assert [i for i in range(len(x)) if mask[p, i]] == (lcs_ind(x, y) if x and y else [])


def test_empty_batches_and_bad_shapes():
    empty = torch.zeros(0, 0, dtype=torch.long)
    none = torch.zeros(0, dtype=torch.long)
    assert lcs_length(empty, none, empty, none).shape == (0,)
    assert weighted_lcs(empty, none, empty, none).shape == (0,)
    assert lcs_backtrack_mask(empty, none, empty, none).shape == (0, 0)
    with pytest.raises(ValueError, match="`a` and `b`"):
        lcs_length(torch.zeros(2, 3, dtype=torch.long), torch.zeros(2), torch.zeros(3, 3, dtype=torch.long),
                   torch.zeros(3))
    with pytest.raises(ValueError, match="`a_lengths`"):
        lcs_length(torch.zeros(2, 3, dtype=torch.long), torch.zeros(3), torch.zeros(2, 3, dtype=torch.long),
                   torch.zeros(2))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_equals_cpu():
    a, b = _random_pairs(21, 30, [0, 1, 63, 130, 700], [0, 5, 62, 129, 500])
    (ta, la), (tb, lb) = _pad(a, 0), _pad(b, 0)
    on_cuda = [t.cuda() for t in (ta, la, tb, lb)]
    assert torch.equal(lcs_length(*on_cuda).cpu(), lcs_length(ta, la, tb, lb))
    assert torch.equal(lcs_backtrack_mask(*on_cuda).cpu(), lcs_backtrack_mask(ta, la, tb, lb))
