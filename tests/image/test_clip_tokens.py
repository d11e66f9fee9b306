"""BatchCLIPTokenizer gives open_clip's SimpleTokenizer ids exactly (fuzzed captions), and defers where it cannot."""

from __future__ import annotations

import random

import pytest
import torch

from gpumetrics.image import clip_tokens
from gpumetrics.image.clip_tokens import BatchCLIPTokenizer
from tests.helpers.oracles import import_oracle

open_clip = import_oracle("open_clip")

#: every ASCII code point, text that ftfy rewrites (mojibake, ligatures, full-width, curly quotes, NBSP, controls),
#: HTML entities, the special tokens' text, contractions the pattern splits off, and scripts the pattern reads
_PIECES = [chr(i) for i in range(128)] + [
    "é", "ß", "Æ", "ﬁ", "＆", "ｆ", "’", "“", "”", "â€™", "Ã©", "\u00a0", "\u200b", "\u2028", "\x85", "\x9d", "\ud800",
    "&amp;", "&amp;amp;", "&lt;b&gt;", "&#39;", "&nbsp;", "<end_of_text>", "<start_of_text>", "<END_OF_TEXT>", "'s",
    "'LL", "'Re", "Ǆ", "İ", "ẞ", "кошка", "鳥", "🙂", "٣", "Ⅻ", "e\u0301", " ", "  ", "\t\n",
]
_WORDS = ["cat", "Dog", "photo", "2024", "naïve", "don't", "HELLO", "a", "the", "x-ray", "U.S.", "1,000"]


@pytest.fixture(scope="module")
def reference():
    return open_clip.get_tokenizer("ViT-B-32")


def _caption(rng: random.Random) -> str:
    size = rng.randint(0, 150 if rng.random() < 0.1 else 14)  # a tenth past the 77-token context
    return "".join(rng.choice(_PIECES) if rng.random() < 0.4 else rng.choice(_WORDS) + " " for _ in range(size))


def test_equals_open_clip_on_fuzzed_batches(reference) -> None:
    ours, rng = BatchCLIPTokenizer(reference), random.Random(0)
    assert ours.exact
    for _ in range(1500):
        batch = [_caption(rng) for _ in range(rng.randint(1, 9))]
        assert torch.equal(ours(batch), reference(batch)), batch


def test_plain_ascii_batches_and_the_edges(reference) -> None:
    ours = BatchCLIPTokenizer(reference)
    plain = [f"A photo number {i} of a cat on a sofa." for i in range(300)]
    edges = ["", " ", "\t\r\n\x0c", "word " * 200, "a" * 500, "<end_of_text> inside", "&", "x\x0by", "\x1b[31mred"]
    for batch in (plain, edges, edges[:1], ["one caption"] * 3):
        result = ours(batch)
        assert result.dtype == torch.long and result.shape == (len(batch), 77)
        assert torch.equal(result, reference(batch)), batch
    assert torch.equal(ours("one string"), reference("one string"))
    assert ours([]).shape == reference([]).shape


def test_the_word_table_is_bounded(reference, monkeypatch) -> None:
    monkeypatch.setattr(clip_tokens, "MAX_WORDS", 8)
    ours, rng = BatchCLIPTokenizer(reference), random.Random(1)
    for _ in range(50):
        batch = [" ".join(rng.choice(_WORDS + ["zebra", "quux", "Ω"]) for _ in range(rng.randint(0, 6)))
                 for _ in range(3)]
        assert torch.equal(ours(batch), reference(batch)), batch
        assert len(ours._word_ids) <= max(8, 1 + len({w for c in batch for w in reference.pat.findall(c.lower())}))


def test_tokenizers_it_cannot_reproduce_are_called_as_they_are() -> None:
    from open_clip.tokenizer import SimpleTokenizer

    for tokenizer in (SimpleTokenizer(clean="whitespace"), SimpleTokenizer(clean="canonicalize"),
                      SimpleTokenizer(reduction_mask="simple")):
        ours = BatchCLIPTokenizer(tokenizer)
        assert not ours.exact
        batch = ["A Photo, of a CAT!", "x" * 10]
        assert torch.equal(ours(batch), tokenizer(batch))

    class Other:
        def __call__(self, captions):
            return torch.full((len(captions), 3), 7)

    assert not BatchCLIPTokenizer(Other()).exact
    assert BatchCLIPTokenizer(Other())(["a", "b"]).tolist() == [[7, 7, 7]] * 2


def test_clip_score_uses_it_for_open_clip() -> None:
    from gpumetrics.image.clip_score import CLIPScore

    metric = CLIPScore("open_clip", "ViT-B-32", pretrained="random")
    assert isinstance(metric.encoder.tokenizer, BatchCLIPTokenizer) and metric.encoder.tokenizer.exact


def test_an_ftfy_that_rewrites_plain_text_turns_the_shortcut_off(reference, monkeypatch) -> None:
    import open_clip.tokenizer as oc

    monkeypatch.setattr(oc.ftfy, "fix_text", lambda text: text.replace("~", "-"))
    ours = BatchCLIPTokenizer(reference)
    assert not ours.exact
    assert torch.equal(ours(["a~b", "c"]), reference(["a~b", "c"]))
