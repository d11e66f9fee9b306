"""YTTMBPE (our reader + encoder of YouTokenToMe's bpe.model) vs youtokentome itself, dropout-free ids."""

from __future__ import annotations

import random

import pytest

from gpumetrics.text.tokenize.yttm import YTTMBPE, YTTMFormatError
from tests.helpers.ruclip_models import CYRILLIC, require_youtokentome, write_bpe_model

WORD_CHARS = CYRILLIC + CYRILLIC.upper() + "abcdefghijklmnopqrstuvwxyzABCXYZ0123456789"
ODD = ["", " ", "  ", "\t", "\n", "\r\n", "\v", "\f", "\x1c", "\x1f", "\xa0", "\x85", "\u2028", "\u3000", "\u2581",
       "\u200b", "🙂", "🐶🐱", "e\u0301", "\x00", "漢字", "ß", "İ", "«", "»", "—", ".", ",", "!?", "'", '"', "№", "₽"]


@pytest.fixture(scope="module")
def yttm():
    return require_youtokentome()


def _words(rng, n):
    return ["".join(rng.choice(WORD_CHARS[:66] if rng.random() < 0.7 else WORD_CHARS)
                    for _ in range(rng.randint(1, 10))) for _ in range(n)]


@pytest.fixture(scope="module")
def trained_model(yttm, tmp_path_factory):
    """A YouTokenToMe model trained here on generated Russian/English text (vocabulary 700)."""
    rng = random.Random(0)
    words = _words(rng, 400)
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 15))) + rng.choice(". , ! ? 42".split())
             for _ in range(2500)]
    folder = tmp_path_factory.mktemp("yttm")
    (folder / "train.txt").write_text("\n".join(lines), encoding="utf-8")
    yttm.BPE.train(data=str(folder / "train.txt"), vocab_size=700, model=str(folder / "bpe.model"), n_threads=1)
    return folder / "bpe.model", words


def _random_texts(rng, words, n):
    texts = ["", " ", " \t\n ", "\u2581", "\u2581\u2581а", "а\u2581б", "  leading", "trailing \t ", "a  b\t\tc\n\nd"]
    for _ in range(n):
        pieces = []
        for _ in range(rng.randint(0, 25)):
            roll = rng.random()
            pieces.append(rng.choice(words) if roll < 0.5 else rng.choice(ODD) if roll < 0.8
                          else rng.choice(WORD_CHARS))
            pieces.append(rng.choice(["", " ", " ", "  ", "\t", "\n"]))
        texts.append("".join(pieces))
    texts.append(" ".join(rng.choice(words) for _ in range(4000)))  # very long
    texts.append("".join(rng.choice(words) for _ in range(400)))  # one very long word
    texts.append("а" * 3000 + "🙂" * 50 + "b" * 100)  # repeated pairs: the leftmost-first tie rule
    return texts


def test_ids_equal_youtokentome_on_a_trained_model(yttm, trained_model):
    path, words = trained_model
    reference, ours = yttm.BPE(str(path), n_threads=1), YTTMBPE(path)
    assert ours.vocab_size == reference.vocab_size() == 700
    assert (ours.unk_id, ours.pad_id, ours.bos_id, ours.eos_id) == (1, 0, 2, 3)
    texts = _random_texts(random.Random(1), words, 1500)
    texts += [text.lower() for text in texts[:300]] + [text.upper() for text in texts[:100]]
    expected = reference.encode(texts, output_type=yttm.OutputType.ID, dropout_prob=0.0)
    assert ours.encode(texts) == expected
    uncached = YTTMBPE(path, cache_size=0)
    assert uncached.encode(texts[:200]) == expected[:200]


def test_ids_equal_youtokentome_on_random_merge_rules(yttm, tmp_path):
    """Rules that no training would produce (random pairs of any tokens, merges of long tokens) exercise the
    rule-priority / leftmost order of the merge queue."""
    for seed in range(3):
        path = write_bpe_model(tmp_path / f"bpe{seed}.model", "абвгдabcd01.!", n_rules=300, seed=seed)
        reference, ours = yttm.BPE(str(path), n_threads=1), YTTMBPE(path)
        rng = random.Random(seed)
        texts = ["".join(rng.choice("абвгдabcd01.! \u2581xЖ") for _ in range(rng.randint(0, 60))) for _ in range(800)]
        assert ours.encode(texts) == reference.encode(texts, output_type=yttm.OutputType.ID)


def test_hand_written_model_and_format_errors(tmp_path):
    path = tmp_path / "bpe.model"
    path.write_text("3 2\n9601 4\n97 5\n98 6\n5 6 7\n4 7 8\n1 0 2 3\n")
    model = YTTMBPE(path)
    # "ab\xa0ab": NBSP is no space for youtokentome, an unknown character: ▁ a b ? a b → ▁ 7 ? 7 → 8 ? 7
    assert model.encode(["ab ba  a?b", "", " \t", "??", "ab\xa0ab"]) == [[8, 4, 6, 5, 4, 5, 1, 6], [], [], [4, 1],
                                                                          [8, 1, 7]]
    assert YTTMBPE.words(" a\u2581b\u00a0c\x1cd \u2028e ") == ["a", "b\u00a0c\x1cd", "\u2028e"]
    with pytest.raises(TypeError, match="`texts`"):
        model.encode("ab")
    with pytest.raises(TypeError, match="`text`"):
        model.encode([b"ab"])
    with pytest.raises(FileNotFoundError, match="does not exist"):
        YTTMBPE(tmp_path / "missing.model")
    for content, message in [("", "no header"), ("3 2\n9601 4\n", "announces 3 characters"),
                             ("1 0\n97 4\n1 0 2 3\n", "U\\+2581"), ("x y\n", "non-integer"),
                             ("1 0\n99999999 4\n1 0 2 3\n", "out of range")]:
        path.write_text(content)
        with pytest.raises(YTTMFormatError, match=message):
            YTTMBPE(path)
