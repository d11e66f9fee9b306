"""The batched Levenshtein tensor kernel against rapidfuzz, plus metric properties (hypothesis) and bad inputs."""

import itertools
import random
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from gpumetrics.kernels import levenshtein_routes as _routes
from gpumetrics.kernels.levenshtein_routes import levenshtein_strings
from gpumetrics.kernels.text_rows import encode_chars, encode_words
from tests.helpers.oracles import import_oracle


def levenshtein_distance(*args, backend="torch", **kwargs):
    """The kernel under test here is the tensor kernel (CPU tensors would take rapidfuzz under ``auto``: tested
    below in ``test_cpu_token_tensors_take_rapidfuzz_under_auto``)."""
    return _routes.levenshtein_distance(*args, backend=backend, **kwargs)


ALPHABET = "abcxyz АбвЁж 中文字 😀🐈\u200d⬛ e\u0301\u0308ß"
# lengths around the 64-bit word boundaries and beyond several words
EDGE_LENGTHS = [0, 1, 2, 63, 64, 65, 127, 128, 129, 191, 192, 193, 300]


def _random(rng, n, alphabet=ALPHABET):
    return "".join(rng.choice(alphabet) for _ in range(n))


def _mutate(rng, text, edits):
    chars = list(text)
    for _ in range(edits):
        op = rng.random()
        pos = rng.randint(0, len(chars))
        if op < 0.33 and pos < len(chars):
            chars[pos] = rng.choice(ALPHABET)
        elif op < 0.66 and pos < len(chars):
            del chars[pos]
        else:
            chars.insert(pos, rng.choice(ALPHABET))
    return "".join(chars)


def _pairs(seed):
    rng = random.Random(seed)
    a, b = [], []
    for la in EDGE_LENGTHS:
        for lb in EDGE_LENGTHS:
            a.append(_random(rng, la))
            b.append(_random(rng, lb))
    for length in EDGE_LENGTHS + [5000, 5300]:  # near-identical pairs: small distances, long common runs
        source = _random(rng, length)
        a.append(source)
        b.append(_mutate(rng, source, rng.randint(0, 12)))
    a.append(_random(rng, 5100, "ab"))  # tiny alphabet: many equal symbols
    b.append(_random(rng, 4900, "ab"))
    return a, b


def _expected(a, b):
    return [Levenshtein.distance(x, y) for x, y in zip(a, b)]


def test_kernel_matches_rapidfuzz_on_edge_lengths_unicode_and_long_strings():
    a, b = _pairs(0)
    assert levenshtein_distance(*encode_chars(a), *encode_chars(b)).tolist() == _expected(a, b)
    assert levenshtein_strings(a, b, backend="rapidfuzz").tolist() == _expected(a, b)


def test_kernel_chunked_with_tiny_memory_bound_gives_the_same_distances():
    a, b = _pairs(1)
    a, b = a[::3], b[::3]
    result = levenshtein_distance(*encode_chars(a), *encode_chars(b), max_elements=3000)
    assert result.tolist() == _expected(a, b)


def test_kernel_is_order_independent_and_handles_padding_garbage():
    rng = random.Random(2)
    a = [_random(rng, rng.randint(0, 140)) for _ in range(200)]
    b = [_random(rng, rng.randint(0, 140)) for _ in range(200)]
    ea, la = encode_chars(a)
    eb, lb = encode_chars(b)
    # values beyond a row's length must be ignored
    ea = torch.where(torch.arange(ea.shape[1]) < la[:, None], ea, 12345)
    eb = torch.cat([eb, torch.full((eb.shape[0], 7), 99)], 1)
    assert levenshtein_distance(ea, la, eb, lb).tolist() == _expected(a, b)
    perm = torch.randperm(200, generator=torch.Generator().manual_seed(0))
    assert levenshtein_distance(ea[perm], la[perm], eb[perm], lb[perm]).tolist() == [
        _expected(a, b)[i] for i in perm.tolist()
    ]


def test_word_level_ids_match_rapidfuzz_on_token_lists():
    rng = random.Random(3)
    words = ["a", "b", "кот", "猫", "🙂", "é", "e\u0301", "the"]
    a = [[rng.choice(words) for _ in range(rng.choice([0, 1, 5, 63, 64, 65, 130]))] for _ in range(60)]
    b = [[rng.choice(words) for _ in range(rng.choice([0, 1, 5, 63, 64, 65, 130]))] for _ in range(60)]
    vocab = {}
    got = levenshtein_distance(*encode_words(a, vocab), *encode_words(b, vocab))
    assert got.tolist() == _expected(a, b)
    assert levenshtein_strings(a, b, backend="torch").tolist() == _expected(a, b)
    assert levenshtein_strings(a, b, backend="rapidfuzz").tolist() == _expected(a, b)


def test_empty_batch_and_single_pair():
    empty = torch.zeros(0, 0, dtype=torch.long), torch.zeros(0, dtype=torch.long)
    assert levenshtein_distance(*empty, *empty).shape == (0,)
    assert levenshtein_strings([], [], backend="torch").shape == (0,)
    assert levenshtein_strings([], [], backend="rapidfuzz").shape == (0,)
    assert levenshtein_strings(["x"], ["y"], backend="torch").tolist() == [1]


