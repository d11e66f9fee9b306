"""The tokenizer objects: registry, options checked at construction, ``encode`` ≡ ``tokenize``, TokenBatch shapes.

Each tokenizer's parity with its reference tool is tested beside its metric (test_bleu, test_rouge,
test_ptb_tokenizer, test_qa); here the common interface.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gpumetrics.text.tokenize import (
    TOKENIZERS,
    Aij2022Normalizer,
    RougeTokenizer,
    SacreBleuTokenizer,
    TokenBatch,
    dense_ids,
    encode_tokens,
    get_tokenizer,
)

#: every registered name with each option value it takes
CONFIGURATIONS = [
    *[(name, {"lowercase": lower}) for name in ("13a", "intl", "char", "zh", "none") for lower in (False, True)],
    *[(name, {"use_stemmer": stem}) for name in ("rouge-score", "unicode") for stem in (False, True)],
    ("ptb", {}),
    ("meteor-1.5", {}),
    ("squad", {}),
    *[("aij2022", {"keep_hyphen": keep}) for keep in (False, True)],
]
# Latin, Cyrillic, CJK, combining marks, emoji, lone surrogates, punctuation, empty and blank lines, line breaks.
# (No line ends in a one-letter word + period or a bare year: there the PTB tokenizer reads the next line.)
LINES = [
    "The cats' 2 hats, running fast!", "", "   ", "Кошки-мышки бежали, 1,000.5 км", "我爱北京天安门。OK",
    "naïve café e\u0301 हिन्दी", "🐈\u200d⬛ 🙂!", "It's Mr. Smith's dog (or cat) &amp; co", "a\ud800b",
    "line one\nline two\n", "THE the The", "x" * 30 + " y", "Ответ: b) 12", "don't gonna U.S. e.g. etc.",
]
SIGNATURES = [
    ("13a", {}, {"tok": "13a", "case": "mixed"}), ("zh", {"lowercase": True}, {"tok": "zh", "case": "lc"}),
    ("rouge-score", {}, {"tokenizer": "rouge-score", "stemmer": "no"}),
    ("unicode", {"use_stemmer": True}, {"tokenizer": "unicode", "stemmer": "porter"}),
    ("ptb", {}, {"tok": "ptb"}), ("squad", {}, {"tok": "squad"}), ("meteor-1.5", {}, {"tok": "meteor-1.5-norm"}),
    ("aij2022", {"keep_hyphen": True}, {"tok": "aij2022", "hyphen": "kept"}),
]


def first_appearance(items) -> list[int]:
    """Items renumbered by first appearance: equal sequences ⇔ the same equality pattern."""
    seen: dict = {}
    return [seen.setdefault(item, len(seen)) for item in items]


def test_registry_names_every_family() -> None:
    assert set(TOKENIZERS) == {name for name, _ in CONFIGURATIONS}


def test_unknown_name_names_the_argument_and_the_choices() -> None:
    with pytest.raises(ValueError, match=r"`name` must be one of '13a', .*'aij2022'; got 'moses'"):
        get_tokenizer("moses")
    with pytest.raises(ValueError, match="`name`"):
        get_tokenizer(None)


def test_options_are_checked_once_at_construction() -> None:
    with pytest.raises(TypeError, match="tokenizer 'ptb' takes no options; got 'lowercase'"):
        get_tokenizer("ptb", lowercase=True)
    with pytest.raises(TypeError, match="takes only 'use_stemmer'; got 'lowercase'"):
        get_tokenizer("rouge-score", lowercase=True)
    with pytest.raises(TypeError, match="`lowercase` must be a bool"):
        get_tokenizer("13a", lowercase="yes")
    get_tokenizer("13a", lowercase=True)
    with pytest.raises(TypeError, match="`lowercase` must be a bool"):
        get_tokenizer("13a", lowercase=1)  # equal to True as a dict key, but not a bool
    with pytest.raises(TypeError, match="`lowercase` must be a bool"):
        get_tokenizer("13a", lowercase=[True])  # unhashable: still the tokenizer's own message
    with pytest.raises(TypeError, match="`use_stemmer` must be a bool"):
        RougeTokenizer("unicode", use_stemmer=1)
    with pytest.raises(TypeError, match="`keep_hyphen` must be a bool"):
        Aij2022Normalizer(keep_hyphen=None)
    with pytest.raises(ValueError, match="`tokenize`"):
        SacreBleuTokenizer("moses")  # the metrics' own argument names, for the family classes
    with pytest.raises(ValueError, match="`tokenizer`"):
        RougeTokenizer("13a")


def test_equal_requests_share_one_object() -> None:
    assert get_tokenizer("13a") is get_tokenizer("13a", lowercase=False)
    assert get_tokenizer("13a", lowercase=True) is not get_tokenizer("13a")
    assert get_tokenizer("aij2022") is not get_tokenizer("aij2022", keep_hyphen=True)


@pytest.mark.parametrize(("name", "options"), CONFIGURATIONS, ids=lambda x: str(x))
def test_encode_equals_tokenize_per_line(name: str, options: dict) -> None:
    tokenizer = get_tokenizer(name, **options)
    expected = [list(tokenizer.tokenize(line)) for line in LINES]
    assert [list(tokens) for tokens in tokenizer.tokenize_batch(LINES)] == expected
    batch = tokenizer.encode(LINES)
    flat = [token for tokens in expected for token in tokens]
    assert batch.lengths.tolist() == [len(tokens) for tokens in expected]
    assert first_appearance(batch.ids.tolist()) == first_appearance(flat)  # equal ids ⇔ equal tokens
    assert len(set(flat)) <= batch.vocab_size
    if batch.vocabulary is not None:
        assert [batch.vocabulary[i] for i in batch.ids.tolist()] == flat


@pytest.mark.parametrize(("name", "options"), CONFIGURATIONS, ids=lambda x: str(x))
def test_token_batch_shapes_and_empty_input(name: str, options: dict) -> None:
    tokenizer = get_tokenizer(name, **options)
    batch = tokenizer.encode(LINES)
    assert isinstance(batch, TokenBatch)
    assert batch.ids.dtype == batch.lengths.dtype == np.int64
    assert batch.ids.shape == (int(batch.lengths.sum()),) and batch.lengths.shape == (len(LINES),)
    assert batch.ids.min() >= 0 and batch.ids.max() < batch.vocab_size
    on_device = batch.to("cpu")
    assert on_device.ids.dtype == on_device.lengths.dtype == torch.long and on_device.vocab_size == batch.vocab_size
    for lines in ([], [""], ["", " \t", "\n"]):
        empty = tokenizer.encode(lines)
        assert empty.ids.shape == (0,) and empty.lengths.tolist() == [0] * len(lines) and empty.vocab_size == 0
        assert empty.ids.dtype == empty.lengths.dtype == np.int64


def test_ptb_batch_sees_the_next_caption() -> None:
    """pycocoevalcap tokenises all captions in one call: a caption's end can depend on the next one."""
    tokenizer = get_tokenizer("ptb")
    lines = ["It is a.", "The dog"]
    assert tokenizer.tokenize(lines[0]) == ["it", "is", "a."]
    assert tokenizer.tokenize_batch(lines) == [["it", "is", "a"], ["the", "dog"]]
    assert tokenizer.encode(lines).vocabulary == ["it", "is", "a", "the", "dog"]


