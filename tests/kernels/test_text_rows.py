"""Strings to device rows (gpumetrics.kernels.text_rows): separators instead of host lengths, rows and words found
on the device, word ids exact by comparison with their hash class's first word."""

import random

import numpy as np
import pytest
import torch

from gpumetrics.kernels import text_rows
from gpumetrics.kernels.text_rows import (
    WHITESPACE, encode_chars_flat, rows_from_separators, split_words, stage_pairs_separated, stage_separated,
    upload_staged,
)

LETTERS = "abcé中😀\ud800"  # ASCII, Latin-1, BMP, astral, a lone surrogate
SPACES = "".join(map(chr, WHITESPACE))


def _texts(rng: random.Random, count: int, alphabet: str, longest: int = 12) -> list[str]:
    return ["".join(rng.choices(alphabet, k=rng.randint(0, longest))) for _ in range(count)]


def _rows(texts: list[str]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    values = upload_staged(stage_separated(texts))
    return values, *rows_from_separators(values, len(texts))


def test_whitespace_is_what_str_split_splits_on():
    assert set(WHITESPACE) == {code for code in range(0x110000) if chr(code).isspace()}
    every = torch.arange(0x110000, dtype=torch.int32)
    assert torch.nonzero(text_rows._is_whitespace(every)).flatten().tolist() == sorted(WHITESPACE)
    for code in range(0x110000):  # str.split() and str.isspace agree on every character
        if ("a" + chr(code) + "b").split() != ["a" + chr(code) + "b"]:
            assert code in WHITESPACE


def test_storage_kind_and_code_points_of_every_kind_and_length():
    """CPython's string layout changed in 3.12 (a smaller header; one-character Latin-1 strings are static singletons
    whose size reads differently): the encoding never takes a string for narrower than it is, on any version."""
    assert text_rows._COMPACT_HEADER is not None  # CPython 3.11–3.13 all follow the layout
    rng = random.Random(0)
    chars = ["é", "ÿ", "\x80", "中", "\uffff", "\ud800", "😀", "\U0010ffff"]
    for length in [1, 2, 3, 7, 64, 1000]:
        for _ in range(20):
            text = "".join(rng.choices(chars[: rng.randint(1, len(chars))], k=length)) + "a" * rng.randint(0, 2)
            widest = max(map(ord, text))
            narrowest = 1 if widest < 0x100 else 2 if widest < 0x10000 else 4
            kind = text_rows._storage_kind(text)
            assert kind == narrowest if length > 1 else kind >= narrowest, repr(text)  # but the singletons: exact
            points = text_rows._code_points(text)
            assert points.tolist() == list(map(ord, text))


_STORAGE_KIND_CHECK = """
if sys.version_info < (3, 10):
    print("ok: older than the project's floor")
    raise SystemExit
kinds = {"\\xe9\\xe9": 1, "a\\xff": 1, "\\u4e2d\\u4e2d": 2, "a\\uffff": 2, "\\U0001f600a": 4, "\\xe9" * 500: 1,
         "\\u4e2d" * 500: 2}
assert _COMPACT_HEADER is not None, sys.version
wrong = {text[:4]: (_storage_kind(text), kind) for text, kind in kinds.items() if _storage_kind(text) != kind}
assert not wrong and _storage_kind("\\xe9") in (1, 4), (sys.version, wrong)
print("ok", _COMPACT_HEADER)
"""


def _other_cpythons() -> list[str]:
    """The other CPython 3 interpreters of this machine (pyenv's, ``python3.X`` on PATH); the check skips those
    older than 3.10 itself."""
    import glob
    import os
    import shutil
    import sys

    found = {os.path.realpath(path) for path in glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3"))}
    # pyenv's shims: not interpreters
    found |= {os.path.realpath(path) for minor in range(10, 16)
              if (path := shutil.which(f"python3.{minor}")) and "/shims/" not in path}
    found.discard(os.path.realpath(sys.executable))
    return sorted(found)


def test_storage_kind_on_every_cpython_here():
    """The storage-width arithmetic runs on each other CPython of the machine (3.10–3.13 where pyenv has them): the
    layout changed in 3.12, and CI's own interpreter is 3.11. Only ``sys`` is needed, so no torch there."""
    import inspect
    import subprocess

    pythons = _other_cpythons()
    if not pythons:
        pytest.skip("no other CPython 3.10+ on this machine")
    source = "import sys\nfrom typing import Optional\n" + inspect.getsource(text_rows._compact_header) + \
        inspect.getsource(text_rows._storage_kind) + "_COMPACT_HEADER = _compact_header()\n" + _STORAGE_KIND_CHECK
    for python in pythons:
        done = subprocess.run([python, "-c", source], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and done.stdout.startswith("ok"), (python, done.stdout, done.stderr[-2000:])


def _narrowest(text: str) -> int:
    widest = max(map(ord, text), default=0)
    return 1 if widest < 0x100 else 2 if widest < 0x10000 else 4


@pytest.mark.parametrize("block", [3, 2048])
def test_separated_encoding_is_the_code_points_each_followed_by_zero(monkeypatch, block):
    monkeypatch.setattr(text_rows, "_ENCODE_BLOCK", block)
    rng = random.Random(block)
    for alphabet in ("ab", "aé", "a中", "a😀", LETTERS):
        texts = _texts(rng, 17, alphabet) + [""] * 4
        staged = stage_separated(texts)
        assert upload_staged(staged).tolist() == [code for text in texts for code in (*map(ord, text), 0)]
        assert staged.symbols == sum(map(len, texts)) + len(texts)
        for index, width in enumerate(staged.table[2].tolist()):  # each block in its own storage width
            joined = "\0".join(texts[index * block:(index + 1) * block])
            assert width == _narrowest(joined) or (len(joined) == 1 and width > _narrowest(joined))
    assert upload_staged(stage_separated([])).tolist() == []
    assert upload_staged(stage_separated(["", ""])).tolist() == [0, 0]


# every kind of text a block can hold: ASCII, Latin-1, BMP, astral, lone surrogates (both halves, paired in the
# wrong order), the widest code point, whitespace of every width, empty strings
_ADVERSARIAL = ["", "a", "ab c", "\x80\xff é", "中文 字", "😀", "a😀b", "\ud800", "\udfff\ud800", "x\udc80 y",
                "\U0010ffff", "\uffff\ufffe", "\u3000a\u00a0b\x85c", " ", "\t\n"]


@pytest.mark.parametrize("block", [1, 2, 3, 5, 2048])
def test_staged_values_equal_the_host_encoding_on_adversarial_text(monkeypatch, block):
    """The staged code points are the host encoding's (``encode_chars_flat``, which the host route and the NUL
    fallback use) with a 0 after each string, whatever the blocks' widths (mixed within one upload: the values are
    read by their blocks' widths on the device) and however many staging buffers they took."""
    monkeypatch.setattr(text_rows, "_ENCODE_BLOCK", block)
    rng = random.Random(block)
    texts = [rng.choice(_ADVERSARIAL) * rng.randint(1, 3) for _ in range(60)]
    texts += ["a" * 5000, "😀" * 3000 + "\ud800", "é" * 4000, "中" * 4500]  # long strings, a block each (small)
    texts += [rng.choice(_ADVERSARIAL) for _ in range(20)]
    values, lengths = encode_chars_flat(texts)
    separated = np.insert(values.astype(np.int64), np.cumsum(lengths), 0)
    staged = stage_separated(texts)
    assert upload_staged(staged).tolist() == separated.tolist()
    if block < 5:  # small blocks of every width, then ones far larger than the first: more than one buffer
        assert len(np.unique(staged.table[2])) == 3 and len(staged.buffers) > 1
    values, starts, row_lengths = _rows(texts)
    assert row_lengths.tolist() == lengths.tolist()


def test_ascii_blocks_travel_in_one_byte_beside_an_astral_block(monkeypatch):
    """One astral character makes its own block four bytes a symbol, not the whole upload."""
    monkeypatch.setattr(text_rows, "_ENCODE_BLOCK", 16)
    texts = ["ascii text"] * 160 + ["😀"]
    staged = stage_separated(texts)
    assert sum(buffer.numel() for buffer in staged.buffers) < 1.1 * staged.symbols + 4 * 2
    assert staged.table[2].tolist() == [1] * 10 + [4]
    assert upload_staged(staged)[-2:].tolist() == [0x1F600, 0]


@pytest.mark.parametrize("block", [3, 2048])
def test_a_string_holding_nul_is_refused(monkeypatch, block):
    monkeypatch.setattr(text_rows, "_ENCODE_BLOCK", block)
    assert stage_separated(["ab", "c", "d", "e", "f\x00", "g"]) is None
    assert stage_separated(["\x00"]) is None
    assert stage_separated(["😀\x00"]) is None and stage_separated(["中\x00", "é"]) is None


def test_rows_are_found_from_the_separators():
    rng = random.Random(0)
    texts = _texts(rng, 300, LETTERS + " ") + ["", ""]
    values, starts, lengths = _rows(texts)
    assert lengths.tolist() == [len(t) for t in texts]
    assert ["".join(map(chr, values[s:s + n].tolist())) for s, n in zip(starts.tolist(), lengths.tolist())] == texts
    assert [t.tolist() for t in rows_from_separators(torch.zeros(0, dtype=torch.int32), 0)] == [[], []]


def _check_words(texts: list[str]) -> None:
    values, starts, lengths = _rows(texts)
    ids, first, count, collided = split_words(values, starts, lengths)
    assert not bool(collided)
    words = [text.split() for text in texts]
    assert count.tolist() == [len(w) for w in words]
    flat = [word for row in words for word in row]
    got = ids[: len(flat)].tolist()
    assert first.tolist() == [sum(map(len, words[:row])) for row in range(len(words))]
    assert all(0 <= i < values.shape[0] for i in got)
    by_word: dict[str, int] = {}
    for word, word_id in zip(flat, got):  # equal words, equal ids; different words, different ids
        assert by_word.setdefault(word, word_id) == word_id
    assert len(set(got)) == len(by_word)


@pytest.mark.parametrize("seed", range(4))
def test_words_split_on_the_device_as_str_split(seed):
    rng = random.Random(seed)
    alphabet = "ab" if seed % 2 else LETTERS  # tiny alphabets: many repeated words, long shared prefixes
    texts = _texts(rng, 200, alphabet + SPACES + "  ", longest=30)
    texts += ["", " ", "\t\n", "a", " a", "a ", "ab ba ab", "a\u3000b\u00a0a\x1cb\x85"]
    _check_words(texts)


def test_words_of_a_batch_without_any_word():
    values, starts, lengths = _rows(["", " ", "\t"])
    ids, first, count, collided = split_words(values, starts, lengths)
    assert count.tolist() == [0, 0, 0] and first.tolist() == [0, 0, 0] and not bool(collided)
    empty = torch.zeros(0, dtype=torch.long)
    assert split_words(torch.zeros(0, dtype=torch.int32), empty, empty)[2].tolist() == []


def test_long_words_and_anagrams_get_their_own_ids():
    rng = random.Random(5)
    word = "".join(rng.choices("abc", k=5000))
    texts = [word + " " + word[::-1], word[:-1] + "x " + word, "ab ba aab aba baa", "abc acb bac bca cab cba"]
    _check_words(texts)


def test_a_hash_collision_is_reported_not_absorbed(monkeypatch):
    monkeypatch.setattr(text_rows, "_mix", lambda x: torch.zeros_like(x))  # every word hashes alike
    values, starts, lengths = _rows(["a b", "b a"])
    assert bool(split_words(values, starts, lengths)[3])
    values, starts, lengths = _rows(["ab ab", "ab"])  # one distinct word: equal hashes, equal words
    assert not bool(split_words(values, starts, lengths)[3])
    values, starts, lengths = _rows(["ab abc"])  # same hash, different lengths
    assert bool(split_words(values, starts, lengths)[3])


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_ANY_TEXT = st.text(alphabet=st.one_of(
    st.characters(blacklist_characters="\x00", blacklist_categories=()),  # every plane, lone surrogates included
    st.sampled_from([*SPACES, "a", "b"])), max_size=20)


@settings(max_examples=150, deadline=None)
@given(st.lists(_ANY_TEXT, max_size=12))
def test_rows_and_words_of_any_text(texts):
    values, starts, lengths = _rows(texts)
    assert lengths.tolist() == [len(t) for t in texts]
    _check_words(texts)


def test_pairs_are_chunked_in_order_within_the_symbol_budget(monkeypatch):
    monkeypatch.setattr(text_rows, "_ENCODE_BLOCK", 3)
    rng = random.Random(9)
    a, b = _texts(rng, 20, LETTERS, longest=9), _texts(rng, 20, "xy", longest=9)
    a[7] = "q" * 80  # one block alone over the budget: a chunk of its own
    chunks = list(stage_pairs_separated(a, b, 40))
    seen = 0
    for pairs, staged in chunks:
        values = upload_staged(staged)
        texts = a[seen:seen + pairs] + b[seen:seen + pairs]
        assert values.tolist() == [code for text in texts for code in (*map(ord, text), 0)]
        assert values.numel() <= 40 or staged.table.shape[1] == 2
        seen += pairs
    assert seen == 20 and len(chunks) > 3
    assert list(stage_pairs_separated([], [], 40)) == []
    assert list(stage_pairs_separated(["a"], ["\x00"], 40)) == [None]
    assert [chunk is None for chunk in stage_pairs_separated(a + ["\x00"], b + ["b"], 40)][-1]
