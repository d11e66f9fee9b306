"""N-gram kernel against direct ``collections.Counter`` implementations, on both id-packing paths."""

from __future__ import annotations

import random
from collections import Counter

import pytest
import torch

from gpumetrics.kernels.ngrams import (
    TokenBatch,
    clipped_ngram_matches,
    encode_token_lists,
    encode_tokens,
    ngram_ids,
    ngram_totals,
    segment_ngram_counts,
)


def counter(tokens: list[str], n: int) -> Counter:
    return Counter(tuple(tokens[i: i + n]) for i in range(len(tokens) - n + 1))


def random_samples(seed: int, vocab: int, samples: int, max_len: int = 12, max_refs: int = 4):
    rng = random.Random(seed)
    segments, sample, is_hyp = [], [], []
    for b in range(samples):
        for r in range(rng.randint(1, max_refs) + 1):
            segments.append([f"w{rng.randrange(vocab)}" for _ in range(rng.choice([0, 1, 2, rng.randint(0, max_len)]))])
            sample.append(b)
            is_hyp.append(r == 0)
    return segments, torch.tensor(sample), torch.tensor(is_hyp)


# (vocab, max_order): packed fast path, and vocabularies where (V+1)^N overflows int64 → dense-rank fallback.
@pytest.mark.parametrize("vocab, max_order", [(4, 4), (60, 5), (2000, 7), (300, 9)])
def test_ngram_ids_are_exact(vocab: int, max_order: int) -> None:
    segments, _, _ = random_samples(vocab, vocab, 40)
    batch = encode_token_lists(segments)
    grams = ngram_ids(batch, max_order)
    seen: dict[tuple, int] = {}
    flat = [(s, p) for s, seg in enumerate(segments) for p in range(len(seg))]
    for row, (s, p) in enumerate(flat):
        for n in range(1, max_order + 1):
            value = int(grams[row, n - 1])
            if p + n > len(segments[s]):
                assert value == -1
                continue
            key = tuple(segments[s][p: p + n])
            assert seen.setdefault(key, value) == value  # equal n-grams, equal ids
    assert len(set(seen.values())) == len(seen)  # different n-grams (any orders), different ids


@pytest.mark.parametrize("vocab, max_order", [(3, 4), (50, 4), (2000, 7)])
def test_clipped_matches_against_counter(vocab: int, max_order: int) -> None:
    segments, sample, is_hyp = random_samples(100 + vocab, vocab, 60)
    batch = encode_token_lists(segments)
    matches = clipped_ngram_matches(batch, sample, is_hyp, 60, max_order)
    per_ref = clipped_ngram_matches(batch, sample, is_hyp, 60, max_order, per_reference=True)
    assert matches.shape == (60, max_order) and per_ref.shape == (len(segments), max_order)
    for b in range(60):
        rows = [i for i in range(len(segments)) if int(sample[i]) == b]
        hyp = segments[rows[0]]
        for n in range(1, max_order + 1):
            hyp_counts, best = counter(hyp, n), Counter()
            for i in rows[1:]:
                ref_counts = counter(segments[i], n)
                best |= ref_counts
                assert int(per_ref[i, n - 1]) == sum(min(c, ref_counts[g]) for g, c in hyp_counts.items())
            assert int(matches[b, n - 1]) == sum(min(c, best[g]) for g, c in hyp_counts.items())
            assert int(per_ref[rows[0], n - 1]) == 0


def test_clipped_matches_single_reference_against_counter() -> None:
    # one reference per sample takes the bincount path (no (group, segment) pairs); tiny vocabulary → many repeats
    segments, sample, is_hyp = random_samples(7, 2, 80, max_len=15, max_refs=1)
    matches = clipped_ngram_matches(encode_token_lists(segments), sample, is_hyp, 80, 5)
    for b in range(80):
        hyp, ref = segments[2 * b], segments[2 * b + 1]
        for n in range(1, 6):
            ref_counts = counter(ref, n)
            assert int(matches[b, n - 1]) == sum(min(c, ref_counts[g]) for g, c in counter(hyp, n).items())


def test_segment_counts_against_counter() -> None:
    segments, _, _ = random_samples(7, 5, 30)
    counts = segment_ngram_counts(encode_token_lists(segments), 3)
    got = Counter(zip(counts.segment.tolist(), counts.order.tolist(), counts.count.tolist()))
    expected = Counter((s, n, c) for s, seg in enumerate(segments) for n in (1, 2, 3) for c in counter(seg, n).values())
    assert got == expected
    # rows are sorted by n-gram id, so the document frequency of an n-gram is its run length
    assert bool((counts.gram[1:] >= counts.gram[:-1]).all())


def test_totals_and_empty_inputs() -> None:
    assert ngram_totals(torch.tensor([0, 1, 5]), 3).tolist() == [[0, 0, 0], [1, 0, 0], [5, 4, 3]]
    empty = encode_token_lists([[], []])
    assert ngram_ids(empty, 2).shape == (0, 2)
    matches = clipped_ngram_matches(empty, torch.tensor([0, 0]), torch.tensor([True, False]), 1, 2)
    assert matches.tolist() == [[0, 0]]
    assert segment_ngram_counts(empty, 2).count.numel() == 0


def test_encode_tokens_checks_lengths() -> None:
    batch = encode_tokens(["b", "a", "b"], [2, 1])
    assert batch.ids.tolist() == [0, 1, 0] and batch.vocab_size == 2
    with pytest.raises(ValueError, match="lengths"):
        encode_tokens(["a"], [2])
    with pytest.raises(ValueError, match="max_order"):
        ngram_ids(TokenBatch(torch.tensor([0]), torch.tensor([1]), 1), 0)
