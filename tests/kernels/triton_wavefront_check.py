"""Run under ``TRITON_INTERPRET=1`` (set before triton is imported) by ``tests/kernels/test_levenshtein.py``: the
wavefront Triton kernel, forced, equals rapidfuzz and the column kernel on CPU tensors, and ``kernel="auto"`` splits a
mixed batch between the two (with programs that take several pairs each).
``python -m tests.kernels.triton_wavefront_check SEED PAIRS LONG WORDS``; ``WORDS`` (pattern words per program)
small makes patterns of a few hundred symbols run in several groups; prints ``ok <n>`` or raises."""

import random
import sys

import torch
from rapidfuzz.distance import Levenshtein

import gpumetrics.kernels.levenshtein_triton as levenshtein_triton_module
from gpumetrics.kernels.levenshtein_triton import WAVEFRONT_MIN_WORDS, levenshtein_triton, levenshtein_triton_rows
from gpumetrics.kernels.text_rows import encode_chars_ragged
from tests.kernels.triton_interpret_check import ALPHABET, mend_interpreter_scalars, random_text

LENGTHS = [0, 1, 63, 64, 65, 127, 128, 129, 191, 192, 193, 300]


def _flat(rows):
    return (torch.tensor([v for r in rows for v in r], dtype=torch.long),
            torch.tensor([0] + [len(r) for r in rows]).cumsum(0))


def _forced(a, b, words, want, kernels=("wavefront",)):
    """Each of ``kernels`` forced on ``(a, a_offsets)`` vs ``(b, b_offsets)`` equals ``want``."""
    for kernel in kernels:
        got = levenshtein_triton(*a, *b, kernel=kernel, words=words).tolist()
        bad = [(i, g, e) for i, (g, e) in enumerate(zip(got, want)) if g != e]
        assert not bad, (kernel, words, bad[:5])


def main(seed: int, pairs: int, long: int, words: int) -> None:
    mend_interpreter_scalars()
    rng = random.Random(seed)
    a, b = ["", "", "a", "😀", "x" * 200], ["", "xyz", "", "😀", "x" * 200]  # empty sides, identical rows
    for _ in range(pairs):  # uneven lengths across word and group boundaries, Unicode, tiny alphabets
        alphabet = ALPHABET if rng.random() < 0.6 else "ab"
        a.append(random_text(rng, rng.choice(LENGTHS), alphabet))
        b.append(random_text(rng, rng.choice(LENGTHS), alphabet))
    source = random_text(rng, 400)  # near-identical: the common prefix and suffix end inside words
    a += [source, source[:150] + "q" + source[151:], source[:300]]
    b += [source[:70] + source[75:], source, source[:10] + source[200:]]
    big = random_text(rng, long)  # one long row against 3 symbols, both ways round
    a += [big, "abc"]
    b += ["abc", big]
    want = [Levenshtein.distance(x, y) for x, y in zip(a, b)]
    _forced(encode_chars_ragged(a), encode_chars_ragged(b), words, want, ("wavefront", "columns"))

    # word ids up to 2**32 - 1 (int32 in the wavefront kernel's pattern tile: equal only when equal)
    vocabulary = [0] + [(1 << 32) - 1 - v for v in range(20)] + [rng.randrange(1 << 31) for _ in range(10)]
    vocabulary += [v - (1 << 31) for v in vocabulary if v >= 1 << 31][:5]  # the same low 31 bits, the top bit clear
    ids_a = [[rng.choice(vocabulary) for _ in range(rng.choice(LENGTHS))] for _ in range(pairs // 2 + 2)]
    ids_b = [[rng.choice(vocabulary) for _ in range(rng.choice(LENGTHS))] for _ in range(pairs // 2 + 2)]
    ids_a[0], ids_b[0] = [(1 << 32) - 1] * 130, [(1 << 31) - 1] * 130  # a saturating cast would match them
    _forced(_flat(ids_a), _flat(ids_b), words, [Levenshtein.distance(x, y) for x, y in zip(ids_a, ids_b)])

    # one buffer for both sides (the string routes: shared=True), and one tensor under two offsets (not shared)
    values, offsets = encode_chars_ragged(a[:pairs] + b[:pairs])
    starts, lengths = offsets[:-1], offsets.diff()
    got = levenshtein_triton_rows(values, starts[:pairs], lengths[:pairs], values, starts[pairs:], lengths[pairs:],
                                  shared=True, kernel="wavefront", words=words).tolist()
    assert got == want[:pairs], "shared"
    cut = [0] + sorted(rng.sample(range(1, 900), 5)) + [900]
    cut_b = [0] + sorted(rng.sample(range(1, 900), 5)) + [900]
    flat = torch.tensor([rng.randrange(3) for _ in range(900)])
    rows = lambda cuts: [flat[x:y].tolist() for x, y in zip(cuts, cuts[1:])]  # noqa: E731
    _forced((flat, torch.tensor(cut)), (flat, torch.tensor(cut_b)), words,
                  [Levenshtein.distance(x, y) for x, y in zip(rows(cut), rows(cut_b))])

    # auto: short and long pairs interleaved, each pair to one kernel (the split point decided on the device)
    mixed_a, mixed_b = [], []
    for x, y in zip(a, b):
        mixed_a += [x, random_text(rng, rng.randrange(40))]
        mixed_b += [y, random_text(rng, rng.randrange(40))]
    long_pairs = sum(max(len(x), len(y)) >= 64 * (WAVEFRONT_MIN_WORDS - 1) + 1 for x, y in zip(mixed_a, mixed_b))
    assert 0 < long_pairs < len(mixed_a), long_pairs
    levenshtein_triton_module.WAVE_PROGRAMS = 3  # a program runs every 3rd pair of the wavefront kernel's
    got = levenshtein_triton(*encode_chars_ragged(mixed_a), *encode_chars_ragged(mixed_b), words=words).tolist()
    assert got == [Levenshtein.distance(x, y) for x, y in zip(mixed_a, mixed_b)]
    print("ok", len(a) + len(ids_a) + len(mixed_a))


if __name__ == "__main__":
    main(*(int(x) for x in sys.argv[1:5]))