def test_result_on_the_device_of_the_inputs_and_int_dtypes():
    a, b = encode_chars(["abc", "q"]), encode_chars(["abd", ""])
    got = levenshtein_distance(a[0].int(), a[1].int(), b[0].int(), b[1].int())
    assert got.dtype == torch.long and got.device == a[0].device and got.tolist() == [1, 1]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_matches_cpu():  # pragma: no cover - runs on GPU machines only
    a, b = _pairs(4)
    ea, eb = encode_chars(a, "cuda"), encode_chars(b, "cuda")
    assert levenshtein_distance(*ea, *eb).cpu().tolist() == _expected(a, b)  # the tensor kernel on CUDA
    assert levenshtein_distance(*ea, *eb, backend="auto").cpu().tolist() == _expected(a, b)  # Triton when importable
    assert levenshtein_strings(a, b, backend="auto", device="cuda").cpu().tolist() == _expected(a, b)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_wavefront_and_column_kernels_match_rapidfuzz_at_every_benchmarked_shape():  # pragma: no cover - GPU
    """Both Triton kernels forced, at the launch shapes the kernel rows time (and 2 words per program: groups), on
    the GPU's own Triton; word ids up to 2**32 - 1 through the wavefront kernel's int32 tile."""
    import_oracle("triton")
    from gpumetrics.kernels.levenshtein_triton import levenshtein_triton
    from gpumetrics.kernels.text_rows import encode_chars_ragged

    a, b = _pairs(5)
    want = _expected(a, b)
    ra, rb = encode_chars_ragged(a, "cuda"), encode_chars_ragged(b, "cuda")
    for kernel, words, warps in (("columns", 0, 0), ("wavefront", 0, 0), ("wavefront", 32, 2), ("wavefront", 16, 1),
                                 ("wavefront", 64, 2), ("wavefront", 2, 1), ("auto", 0, 0)):
        got = levenshtein_triton(*ra, *rb, num_warps=warps, kernel=kernel, words=words).cpu().tolist()
        assert got == want, (kernel, words, warps)
    rng = random.Random(6)
    ids = [[rng.choice([0, 7, (1 << 32) - 1, (1 << 31) - 1, 1 << 31]) for _ in range(rng.randint(0, 700))]
           for _ in range(40)]
    flat = lambda rows: (torch.tensor([v for row in rows for v in row], dtype=torch.long, device="cuda"),  # noqa: E731
                         torch.tensor([0] + [len(row) for row in rows]).cumsum(0).cuda())
    got = levenshtein_triton(*flat(ids[:20]), *flat(ids[20:]), kernel="wavefront").cpu().tolist()
    assert got == [Levenshtein.distance(x, y) for x, y in zip(ids[:20], ids[20:])]


# ------------------------------------------------------------------------------------ properties (hypothesis)
_seq = st.lists(st.integers(0, 5), max_size=150)


def _lev(*seqs_pairs):
    a = [p[0] for p in seqs_pairs]
    b = [p[1] for p in seqs_pairs]
    return levenshtein_distance(*_ids(a), *_ids(b)).tolist()


def _ids(seqs):
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    width = int(lengths.max()) if len(seqs) else 0
    out = torch.zeros(len(seqs), width, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(s, dtype=torch.long)
    return out, lengths


@settings(max_examples=60, deadline=None)
@given(_seq, _seq, _seq)
def test_property_metric_axioms_and_bounds(x, y, z):
    dxy, dyx, dxz, dyz, dxx = _lev((x, y), (y, x), (x, z), (y, z), (x, x))
    assert dxy == dyx  # symmetry
    assert dxx == 0  # identity
    assert dxz <= dxy + dyz  # triangle inequality
    assert abs(len(x) - len(y)) <= dxy <= max(len(x), len(y))  # bounds
    assert dxy == Levenshtein.distance(x, y)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(_seq, _seq), min_size=1, max_size=12))
def test_property_batch_equals_pairs_one_by_one(pairs):
    assert _lev(*pairs) == [Levenshtein.distance(x, y) for x, y in pairs]


# -------------------------------------------------------------------------------------------------- bad inputs
def test_bad_inputs_name_the_argument():
    a, la = encode_chars(["ab"])
    with pytest.raises(TypeError, match="`a`"):
        levenshtein_distance(a.float(), la, a, la)
    with pytest.raises(TypeError, match="`b`"):
        levenshtein_distance(a, la, [[1, 2]], la)
    with pytest.raises(ValueError, match="`a`"):
        levenshtein_distance(a[0], la, a, la)
    with pytest.raises(ValueError, match="batch size"):
        levenshtein_distance(a, la, torch.zeros(2, 2, dtype=torch.long), torch.tensor([1, 1]))
    with pytest.raises(ValueError, match="`b_lengths`"):
        levenshtein_distance(a, la, a, torch.tensor([3]))
    with pytest.raises(TypeError, match="`a_lengths`"):
        levenshtein_distance(a, la.float(), a, la)
    with pytest.raises(TypeError, match="`b_lengths` must be an integer tensor, got torch.complex64"):  # was cast
        levenshtein_distance(a, la, a, la.to(torch.complex64))
    with pytest.raises(ValueError, match="`a` symbols"):
        levenshtein_distance(-a, la, a, la)
    with pytest.raises(ValueError, match="`backend`"):
        levenshtein_strings(["a"], ["b"], backend="numba")


# ------------------------------------------------------------------- cost bounded by the shorter string (issue 10)
def _uneven_pairs(seed, count=60):
    """Long vs short, shared prefixes/suffixes, swapped roles, empty sides, tiny and large alphabets."""
    rng = random.Random(seed)
    a, b = [], []
    for _ in range(count):
        alphabet = rng.choice(["ab", "abc d", ALPHABET])
        long = _random(rng, rng.choice([65, 200, 1000, 4000, 20_000]), alphabet)
        kind = rng.randrange(6)
        if kind == 0:  # short unrelated text
            short = _random(rng, rng.randint(0, 5), alphabet)
        elif kind == 1:  # long with a few edits
            short = _mutate(rng, long, rng.randint(0, 8))
        elif kind == 2:  # shared prefix, different tail
            short = long[: rng.randint(0, len(long))] + _random(rng, rng.randint(0, 9), alphabet)
        elif kind == 3:  # shared suffix, different head
            short = _random(rng, rng.randint(0, 9), alphabet) + long[rng.randint(0, len(long)) :]
        elif kind == 4:  # one side is a substring in the middle
            i = rng.randint(0, len(long))
            short = long[i : i + rng.randint(0, 70)]
        else:  # identical
            short = long
        pair = (long, short) if rng.random() < 0.5 else (short, long)
        a.append(pair[0])
        b.append(pair[1])
    return a, b


