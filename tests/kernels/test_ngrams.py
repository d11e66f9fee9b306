"""The n-gram ladder and the statistics built on it, against direct ``collections.Counter`` implementations."""

from __future__ import annotations

import random
from collections import Counter

import pytest
import torch

from gpumetrics.kernels.ngrams import (
    NgramLadder,
    TokenBatch,
    clipped_ngram_matches,
    ngram_occurrences,
    ngram_totals,
)
from gpumetrics.text.tokenize import encode_tokens


def encode_token_lists(segments: list[list[str]]) -> TokenBatch:
    """The tokenizers' vocabulary builder, on the CPU as the kernels take it."""
    return encode_tokens([t for tokens in segments for t in tokens], [len(tokens) for tokens in segments]).to("cpu")


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


def occurrences(segments: list[list[str]], n: int) -> list[tuple[int, tuple]]:
    """(segment, n-gram) of every occurrence of order n, in flat position order."""
    return [(s, tuple(seg[i: i + n])) for s, seg in enumerate(segments) for i in range(len(seg) - n + 1)]


@pytest.mark.parametrize("vocab, max_order", [(2, 6), (60, 5), (2000, 7)])
def test_ladder_ids_are_exact_per_order(vocab: int, max_order: int) -> None:
    segments, _, _ = random_samples(vocab, vocab, 40)
    ladder = NgramLadder(encode_token_lists(segments))
    starts = [sum(map(len, segments[:s])) for s in range(len(segments))]
    for level in ladder.levels(max_order):
        n = level.order
        expected = occurrences(segments, n)
        assert level.position.tolist() == [starts[s] + i for s, seg in enumerate(segments)
                                           for i in range(len(seg) - n + 1)]
        id_of: dict = {}
        for (_, gram), gid in zip(expected, level.gram.tolist()):
            assert id_of.setdefault(gram, gid) == gid  # equal n-grams, equal ids
        assert len(set(id_of.values())) == len(id_of) == level.distinct  # different n-grams differ; ids dense
        assert level.group.tolist() == [0] * level.distinct


def test_grouped_ladder_separates_groups_and_prunes() -> None:
    batch = encode_token_lists([["a", "b", "a", "b"], ["a", "b"]])
    ladder = NgramLadder(batch)
    unigrams = ladder.unigrams(group=torch.tensor([0, 0, 0, 0, 1, 1]))
    assert unigrams.distinct == 4  # (0, a), (0, b), (1, a), (1, b)
    assert unigrams.gram[0] == unigrams.gram[2] and unigrams.gram[0] != unigrams.gram[4]
    assert sorted(unigrams.group.tolist()) == [0, 0, 1, 1]
    bigrams = ladder.extend(unigrams, keep=torch.tensor([True, False, True, True, True, True]))
    # position 3 ends its segment, position 5 too; position 1 was not kept
    assert bigrams.position.tolist() == [0, 2, 4]
    assert bigrams.gram[0] == bigrams.gram[1] and bigrams.gram[0] != bigrams.gram[2]
    assert bigrams.group[bigrams.gram].tolist() == [0, 0, 1]


def test_ngram_occurrences_are_exact_dense_ids() -> None:
    rng = random.Random(5)
    segments = [[str(rng.randint(0, 3)) for _ in range(rng.randint(0, 9))] for _ in range(50)]
    segment, gram, distinct = ngram_occurrences(encode_token_lists(segments), 4)
    expected = [occ for n in range(1, 5) for occ in occurrences(segments, n)]  # order by order, positions ascending
    assert [s for s, _ in expected] == segment.tolist()
    id_of: dict = {}
    for (_, ngram), gid in zip(expected, gram.tolist()):
        assert id_of.setdefault(ngram, gid) == gid  # one n-gram, one id
    assert len(set(id_of.values())) == len(id_of) == sum(distinct)  # one id, one n-gram; ids dense over all orders
    assert sorted(id_of.values()) == list(range(sum(distinct)))


@pytest.mark.parametrize("vocab, max_order", [(3, 4), (50, 4), (2000, 7)])
def test_clipped_matches_against_counter(vocab: int, max_order: int) -> None:
    segments, sample, is_hyp = random_samples(100 + vocab, vocab, 60)
    matches = clipped_ngram_matches(encode_token_lists(segments), sample, is_hyp, 60, max_order)
    assert matches.shape == (60, max_order)
    for b in range(60):
        rows = [i for i in range(len(segments)) if int(sample[i]) == b]
        hyp = segments[rows[0]]
        for n in range(1, max_order + 1):
            best = Counter()
            for i in rows[1:]:
                best |= counter(segments[i], n)
            assert int(matches[b, n - 1]) == sum(min(c, best[g]) for g, c in counter(hyp, n).items())


def test_clipped_matches_single_reference_against_counter() -> None:
    # one reference per sample takes the bincount path (no (group, segment) pairs); tiny vocabulary → many repeats
    segments, sample, is_hyp = random_samples(7, 2, 80, max_len=15, max_refs=1)
    matches = clipped_ngram_matches(encode_token_lists(segments), sample, is_hyp, 80, 5)
    for b in range(80):
        hyp, ref = segments[2 * b], segments[2 * b + 1]
        for n in range(1, 6):
            ref_counts = counter(ref, n)
            assert int(matches[b, n - 1]) == sum(min(c, ref_counts[g]) for g, c in counter(hyp, n).items())


def test_totals_and_empty_inputs() -> None:
    assert ngram_totals(torch.tensor([0, 1, 5]), 3).tolist() == [[0, 0, 0], [1, 0, 0], [5, 4, 3]]
    empty = encode_token_lists([[], []])
    assert [level.position.numel() for level in NgramLadder(empty).levels(3)] == [0, 0, 0]
    matches = clipped_ngram_matches(empty, torch.tensor([0, 0]), torch.tensor([True, False]), 1, 2)
    assert matches.tolist() == [[0, 0]]
    segment, gram, distinct = ngram_occurrences(empty, 2)
    assert segment.numel() == gram.numel() == 0 and distinct == [0, 0]


def test_encode_tokens_and_option_checks() -> None:
    batch = encode_tokens(["b", "a", "b"], [2, 1]).to("cpu")
    assert batch.ids.tolist() == [0, 1, 0] and batch.vocab_size == 2
    with pytest.raises(ValueError, match="lengths"):
        encode_tokens(["a"], [2])
    with pytest.raises(ValueError, match="max_order"):
        NgramLadder(TokenBatch(torch.tensor([0]), torch.tensor([1]), 1)).levels(0)
    with pytest.raises(ValueError, match="max_order"):
        clipped_ngram_matches(batch, torch.tensor([0, 0]), torch.tensor([True, False]), 1, 0)