@pytest.mark.parametrize("name", ["rouge-score", "unicode"])
def test_rouge_line_layout(name: str) -> None:
    for stem in (False, True):
        tokenizer = get_tokenizer(name, use_stemmer=stem)
        batch, line_lengths, lines_per_text = tokenizer.encode_with_lines(LINES)
        assert lines_per_text.tolist() == [text.count("\n") + 1 for text in LINES]
        per_line = [len(tokenizer.tokenize(line)) for text in LINES for line in text.split("\n")]
        assert line_lengths.tolist() == per_line
        text_of_line = np.repeat(np.arange(len(LINES)), lines_per_text)
        assert np.bincount(text_of_line, weights=line_lengths, minlength=len(LINES)).tolist() == batch.lengths.tolist()


def test_signature_parts() -> None:
    for name, options, expected in SIGNATURES:
        tokenizer = get_tokenizer(name, **options)
        assert tokenizer.signature() == expected
        assert repr(tokenizer).startswith(type(tokenizer).__name__ + "(")


def test_the_vocabulary_builder() -> None:
    ids, vocabulary = dense_ids([("a", "b"), (), ("a", "b"), "x"])  # any hashable: token tuples for exact match
    assert ids.tolist() == [0, 1, 0, 2] and vocabulary == [("a", "b"), (), "x"] and ids.dtype == np.int64
    assert dense_ids([])[0].shape == (0,)
    batch = encode_tokens(["b", "a", "b"], [2, 0, 1])
    assert batch.ids.tolist() == [0, 1, 0] and batch.lengths.tolist() == [2, 0, 1] and batch.vocabulary == ["b", "a"]
    with pytest.raises(ValueError, match="`lengths`"):
        encode_tokens(["a"], [2])
    with pytest.raises(ValueError, match="`lengths`"):
        encode_tokens(["a", "b"], [3, -1])