@pytest.mark.parametrize("seed", [0, 1])
def test_uneven_lengths_and_common_affixes_match_rapidfuzz(seed):
    a, b = _uneven_pairs(seed)
    assert levenshtein_strings(a, b, backend="torch").tolist() == _expected(a, b)
    words_a, words_b = [s.split(" ") for s in a], [s.split(" ") for s in b]
    assert levenshtein_strings(words_a, words_b, backend="torch").tolist() == _expected(words_a, words_b)


def test_small_chunks_and_one_huge_row_among_short_ones():
    a, b = _uneven_pairs(2, count=20)
    a, b = a + ["x" * 300_000] + ["kitten"] * 50, b + ["xyz"] + ["sitting"] * 50
    assert levenshtein_distance(*encode_chars(a), *encode_chars(b), max_elements=5_000).tolist() == _expected(a, b)
    assert levenshtein_strings(a, b, backend="torch").tolist() == _expected(a, b)


@pytest.mark.timeout(60)  # a hang guard, not a timing claim: the wavefront kernel took 310 s on the first case
def test_million_characters_against_short_and_identical_strings():
    rng = random.Random(5)
    long = _random(rng, 1_000_000, "abcdefgh")
    near = long[:400_000] + "Z" + long[400_001:]
    got = levenshtein_strings([long, long, "abc", long], ["abc", long, long, near], backend="torch")
    assert got.tolist() == [Levenshtein.distance(long, "abc"), 0, Levenshtein.distance("abc", long), 1]


@settings(max_examples=60, deadline=None)
@given(_seq, _seq, st.lists(st.integers(0, 5), max_size=70), st.lists(st.integers(0, 5), max_size=70))
def test_property_common_prefix_and_suffix_never_change_the_distance(x, y, prefix, suffix):
    assert _lev((prefix + x + suffix, prefix + y + suffix)) == [Levenshtein.distance(x, y)]


@pytest.mark.parametrize("max_elements", [64, 700, 5_000])
def test_one_pair_with_masks_over_the_bound_builds_them_per_block(max_elements):
    rng = random.Random(max_elements)
    cjk = [chr(0x4E00 + i) for i in range(400)]
    pairs = [("".join(rng.choices(cjk, k=3000)), "".join(rng.choices(cjk, k=300))),
             ("".join(rng.choices(cjk, k=130)), "".join(rng.choices(cjk, k=129))),
             ("ab" * 700, "".join(rng.choices("abc", k=200)))]
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    got = levenshtein_distance(*encode_chars(a), *encode_chars(b), max_elements=max_elements)
    assert got.tolist() == _expected(a, b)


