"""Batched LCS kernels against direct dynamic programs (and rouge-score's own LCS read-out)."""

import random

import pytest
import torch
from rouge_score.rouge_scorer import _lcs_table, lcs_ind

from gpumetrics.kernels.lcs import lcs_backtrack_mask, lcs_length, lcs_table, weighted_lcs
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


def test_lcs_table_prefix_values_and_small_chunks(monkeypatch):
    a, b = _random_pairs(9, 40, [0, 5, 12], [0, 4, 9])
    (ta, la), (tb, lb) = _pad(a, 0), _pad(b, 0)
    table = lcs_table(ta, tb)
    for p, (x, y) in enumerate(zip(a, b)):
        expected = _lcs_table(x, y)
        assert table[p, : len(x) + 1, : len(y) + 1].tolist() == expected
    full = lcs_backtrack_mask(ta, la, tb, lb)
    monkeypatch.setattr("gpumetrics.kernels.lcs._TABLE_CELLS_PER_CHUNK", 50)  # forces several chunks
    assert torch.equal(lcs_backtrack_mask(ta, la, tb, lb), full)


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