def test_uneven_strings_empty_sides_identical_and_swapped_roles_match_rapidfuzz():
    rng = random.Random(5)
    a, b = [], []
    for long_len in (1, 63, 64, 65, 1000, 4097):
        long = _random(rng, long_len)
        for short in ("", _random(rng, 1), _random(rng, 3), long[:3], long[-3:], long[:2] + long[-2:]):
            a += [long, short]
            b += [short, long]
        a += [long, long, long[: long_len // 2] + "#" + long[long_len // 2 + 1 :]]
        b += [long, long + "x", long]
    got = levenshtein_distance(*encode_chars(a), *encode_chars(b))
    assert got.tolist() == _expected(a, b)
    assert levenshtein_strings(a, b, backend="torch").tolist() == _expected(a, b)


def test_multi_word_carries_over_long_runs_of_ones():
    # a tiny alphabet makes the W-word addition carry through whole all-ones words
    rng = random.Random(6)
    a = ["a" * 700 + _random(rng, 300, "ab") for _ in range(4)] + ["a" * 640, "ab" * 400]
    b = [_random(rng, 900, "ab") for _ in range(4)] + ["b" + "a" * 500, "ba" * 300]
    assert levenshtein_distance(*encode_chars(a), *encode_chars(b)).tolist() == _expected(a, b)



def test_uneven_word_sequences_match_rapidfuzz():
    rng = random.Random(8)
    words = ["the", "a", "кот", "猫", "of"]
    long = [rng.choice(words) for _ in range(5000)]
    a = [long, long, long[:2] + ["x"] + long[-1:], long]
    b = [long[:1] + long[-2:], long, long, long[:2500] + ["zz"] + long[2501:]]
    assert levenshtein_strings(a, b, backend="torch").tolist() == _expected(a, b)


def test_rapidfuzz_backend_in_chunks_checks_every_chunk():
    rng = random.Random(11)
    a = ["".join(rng.choices("abcé中😀", k=rng.randint(0, 12))) for _ in range(40_000)]  # 3 chunks
    b = [s[::-1] + "x" for s in a]
    assert levenshtein_strings(a, b, backend="rapidfuzz").tolist() == [Levenshtein.distance(x, y) for x, y in zip(a, b)]

    def check(left, right):
        raise TypeError("bad item")

    with pytest.raises(TypeError, match="bad item"):  # the bad item sits in the last chunk; lists must not pass
        levenshtein_strings(a[:-1] + [["a", "b"]], b, backend="rapidfuzz", check=check)


@pytest.mark.parametrize("seed", [0, 1])
def test_rapidfuzz_backend_band_hint_from_calibration_stays_exact(seed):
    """Long pairs: the first 32 set rapidfuzz's band hint for the rest; pairs far past it, unrelated pairs, empty
    ones, word lists, and a batch of unrelated texts (no hint) all equal the bare loop."""
    from gpumetrics.kernels.host import rapidfuzz_distances

    rng = random.Random(seed)
    alphabet = "abcdefgh é中😀"
    a, b = [], []
    for i in range(200):
        gold = "".join(rng.choices(alphabet, k=rng.randint(100, 900)))
        edits = rng.choice([0.01, 0.05, 0.1]) if i < 32 else rng.choice([0.0, 0.02, 0.1, 0.4, 1.0])
        pred = "".join(c if rng.random() > edits else rng.choice(alphabet) for c in gold)
        if i % 37 == 5:
            pred = "".join(rng.choices(alphabet, k=rng.randint(0, 1200)))  # unrelated, any length
        a.append(pred)
        b.append(gold)
    a[100], b[101] = "", ""
    assert rapidfuzz_distances(a, b, strings=True).tolist() == _expected(a, b)
    unrelated = ["".join(rng.choices(alphabet, k=500)) for _ in range(80)]
    assert rapidfuzz_distances(unrelated[:40], unrelated[40:]).tolist() == _expected(unrelated[:40], unrelated[40:])
    words_a, words_b = [s.split("a") for s in a], [s.split("a") for s in b]
    assert rapidfuzz_distances(words_a, words_b).tolist() == _expected(words_a, words_b)
    with pytest.raises(TypeError):
        rapidfuzz_distances(a[:-1] + [b"x" * 300], b, strings=True)


@pytest.mark.parametrize("texts", [
    [], [""], ["", ""], ["ab", "", "c"],  # ASCII
    ["é", "ab\x00", "\x00"],  # Latin-1, NUL characters (also trailing: numpy's unicode items keep them)
    ["ы", "中文", "", "a\x00"],  # BMP
    ["😀", "a😀b\x00", "", "\ud800x", "\udfff"],  # astral (UCS-4), lone surrogates
])
def test_flat_encoding_is_the_code_points_in_every_storage_kind(texts):
    from gpumetrics.kernels.text_rows import encode_chars_flat, encode_chars_ragged

    values, lengths = encode_chars_flat(texts)
    assert values.tolist() == [ord(c) for c in "".join(texts)] and lengths.tolist() == [len(t) for t in texts]
    flat, offsets = encode_chars_ragged(texts)
    assert flat.dtype == torch.int32 and flat.tolist() == values.tolist()
    assert offsets.tolist() == [0, *itertools.accumulate(map(len, texts))]
    flat[:] = 7 if flat.numel() else 0  # the public result is the caller's own memory, never the encoded bytes
    assert encode_chars_flat(texts)[0].tolist() == values.tolist()
    padded, padded_lengths = encode_chars(texts)
    assert [row[:n].tolist() for row, n in zip(padded, padded_lengths)] == [[ord(c) for c in t] for t in texts]


@pytest.mark.parametrize("kinds", ["aé中😀", "😀中éa", "a中aéa😀a", "aaaa", "é中", "\x00\ud800a"])
def test_flat_encoding_in_blocks_widens_to_the_widest_block(monkeypatch, kinds):
    """Blocks of different storage kinds (in any order, a block per kind or mixed) give the code points of the whole
    batch in the widest block's dtype; block edges inside runs of empty strings too."""
    from gpumetrics.kernels import text_rows

    monkeypatch.setattr(text_rows, "_ENCODE_BLOCK", 3)
    rng = random.Random(len(kinds))
    texts = []
    for kind in kinds:  # a run of strings of one kind, lengths 0..5, then the next kind
        texts += ["".join(rng.choices("xy" + kind, k=rng.randint(0, 5))) for _ in range(rng.randint(1, 8))]
    texts += [""] * 4
    values, lengths = text_rows.encode_chars_flat(texts)
    widest = max((ord(c) for c in "".join(texts)), default=0)
    expected_dtype = np.uint8 if widest < 256 else np.uint16 if widest < 65536 else np.uint32
    assert values.dtype == expected_dtype
    assert values.tolist() == [ord(c) for c in "".join(texts)] and lengths.tolist() == [len(t) for t in texts]
    blocks, block_lengths = text_rows.encode_chars_blocks(texts)  # what the uploads take: one staging copy
    assert len(blocks) == -(-len(texts) // 3) and block_lengths.tolist() == lengths.tolist()
    flat, offsets = text_rows.encode_chars_ragged(texts)
    assert flat.dtype == torch.int32 and flat.tolist() == values.tolist()
    assert offsets.tolist() == [0, *itertools.accumulate(lengths.tolist())]
    flat, offsets = text_rows.encode_chars_ragged(texts)
    assert flat.tolist() == values.tolist() and offsets[-1].item() == len("".join(texts))


def test_rapidfuzz_backend_threaded_chunks_are_exact(monkeypatch):
    """The threaded and the chunked paths (threads on idle cores for large batches, one per ``_PAIRS_PER_THREAD``
    short pairs) give the loop's values, chunk and part edges included; a non-string item in any chunk raises."""
    from gpumetrics.kernels import host

    monkeypatch.setattr(host, "_PAIRS_PER_THREAD", 100)
    monkeypatch.setattr(host, "_THREADED_MIN_CELLS", 1)
    monkeypatch.setattr(host, "_RAPIDFUZZ_CHUNK", 97)
    monkeypatch.setattr(host, "_THREAD_CHUNK", 31)
    monkeypatch.setattr(host, "_ONE_CALL_MAX_PAIRS", 194)
    rng = random.Random(3)
    for cores in (1, 2, 3):
        monkeypatch.setattr(host, "free_cores", lambda cores=cores: cores)
        for low, high in ((0, 20), (70, 300)):
            a = ["".join(rng.choices("abcé中😀", k=rng.randint(low, high))) for _ in range(500)]
            b = [s[::2] + "x" + s[1::3] for s in a]
            for size in (500, 199, 194, 150):  # threads, one thread in chunks, two chunks in one call
                assert host.rapidfuzz_distances(a[:size], b[:size], strings=True).tolist() == \
                    _expected(a[:size], b[:size])
        for where in (0, 96, 97, 260, 499):
            with pytest.raises(TypeError):
                host.rapidfuzz_distances(a[:where] + [list("ab")] + a[where + 1:], b, strings=True)
    started = []
    score_in_threads = host._score_in_threads
    monkeypatch.setattr(host, "_score_in_threads", lambda *args: started.append(args[4]) or score_in_threads(*args))
    short = ["kitten"] * 1000
    for cores, size, threads in ((16, 1000, 4), (16, 350, 3), (16, 150, None), (1, 1000, None)):
        monkeypatch.setattr(host, "free_cores", lambda cores=cores: cores)
        started.clear()
        assert host.rapidfuzz_distances(short[:size], short[:size], strings=True).tolist() == [0] * size
        assert started == ([threads] if threads else [])  # one thread per 100 pairs, at most 4, on free cores
    monkeypatch.setattr(host, "free_cores", lambda: pytest.fail("the load was read for a batch too small for threads"))
    assert host.rapidfuzz_distances(short[:199], short[:199], strings=True).tolist() == [0] * 199


def test_long_pairs_on_the_thread_pool_are_exact(monkeypatch):
    """Long pairs on free cores: contiguous parts on a persistent pool (more threads than pairs included), the
    loop's values, a non-string item in any part raised as TypeError, a new pool after a fork."""
    from gpumetrics.kernels import host

    monkeypatch.setattr(host, "_THREADED_MIN_CELLS", 1)
    rng = random.Random(4)
    a = ["".join(rng.choices("abcé中😀", k=rng.randint(60, 400))) for _ in range(301)]
    b = [s[::2] + "xy" + s[1::3] for s in a]
    chunks = []
    score_part = host._score_part
    monkeypatch.setattr(host, "_score_part", lambda *args: chunks.append(args[5]) or score_part(*args))
    for cores in (2, 3, 7, 400):  # 400 threads for 269 pairs after the calibration head: empty parts
        monkeypatch.setattr(host, "free_cores", lambda cores=cores: cores)
        chunks.clear()
        assert host.rapidfuzz_distances(a, b, strings=True).tolist() == _expected(a, b)
        assert chunks == [max(1, 269 // (4 * cores))] * cores  # every thread gets ≥ 4 chunks' worth to share
        assert host.rapidfuzz_distances(a[:40], b[:40], strings=True).tolist() == _expected(a[:40], b[:40])
    monkeypatch.setattr(host, "free_cores", lambda: 3)
    for where in (40, 150, 300):  # the caller's part, a pool part, the last one
        with pytest.raises(TypeError):
            host.rapidfuzz_distances(a[:where] + [list("ab" * 50)] + a[where + 1:], b, strings=True)
    pool = host._thread_pool(2)
    assert host._thread_pool(2) is pool and host._thread_pool(1) is pool
    monkeypatch.setattr(host.os, "getpid", lambda: -1)  # as in a forked child: the parent's threads are gone
    assert host._thread_pool(2) is not pool


def test_host_syncs_do_not_grow_with_the_lengths():
    """The tensor kernel reads the host once (bounds + stripped lengths) and runs one ``unique`` per chunk: the same
    count for 10- and 640-symbol rows (multi-word patterns, many step blocks), strings, padded and flat tokens."""
    from gpumetrics.kernels.levenshtein_routes import levenshtein_ragged
    from gpumetrics.kernels.text_rows import encode_chars_ragged
    from tests.helpers.syncs import SyncCounter

    rng = random.Random(5)
    seen = {}
    for length in (10, 40, 160, 640):
        a = ["".join(rng.choices("abcé中😀", k=rng.randint(length // 2, length))) for _ in range(24)]
        b = [s[: len(s) // 3] + "x" + s[len(s) // 2 :] for s in a]
        pa, pb, ra, rb = encode_chars(a), encode_chars(b), encode_chars_ragged(a), encode_chars_ragged(b)
        counts = []
        for run in (lambda: levenshtein_strings(a, b, backend="torch"), lambda: levenshtein_distance(*pa, *pb),
                    lambda: levenshtein_ragged(*ra, *rb, backend="torch")):
            with SyncCounter() as counter:
                assert run().tolist() == _expected(a, b)
            counts.append(counter.total - 1)  # the .tolist() of the result
        seen[length] = counts
    assert all(counts == seen[10] for counts in seen.values()), seen
    assert seen[10] == [3, 3, 5], seen


# ------------------------------------------------------------------------------------ fused Triton kernel, CPU run
def _run_triton_interpreter(seed: int, pairs: int, long: int) -> None:
    import os
    import subprocess
    import sys

    import_oracle("triton")
    env = {**os.environ, "TRITON_INTERPRET": "1"}  # must be set before triton is imported: a fresh process
    done = subprocess.run([sys.executable, "-m", "tests.kernels.triton_interpret_check", str(seed), str(pairs),
                           str(long)],
                          env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stdout[-2000:] + done.stderr[-4000:]


_SHARED_BUFFER_CHECK = """
import random, torch
from tests.kernels.triton_interpret_check import mend_interpreter_scalars
mend_interpreter_scalars()
from rapidfuzz.distance import Levenshtein
from gpumetrics.kernels.text_rows import encode_chars_flat, upload_rows
from gpumetrics.kernels.levenshtein_triton import levenshtein_triton_rows
rng = random.Random(4)
a = ["", "abc", "😀x", *("".join(rng.choices("ab中😀", k=rng.randint(0, 150))) for _ in range(20))]
b = ["xy", "", "😀", *("".join(rng.choices("ab中😀", k=rng.randint(0, 150))) for _ in range(20))]
values, offsets = upload_rows(*encode_chars_flat(a + b), torch.device("cpu"), private=True)
starts, lengths, n = offsets[:-1], offsets.diff(), len(a)
concatenate, torch.cat = torch.cat, None  # one buffer for both sides is read in place, never copied twice
got = levenshtein_triton_rows(values, starts[:n], lengths[:n], values, starts[n:], lengths[n:], shared=True).tolist()
torch.cat = concatenate
assert got == [Levenshtein.distance(x, y) for x, y in zip(a, b)], got
# the device route for strings: rows between separators, and word ids found on the device
from gpumetrics.kernels.text_rows import rows_from_separators, split_words, stage_separated, upload_staged
a += ["a b  ab", " \t"]
b += ["ab b a\u3000a", "x"]
values = upload_staged(stage_separated(a + b))
starts, lengths = rows_from_separators(values, 2 * len(a))
n = len(a)
got = levenshtein_triton_rows(values, starts[:n], lengths[:n], values, starts[n:], lengths[n:], shared=True).tolist()
assert got == [Levenshtein.distance(x, y) for x, y in zip(a, b)], got
ids, first, count, collided = split_words(values, starts, lengths)
got = levenshtein_triton_rows(ids, first[:n], count[:n], ids, first[n:], count[n:], shared=True).tolist()
assert not bool(collided) and got == [Levenshtein.distance(x.split(), y.split()) for x, y in zip(a, b)], got
print("ok")
"""


def test_triton_kernel_on_the_string_layout_both_sides_in_one_buffer():
    """Strings on CUDA: both sides encoded into one flat buffer, rows by starts + lengths; the rows between
    separators and the word ids found on the device (under the interpreter)."""
    import os
    import subprocess
    import sys

    import_oracle("triton")
    done = subprocess.run([sys.executable, "-c", _SHARED_BUFFER_CHECK], env={**os.environ, "TRITON_INTERPRET": "1"},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stdout[-2000:] + done.stderr[-4000:]


_ONE_TENSOR_TWO_OFFSETS_CHECK = """
import random, torch
from tests.kernels.triton_interpret_check import mend_interpreter_scalars
mend_interpreter_scalars()
from rapidfuzz.distance import Levenshtein
from gpumetrics.kernels.levenshtein_routes import levenshtein_ragged
rng = random.Random(1)
for trial in range(11):  # the 11th draw of this generator is the batch fuzzing found
    n = rng.randint(300, 900)
    values = torch.tensor([rng.randint(0, 2) for _ in range(n)])
    rows = rng.randint(2, 6)
    a, b = ([0] + sorted(rng.sample(range(1, n), rows - 1)) + [n] for _ in range(2))
a_rows = [values[a[i]:a[i + 1]].tolist() for i in range(rows)]
b_rows = [values[b[i]:b[i + 1]].tolist() for i in range(rows)]
expected = [Levenshtein.distance(x, y) for x, y in zip(a_rows, b_rows)]
strided = torch.zeros(2 * n, dtype=torch.long)
strided[::2] = values
flat = strided[::2]  # a view, as a caller may pass one
got = levenshtein_ragged(flat, torch.tensor(a), flat, torch.tensor(b), backend="triton").tolist()
assert got == expected, (got, expected)
print("ok")
"""


def test_triton_kernel_on_one_values_tensor_under_two_offsets():
    """``levenshtein_ragged(v, a_offsets, v, b_offsets)`` (preds and target cut from one tensor of ids) took the fused
    kernel's one-buffer path, meant for the string routes, because ``b is a``: rows of the two sides overlapped and
    their carries clobbered each other (distances 382 / 78 for 388 / 77 under the interpreter; found by fuzzing), and
    a strided tensor would be read as if contiguous on a GPU. Sharing is now asked for (``shared=True``)."""
    import os
    import subprocess
    import sys

    import_oracle("triton")
    done = subprocess.run([sys.executable, "-c", _ONE_TENSOR_TWO_OFFSETS_CHECK],
                          env={**os.environ, "TRITON_INTERPRET": "1"}, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stdout[-2000:] + done.stderr[-4000:]


def test_triton_kernel_equals_the_tensor_kernel_under_the_interpreter():
    """Uneven lengths, Unicode, empty sides, near-identical rows, a 3,000-symbol row vs 3, word ids up to 2**32."""
    _run_triton_interpreter(seed=0, pairs=12, long=3_000)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_triton_kernel_equals_the_tensor_kernel_under_the_interpreter_more_pairs(seed):
    """As above with more random pairs and a 10,000-symbol row vs 3 (minutes under the interpreter)."""
    _run_triton_interpreter(seed=seed, pairs=60, long=10_000)


def _run_wavefront_interpreter(seed: int, pairs: int, long: int, words: int) -> None:
    import os
    import subprocess
    import sys

    import_oracle("triton")
    env = {**os.environ, "TRITON_INTERPRET": "1"}  # must be set before triton is imported: a fresh process
    done = subprocess.run([sys.executable, "-m", "tests.kernels.triton_wavefront_check", str(seed), str(pairs),
                           str(long), str(words)], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stdout[-2000:] + done.stderr[-4000:]


def test_wavefront_kernel_equals_rapidfuzz_and_the_column_kernel_under_the_interpreter():
    """The wavefront kernel forced, 2 pattern words per program (patterns past 128 symbols run in groups, a 3,000-
    symbol row in 24): uneven lengths across word and group boundaries, Unicode, empty sides, identical and
    near-identical rows, 3,000 vs 3, word ids up to 2**32 - 1, both buffer layouts; ``kernel="auto"`` on short and
    long pairs interleaved."""
    _run_wavefront_interpreter(seed=0, pairs=12, long=3_000, words=2)


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "words"), [(1, 4), (2, 32)])
def test_wavefront_kernel_under_the_interpreter_more_pairs(seed, words):
    """As above with more random pairs, 4 and 32 (the default) words per program, and a 10,000-symbol row vs 3."""
    _run_wavefront_interpreter(seed=seed, pairs=40, long=10_000, words=words)


def test_fused_kernel_choice_and_words_per_program_are_checked():
    import_oracle("triton")
    from gpumetrics.kernels.levenshtein_triton import levenshtein_triton

    values, offsets = torch.tensor([1, 2]), torch.tensor([0, 1, 2])
    with pytest.raises(ValueError, match="`kernel` must be one of 'auto', 'columns', 'wavefront'"):
        levenshtein_triton(values, offsets, values, offsets, kernel="rows")
    with pytest.raises(ValueError, match="`words` must be a power of two, got 24"):
        levenshtein_triton(values, offsets, values, offsets, words=24)
    with pytest.raises(TypeError, match="`words`"):
        levenshtein_triton(values, offsets, values, offsets, words=2.0)


_HOPPER_COMPILE = """
import os, re, subprocess, tempfile
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from gpumetrics.kernels.levenshtein_triton import (LANES, WARPS, WAVE_WARPS, WAVE_WORDS, _levenshtein_kernel,
                                                   _wavefront_kernel)
pointers = {"values": "*i64", "p_start_ptr": "*i64", "p_len_ptr": "*i64", "t_start_ptr": "*i64", "t_len_ptr": "*i64"}
tail = {"out_ptr": "*i64", "order_ptr": "*i64", "pairs": "i32", "count_ptr": "*i64"}
tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
for jit, signature, shape, warps in (
        (_levenshtein_kernel, {**pointers, "carry_ptr": "*i8", **tail, "BLOCK": "constexpr"}, {"BLOCK": LANES}, WARPS),
        (_wavefront_kernel, {**pointers, "hout_ptr": "*i8", **tail, "WORDS": "constexpr"}, {"WORDS": WAVE_WORDS},
         WAVE_WARPS)):
    kernel = triton.compile(ASTSource(jit, signature, constexprs=shape), target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": warps})  # the launch shape
    assert kernel.asm["cubin"] and "bar.sync" in kernel.asm["ptx"]
    # its state fits the registers: no local memory (the column kernel's 32 lanes on 4 warps spilled 712 bytes); the
    # wavefront kernel's match masks stay in their threads: no shared memory (a [64, WORDS] tile loaded in 2-D and
    # laid out by rows, as the load's contiguity would have it, was reduced across the warp through 1 KiB of it)
    if os.path.exists(tool):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "kernel.cubin")
            with open(path, "wb") as cubin:
                cubin.write(kernel.asm["cubin"])
            usage = subprocess.run([tool, "-res-usage", path], capture_output=True, text=True, check=True).stdout
        assert re.search(r"STACK:0 ", usage) and re.search(r"LOCAL:0 ", usage), usage
        assert jit is _levenshtein_kernel or re.search(r"SHARED:0 ", usage), usage
        print(jit.__name__, re.search(r"REG:[0-9]+", usage).group())
print("ok")
"""


def test_triton_kernel_compiles_for_an_h100():
    """The interpreter is lenient (no layouts, no dtype rules of the compiler): both kernels are also compiled ahead
    of time for sm_90 with the launch's argument types and default shape, which needs no GPU (Triton's own ptxas),
    and their resource usage read (no register spills; the wavefront kernel: no shared memory either)."""
    import os
    import subprocess
    import sys

    import_oracle("triton")
    env = {key: value for key, value in os.environ.items() if key != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "-c", _HOPPER_COMPILE], env=env, capture_output=True, text=True, timeout=600)
    if done.returncode and ("ptxas" in done.stderr and "not found" in done.stderr.lower()):
        pytest.skip("Triton's CUDA toolchain (ptxas) is not installed here")
    assert done.returncode == 0 and done.stdout.rstrip().endswith("ok"), done.stdout[-2000:] + done.stderr[-4000:]


def test_auto_on_a_device_takes_rapidfuzz_only_where_the_host_beats_the_device_route(monkeypatch):
    """Strings are on the host already: rapidfuzz beat the device route on long pairs from 2 free cores (the first
    GPU run); short pairs, words, small batches and busy hosts take the device kernels (rapidfuzz's threads on short
    pairs hold the GIL: about 1.2x one core on 2 and on 16 cores, slower than staging the strings for the device)."""
    from gpumetrics.kernels import host, levenshtein_routes as routes

    cuda = torch.device("cuda")  # only the dispatch is asked: no GPU needed
    short, long = ["kitten"] * 500_000, ["x" * 200] * 20_000
    monkeypatch.setattr(host, "free_cores", lambda: 16)
    assert routes._auto_backend(short, short, "char", cuda) == "torch"
    assert routes._auto_backend(short, short, "word", cuda) == "torch"
    assert routes._auto_backend(long, long, "char", cuda) == "rapidfuzz"
    assert routes._auto_backend([1] * 20_000, long, "char", cuda) == "torch"  # the device path's check names it
    assert routes._auto_backend([], [], "char", cuda) == "torch"
    assert routes._auto_backend(short, short, "char", torch.device("cpu")) == "rapidfuzz"
    assert routes._auto_backend(long[:100], long[:100], "char", cuda) == "torch"  # too few cells for threads
    assert routes._auto_backend(long, long, "word", cuda) == "torch"
    monkeypatch.setattr(host, "free_cores", lambda: 2)
    assert routes._auto_backend(long, long, "char", cuda) == "rapidfuzz"
    monkeypatch.setattr(host, "free_cores", lambda: 1)
    assert routes._auto_backend(long, long, "char", cuda) == "torch"
    monkeypatch.setattr(routes, "has_rapidfuzz", lambda: False)
    assert routes._auto_backend(short, short, "char", torch.device("cpu")) == "torch"


@pytest.mark.parametrize("id_range", [(0, 6), (0, 300), (0xD7F0, 0xD810), (0, 70_000), (2**31, 2**32 - 1)])
def test_cpu_token_tensors_take_rapidfuzz_under_auto(id_range):
    """CPU token tensors under ``auto`` go to rapidfuzz (rows as code-point strings; ids past the code points ranked
    first): equal to the tensor kernel, padded (padding of any value) and flat, long and empty rows included."""
    from gpumetrics.kernels.levenshtein_routes import levenshtein_ragged
    from gpumetrics.kernels.ragged import Ragged

    rng = random.Random(id_range[0])
    vocab = [rng.randint(*id_range) for _ in range(6)]
    rows_a = [[rng.choice(vocab) for _ in range(rng.choice([0, 1, 5, 63, 64, 65, 200]))] for _ in range(40)]
    rows_b = [row[: len(row) // 2] + [rng.choice(vocab)] + row[len(row) // 2 + 1 :] for row in rows_a]
    rows_b[3] = []

    def padded(rows):
        width = max(map(len, rows))
        data = torch.full((len(rows), width), -100, dtype=torch.long)
        for i, row in enumerate(rows):
            data[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        return data, torch.tensor(list(map(len, rows)))

    def flat(rows):
        lengths = torch.tensor([0] + list(map(len, rows)))
        return Ragged(torch.tensor([t for row in rows for t in row], dtype=torch.long), lengths.cumsum(0))

    want = levenshtein_distance(*padded(rows_a), *padded(rows_b), backend="torch").tolist()
    assert want == [Levenshtein.distance(x, y) for x, y in zip(rows_a, rows_b)]
    for backend in ("auto", "rapidfuzz"):
        assert levenshtein_distance(*padded(rows_a), *padded(rows_b), backend=backend).tolist() == want
        assert levenshtein_ragged(*flat(rows_a), *flat(rows_b), backend=backend).tolist() == want


def test_free_cores_are_the_idle_ones_shared_by_the_ranks_of_a_node(monkeypatch):
    from gpumetrics.kernels import host

    monkeypatch.setattr(host.os, "sched_getaffinity", lambda pid: set(range(16)))
    monkeypatch.setattr(host.os, "getloadavg", lambda: (3.2, 0.0, 0.0))
    monkeypatch.setattr(host, "_running_threads", lambda: None)  # no /proc/loadavg: the average alone
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    assert host.free_cores() == 14  # 16 + 1 (this process) - 3.2, rounded
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "8")  # torchrun: 8 ranks on this node share them
    assert host.free_cores() == 1
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "4")
    assert host.free_cores() == 3
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "x")
    assert host.free_cores() == 14
    monkeypatch.setattr(host.os, "getloadavg", lambda: (40.0, 0.0, 0.0))  # a busy machine: one thread
    assert host.free_cores() == 1
    monkeypatch.setattr(host, "_running_threads", lambda: 30)  # still busy now
    assert host.free_cores() == 1
    monkeypatch.setattr(host, "_running_threads", lambda: 1)  # the average held this process's own past threads
    assert host.free_cores() == 16
    monkeypatch.setattr(host.os, "getloadavg", lambda: (0.2, 0.0, 0.0))  # idle on average, a burst now: the average
    monkeypatch.setattr(host, "_running_threads", lambda: 9)
    assert host.free_cores() == 16
    monkeypatch.undo()
    assert host._running_threads() is None or host._running_threads() >= 1  # this thread runs while it reads


def test_a_fused_kernel_that_cannot_build_falls_back_to_the_tensor_kernel_once_with_a_warning(monkeypatch):
    """A machine whose Triton cannot compile or launch the fused kernel (compiler, ptxas, driver) still scores edit
    distance under ``auto``: one warning, the tensor kernel's (equal) values, and no further launch in the process;
    an explicit ``backend="triton"`` raises the error instead."""
    from gpumetrics.kernels import levenshtein_routes as routes, levenshtein_triton
    from gpumetrics.kernels.ragged import Ragged
    from gpumetrics.kernels.text_rows import encode_chars, encode_chars_ragged

    launches = []

    def broken(*args, **kwargs):
        launches.append(1)
        raise RuntimeError("ptxas fatal: unsupported GPU architecture")

    monkeypatch.setattr(levenshtein_triton, "levenshtein_triton_rows", broken)
    monkeypatch.setattr(levenshtein_triton, "levenshtein_triton", broken)
    monkeypatch.setattr(routes, "_FUSED_FAILURE", [])
    monkeypatch.setattr(routes, "_fused_kernel_serves", lambda device: not routes._FUSED_FAILURE)  # as on CUDA
    monkeypatch.setattr(routes, "has_rapidfuzz", lambda: False)  # CPU tokens would take rapidfuzz first
    a, b = ["kitten", "", "flaw", "a" * 70 + "😀"], ["sitting", "abc", "lawn", "a" * 69 + "b😀"]
    expected = _expected(a, b)
    flat_a, flat_b = Ragged(*encode_chars_ragged(a)), Ragged(*encode_chars_ragged(b))
    with pytest.warns(RuntimeWarning, match="fused Triton Levenshtein kernel failed.*ptxas"):
        assert routes.levenshtein_ragged(*flat_a, *flat_b).tolist() == expected
    assert len(launches) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once: later calls go straight to the tensor kernel
        assert routes.levenshtein_ragged(*flat_a, *flat_b).tolist() == expected
        assert routes.levenshtein_distance(*encode_chars(a), *encode_chars(b)).tolist() == expected
        assert levenshtein_strings(a, b, backend="torch").tolist() == expected
    assert len(launches) == 1
    for backend_call in (lambda: routes.levenshtein_ragged(*flat_a, *flat_b, backend="triton"),
                         lambda: routes.levenshtein_distance(*encode_chars(a), *encode_chars(b), backend="triton")):
        with pytest.raises(RuntimeError, match="ptxas"):
            backend_call()


def test_each_fused_route_falls_back_on_its_first_failure(monkeypatch):
    """Every entry that launches the fused kernel (padded tokens, flat tokens, strings) falls back by itself."""
    from gpumetrics.kernels import levenshtein_routes as routes, levenshtein_triton
    from gpumetrics.kernels.text_rows import encode_chars, encode_chars_ragged

    def broken(*args, **kwargs):
        raise OSError("cannot find the C compiler")

    monkeypatch.setattr(levenshtein_triton, "levenshtein_triton_rows", broken)
    monkeypatch.setattr(levenshtein_triton, "levenshtein_triton", broken)
    monkeypatch.setattr(routes, "has_rapidfuzz", lambda: False)
    a, b = ["abc", "", "x" * 130], ["abd", "q", "x" * 128 + "yy"]
    calls = {"padded": lambda: routes.levenshtein_distance(*encode_chars(a), *encode_chars(b)),
             "flat": lambda: routes.levenshtein_ragged(*encode_chars_ragged(a), *encode_chars_ragged(b)),
             "strings": lambda: levenshtein_strings(a, b, backend="torch")}
    for name, call in calls.items():
        monkeypatch.setattr(routes, "_FUSED_FAILURE", [])
        monkeypatch.setattr(routes, "_fused_kernel_serves", lambda device: not routes._FUSED_FAILURE)
        with pytest.warns(RuntimeWarning, match="cannot find the C compiler"):
            assert call().tolist() == _expected(a, b), name


def test_out_of_memory_in_the_fused_kernel_is_raised_not_taken_for_a_broken_install(monkeypatch):
    from gpumetrics.kernels import levenshtein_routes as routes

    monkeypatch.setattr(routes, "_FUSED_FAILURE", [])

    def out_of_memory():
        raise torch.OutOfMemoryError("CUDA out of memory")

    with pytest.raises(torch.OutOfMemoryError):
        routes._fused(out_of_memory)
    assert routes._FUSED_FAILURE == []  # the kernel still serves later batches
