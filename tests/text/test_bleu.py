"""BLEU parity with sacrebleu (every tokeniser and smoothing) and NLTK (any weights, method0..7), DDP, bad input."""

from __future__ import annotations

import logging
import math
import random
import shutil
import warnings

import pytest
import torch
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu, sentence_bleu
from sacrebleu.metrics.bleu import BLEU, _get_tokenizer
from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

import gpumetrics
from gpumetrics.functional import bleu_score
from gpumetrics.catalog import get_metric
from gpumetrics.text.tokenize import SacreBleuTokenizer, get_tokenizer
from gpumetrics.text.tokenize.sacrebleu import SEPARATOR_CANDIDATES, is_sacrebleu_chinese_char
from tests.helpers.harness import assert_close, check_metric
from tests.helpers.oracles import import_oracle
from testkit.text_data import WORDS, qa_batch

logging.getLogger("sacrebleu").setLevel(logging.ERROR)  # "lines end in a tokenized period" / effective order hints

TOKENIZERS = ("13a", "intl", "char", "zh", "none")
EDGE_LINES = [
    "", " ", "\t", "a.b", "..", "1.5", ",5", ".5", " .5", ".5 ", "x,", "-1-", "5-", "1,000.", "1..2", "a.,5",
    "&amp;lt; &quot;x&quot; &gt;", "<skip<skipped>ped>", "a-\nb", "l\nm", "“quote” «a»", "€5 $3.50", "a\u2028b",
    "\u3000.5\u3000", "5.\u3000", "我爱猫。OK", "猫.5", "Ёж-2 (кот)!", "naïve café", "🐈‍⬛🙂!", "Z̤͂.", "İstanbul",
    "x y  z\t\tw", "It's 3 o'clock, isn't it?", "e.g. U.S.A. etc.",
]
SOUP = list(".,-5a 猫!«»—\t\n&;<>$€°") + ["&amp;", "<skipped>", "\u3000", "\u2003", "1,000", "Ёж"]


def sacrebleu_tokenize_batch(lines: list[str], tokenize: str = "13a", lowercase: bool = False) -> list[list[str]]:
    return get_tokenizer(tokenize, lowercase=lowercase).tokenize_batch(lines)


def random_lines(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12))) for _ in range(count)]
    lines += ["".join(rng.choice(SOUP) for _ in range(rng.randint(0, 14))) for _ in range(count)]
    return lines + EDGE_LINES


def corpus(seed: int, size: int, max_refs: int = 4) -> tuple[list[str], list[list[str]]]:
    """Random hypotheses with 1..max_refs related references: Unicode, punctuation, numbers, empty strings."""
    rng = random.Random(seed)
    preds, target = qa_batch(rng, size, max_refs)
    for i in range(0, size, 7):  # glued punctuation and numbers that the tokenisers must split or keep
        preds[i] = preds[i] + rng.choice([".", ",", " 1,000.5", "!", "-3", " «ok»."])
    return preds, target


def streams(target: list[list[str]]) -> list[list[str | None]]:
    """sacrebleu's reference layout: one stream per reference index, None where a sample has fewer references."""
    width = max(len(refs) for refs in target)
    return [[refs[j] if j < len(refs) else None for refs in target] for j in range(width)]


def sacrebleu_corpus(preds, target, tokenize="13a", smooth="exp", smooth_value=None, lowercase=False,
                     effective_order=False, order=4):
    metric = BLEU(lowercase=lowercase, tokenize=tokenize, smooth_method=smooth, smooth_value=smooth_value,
                  effective_order=effective_order, max_ngram_order=order)
    return metric.corpus_score(preds, streams(target)).score / 100


def nltk_tokens(preds, target, tokenize="none"):
    return sacrebleu_tokenize_batch(preds, tokenize), [sacrebleu_tokenize_batch(refs, tokenize) for refs in target]


def nltk_corpus(preds, target, weights=(0.25,) * 4, method="method0"):
    hyps, refs = nltk_tokens(preds, target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # method0's "0 counts of n-gram overlaps" warning
        return corpus_bleu(refs, hyps, weights=weights, smoothing_function=getattr(SmoothingFunction(), method))


# ------------------------------------------------------------------------------------------------ tokenisers
@pytest.mark.parametrize("tokenize", TOKENIZERS)
def test_tokenizers_equal_sacrebleu(tokenize: str) -> None:
    reference = _get_tokenizer(tokenize)()
    lines = random_lines(1, 1500)
    for lowercase in (False, True):
        expected = [reference((line.lower() if lowercase else line).rstrip()).split() for line in lines]
        assert sacrebleu_tokenize_batch(lines, tokenize, lowercase) == expected
        # the id form BLEU counts with: same lengths, equal tokens <-> equal ids, the vocabulary names the ids
        batch = get_tokenizer(tokenize, lowercase=lowercase).encode(lines)
        flat = [token for tokens in expected for token in tokens]
        assert batch.lengths.tolist() == [len(tokens) for tokens in expected] and len(batch.ids) == len(flat)
        assert [batch.vocabulary[i] for i in batch.ids.tolist()] == flat
        assert len(set(batch.vocabulary)) == batch.vocab_size
    assert get_tokenizer(tokenize).tokenize(lines[0]) == reference(lines[0].rstrip()).split()


def test_chinese_ranges_equal_sacrebleu() -> None:
    # every BMP character plus the supplementary planes sacrebleu's comments mention
    codes = [*range(0x10000), *range(0x20000, 0x20100), *range(0x2F800, 0x2F900)]
    mismatched = [hex(c) for c in codes if is_sacrebleu_chinese_char(chr(c)) != TokenizerZh._is_chinese_char(chr(c))]
    assert mismatched == []


def test_unknown_tokenizer() -> None:
    with pytest.raises(ValueError, match="`tokenize`"):
        SacreBleuTokenizer("moses")


# ------------------------------------------------------------------------------------------------ sacrebleu mode
@pytest.mark.parametrize("tokenize", TOKENIZERS)
def test_sacrebleu_parity_every_smoothing(tokenize: str) -> None:
    preds, target = corpus(10, 80)
    for smooth in ("exp", "floor", "add-k", "none"):
        for effective_order in (False, True):
            for lowercase in (False, True):
                expected = sacrebleu_corpus(preds, target, tokenize, smooth, None, lowercase, effective_order)
                got = bleu_score(preds, target, tokenize=tokenize, smooth=smooth, lowercase=lowercase,
                                 effective_order=effective_order)
                assert_close(got, expected, 1e-9, what=f"{tokenize} {smooth} eff={effective_order} lc={lowercase}")


def test_sacrebleu_parity_small_corpora_and_options() -> None:
    for seed in range(12):  # small corpora reach the zero-match / empty-order branches
        preds, target = corpus(100 + seed, random.Random(seed).choice([1, 2, 3, 5]))
        for smooth, value in (("exp", None), ("floor", 0.3), ("add-k", 2), ("none", None)):
            for effective_order in (False, True):
                expected = sacrebleu_corpus(preds, target, "13a", smooth, value, False, effective_order)
                got = bleu_score(preds, target, smooth=smooth, smooth_value=value, effective_order=effective_order)
                assert_close(got, expected, 1e-9, what=f"seed {seed} {smooth}")
    preds, target = corpus(7, 40)
    for order in (1, 2, 3, 5):  # uniform weights of length n = sacrebleu's max_ngram_order
        expected = sacrebleu_corpus(preds, target, order=order)
        assert_close(bleu_score(preds, target, weights=[1 / order] * order), expected, 1e-9, what=f"order {order}")


def test_sacrebleu_sentence_level() -> None:
    preds, target = corpus(20, 60)
    for smooth in ("exp", "floor", "add-k", "none"):
        for effective_order in (False, True):
            metric = BLEU(smooth_method=smooth, effective_order=effective_order)
            expected = [metric.sentence_score(p, refs).score / 100 for p, refs in zip(preds, target)]
            got = bleu_score(preds, target, smooth=smooth, effective_order=effective_order, reduction="none")
            assert got.shape == (60,)
            assert_close(got, expected, 1e-9, what=f"sentence {smooth} eff={effective_order}")
            mean = bleu_score(preds, target, smooth=smooth, effective_order=effective_order, reduction="mean")
            assert_close(mean, sum(expected) / len(expected), 1e-9)


def test_sacrebleu_large_batch() -> None:
    preds, target = corpus(30, 3000, max_refs=2)
    assert_close(bleu_score(preds, target), sacrebleu_corpus(preds, target), 1e-9)


def test_torchmetrics_sacrebleu_agrees_on_13a() -> None:
    # torchmetrics' SacreBLEUScore re-implements sacrebleu; on 13a with one reference per sample the three agree.
    from torchmetrics.text import SacreBLEUScore

    preds, target = corpus(40, 200, max_refs=1)
    ours = bleu_score(preds, target)
    assert_close(ours, sacrebleu_corpus(preds, target), 1e-9)
    assert_close(ours, float(SacreBLEUScore(tokenize="13a")(preds, target)), 1e-6)


# ------------------------------------------------------------------------------------------------ NLTK mode
NLTK_WEIGHTS = [(0.25, 0.25, 0.25, 0.25), (0.25, 0.25), (0.5, 0.5), (1.0,), (0.1, 0.2, 0.3, 0.4), (0.2,) * 6]


@pytest.mark.parametrize("method", [f"method{k}" for k in range(8)])
def test_nltk_corpus_parity(method: str) -> None:
    for seed, size in ((50, 60), (51, 3), (52, 1), (53, 8)):
        preds, target = corpus(seed, size)
        for weights in NLTK_WEIGHTS:
            try:
                expected = nltk_corpus(preds, target, weights, method)
            except (AssertionError, IndexError):  # method6 without trigram (precision): NLTK raises, so do we
                assert method == "method6"
                with pytest.raises(ValueError, match="method6"):
                    bleu_score(preds, target, mode="nltk", weights=weights, smooth=method)
                continue
            got = bleu_score(preds, target, mode="nltk", weights=weights, smooth=method)
            assert_close(got, expected, 1e-9, what=f"{method} {weights} seed {seed}")


def test_nltk_sentence_parity() -> None:
    preds, target = corpus(60, 50)
    hyps, refs = nltk_tokens(preds, target)
    for k in (0, 1, 2, 3, 4, 5, 7):
        for weights in NLTK_WEIGHTS[:3]:
            function = getattr(SmoothingFunction(), f"method{k}")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = [sentence_bleu(r, h, weights=weights, smoothing_function=function)
                            for h, r in zip(hyps, refs)]
            got = bleu_score(preds, target, mode="nltk", weights=weights, smooth=f"method{k}", reduction="none")
            assert_close(got, expected, 1e-9, what=f"method{k} {weights}")


def _nltk_or_error(function, *args, **kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return function(*args, **kwargs)
    except (AssertionError, IndexError, ZeroDivisionError, ValueError) as error:
        return type(error)


def _zero_match_corpus(rng: random.Random, size: int) -> tuple[list[str], list[list[str]]]:
    """Short sentences over 8 words: copies, random ones, no unigram match at all (other words), empty hypotheses."""
    words = "a b c d e f g h".split()

    def sentence(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n))

    preds, target = [], []
    for _ in range(size):
        refs = [sentence(rng.randint(0, 9)) for _ in range(rng.randint(1, 3))]
        kind = rng.random()
        if kind < 0.25:
            pred = " ".join(rng.choice("xyz") for _ in range(rng.randint(0, 6)))
        elif kind < 0.45:
            pred = refs[0]
        else:
            pred = sentence(rng.randint(0, 9))
        preds.append(pred)
        target.append(refs)
    return preds, target


@pytest.mark.parametrize("method", [f"method{k}" for k in range(8)])
def test_nltk_every_method_and_weight_length_with_zero_match_sentences(method: str) -> None:
    """Methods 0–7 × 1–4 weights (uniform and random) on short random data with sentences that match no unigram:
    sentence_bleu and corpus_bleu's number where NLTK gives one; where NLTK raises (method 6), we raise — at sentence
    level naming exactly the sentences NLTK refuses."""
    rng = random.Random(method)
    function = getattr(SmoothingFunction(), method)
    refused_somewhere = returned_zero = 0
    for length in range(1, 5):
        for trial in range(8):
            weights = (1 / length,) * length if trial % 2 else tuple(rng.random() for _ in range(length))
            preds, target = _zero_match_corpus(rng, rng.randint(1, 12))
            hyps, refs = nltk_tokens(preds, target)
            expected = _nltk_or_error(corpus_bleu, refs, hyps, weights=weights, smoothing_function=function)
            options = {"mode": "nltk", "weights": weights, "smooth": method}
            if isinstance(expected, type):
                with pytest.raises(ValueError, match=r"method6' cannot score this corpus"):
                    bleu_score(preds, target, **options)
            else:
                assert_close(bleu_score(preds, target, **options), expected, 1e-9, what=f"{method} {weights}")
            sentences = [_nltk_or_error(sentence_bleu, r, h, weights=weights, smoothing_function=function)
                         for h, r in zip(hyps, refs)]
            refused = [i for i, value in enumerate(sentences) if isinstance(value, type)]
            if refused:
                refused_somewhere += 1
                with pytest.raises(ValueError, match="method6") as caught:
                    bleu_score(preds, target, reduction="none", **options)
                assert caught.value.sentences == tuple(refused[:5])
                assert caught.value.refused == len(refused)
                assert f"preds[{refused[0]}]" in str(caught.value)
                kept = [i for i in range(len(preds)) if i not in refused]
                preds, target = [preds[i] for i in kept], [target[i] for i in kept]
                sentences = [sentences[i] for i in kept]
            got = bleu_score(preds, target, reduction="none", **options)
            assert_close(got, sentences, 1e-9, what=f"{method} {weights}")
            returned_zero += sum(1 for value in sentences if value == 0)
    assert returned_zero > 0
    assert (refused_somewhere > 0) == (method == "method6")


def test_nltk_method6_short_weights_without_unigram_match_is_zero() -> None:
    """Fewer than 3 weights: NLTK returns 0 when no unigram matches (before smoothing) and fails otherwise."""
    smoothing = SmoothingFunction().method6
    for weights in ((1.0,), (0.5, 0.5)):
        assert sentence_bleu([["a", "b"]], ["x", "y"], weights=weights, smoothing_function=smoothing) == 0
        assert bleu_score(["x y"], [["a b"]], mode="nltk", weights=weights, smooth="method6").item() == 0
        assert bleu_score(["x y", ""], [["a b"], ["c"]], mode="nltk", weights=weights, smooth="method6",
                          reduction="none").tolist() == [0.0, 0.0]
        with pytest.raises(IndexError):
            sentence_bleu([["a", "b"]], ["a", "y"], weights=weights, smoothing_function=smoothing)
        with pytest.raises(ValueError, match=r"preds\[1\] \(1 of 2 sentences\).*IndexError"):
            bleu_score(["x y", "a y"], [["a b"], ["a b"]], mode="nltk", weights=weights, smooth="method6",
                       reduction="none")


def test_nltk_method6_module_names_the_sample_among_all_updates() -> None:
    metric = gpumetrics.BLEUScore(mode="nltk", smooth="method6", reduction="none")
    metric.update(["a b c d", "x"], [["a b c d"], ["y"]])
    with pytest.raises(ValueError, match=r"preds\[1\] \(1 of 2 sentences\).*samples: 3\.") as caught:
        metric.update(["a b c d", "a b x d"], [["a b c d"], ["a b c d"]])
    assert caught.value.sentences == (3,)
    metric.update(["a b c"], [["a b c"]])  # the refused batch left no trace
    assert_close(metric.compute(), [1.0, 0.0, 1.0], 1e-12)


def test_nltk_other_tokenizer_and_lowercase() -> None:
    preds, target = corpus(61, 40)
    hyps = sacrebleu_tokenize_batch(preds, "13a", lowercase=True)
    refs = [sacrebleu_tokenize_batch(r, "13a", lowercase=True) for r in target]
    expected = corpus_bleu(refs, hyps, smoothing_function=SmoothingFunction().method1)
    got = bleu_score(preds, target, mode="nltk", tokenize="13a", lowercase=True, smooth="method1")
    assert_close(got, expected, 1e-9)


# ------------------------------------------------------------------------------------------------ module, DDP
def batches_of(preds, target, sizes):
    out, start = [], 0
    for size in sizes:
        out.append((preds[start: start + size], target[start: start + size]))
        start += size
    return out


def test_module_sacrebleu_corpus_ddp() -> None:
    preds, target = corpus(70, 45)
    check_metric(gpumetrics.BLEUScore, bleu_score, lambda p, t: sacrebleu_corpus(p, t),
                 batches_of(preds, target, [1, 20, 24]))


def test_module_nltk_method7_ddp() -> None:
    # method7 reads the last sample: the module keeps it across batches and ranks
    preds, target = corpus(71, 30)
    preds[-1], target[-1] = "one two three four five six", ["one two three four five six", "one two"]
    preds[6], target[6] = "seven eight nine ten eleven", ["seven eight nine ten twelve"]
    assert nltk_corpus(preds, target, (0.5, 0.3, 0.2), "method7") != nltk_corpus(preds[:7], target[:7], (0.5, 0.3, 0.2),
                                                                               "method7")
    check_metric(gpumetrics.BLEUScore, bleu_score, lambda p, t: nltk_corpus(p, t, (0.5, 0.3, 0.2), "method7"),
                 batches_of(preds, target, [7, 11, 12]),
                 metric_kwargs={"mode": "nltk", "weights": (0.5, 0.3, 0.2), "smooth": "method7"})


def test_module_sentence_scores_ddp() -> None:
    preds, target = corpus(72, 30)

    def reference(p, t):
        metric = BLEU(tokenize="intl", effective_order=True)
        return [metric.sentence_score(h, refs).score / 100 for h, refs in zip(p, t)]

    check_metric(gpumetrics.BLEUScore, bleu_score, reference, batches_of(preds, target, [4, 26]),
                 metric_kwargs={"tokenize": "intl", "effective_order": True, "reduction": "none"})


def test_module_mean_without_ddp_and_task_registry() -> None:
    preds, target = corpus(73, 20)
    kwargs = {"reduction": "mean", "smooth": "floor"}
    metric = gpumetrics.BLEUScore(**kwargs)
    metric.update(preds[:5], target[:5])
    metric.update(preds[5:], target[5:])
    assert_close(metric.compute(), bleu_score(preds, target, **kwargs), 1e-12)
    assert gpumetrics.BLEUScore().compute().item() == 0.0  # no data: 0, not NaN
    built = get_metric("bleu").build({"mode": "nltk", "smooth": "method3"})
    assert isinstance(built, gpumetrics.BLEUScore) and "mode:nltk" in built.signature()
    assert "smooth:floor[0.10]" in gpumetrics.BLEUScore(smooth="floor").signature()


# ------------------------------------------------------------------------------------------------ bad input
def test_empty_hypotheses_score_zero_not_nan() -> None:
    for mode in ("sacrebleu", "nltk"):
        score = bleu_score(["", ""], [["a b c"], ["d"]], mode=mode)
        assert score.item() == 0.0
        per_sample = bleu_score(["", "a b c d"], [["a b c"], ["a b c d"]], mode=mode, reduction="none")
        assert per_sample.tolist()[0] == 0.0 and math.isclose(per_sample.tolist()[1], 1.0)
    assert bleu_score(["x"], [[""]]).item() == 0.0
    assert bleu_score([], []).item() == 0.0


@pytest.mark.parametrize(
    "preds, target, kwargs, error, match",
    [
        (["a", "b"], [["a"]], {}, ValueError, "`preds` and `target`"),
        (["a"], [[]], {}, ValueError, r"`target\[0\]`"),
        ([1], [["a"]], {}, TypeError, r"`preds\[0\]`"),
        (["a"], [[None]], {}, TypeError, r"`target\[0\]\[0\]`"),
        (None, [["a"]], {}, TypeError, "`preds`"),
        (["a"], 5, {}, TypeError, "`target`"),
        (["a"], [["a"]], {"mode": "moses"}, ValueError, "`mode`"),
        (["a"], [["a"]], {"tokenize": "spm"}, ValueError, "`tokenize`"),
        (["a"], [["a"]], {"smooth": "method1"}, ValueError, "`smooth`"),
        (["a"], [["a"]], {"mode": "nltk", "smooth": "exp"}, ValueError, "`smooth`"),
        (["a"], [["a"]], {"weights": (0.5, 0.25)}, ValueError, "`weights`"),
        (["a"], [["a"]], {"mode": "nltk", "weights": ()}, ValueError, "`weights`"),
        (["a"], [["a"]], {"mode": "nltk", "weights": (0.5, -1)}, ValueError, "`weights`"),
        (["a"], [["a"]], {"mode": "nltk", "weights": "0.5"}, TypeError, "`weights`"),
        (["a"], [["a"]], {"mode": "nltk", "effective_order": True}, ValueError, "`effective_order`"),
        (["a"], [["a"]], {"mode": "nltk", "smooth": "method6", "weights": (0.5, 0.5)}, ValueError, "method6"),
        (["a"], [["a"]], {"mode": "nltk", "smooth_value": 0.2}, ValueError, "`smooth_value`"),
        (["a"], [["a"]], {"smooth": "exp", "smooth_value": 0.2}, ValueError, "`smooth_value`"),
        (["a"], [["a"]], {"smooth": "floor", "smooth_value": float("nan")}, ValueError, "`smooth_value`"),
        (["a"], [["a"]], {"reduction": "max"}, ValueError, "`reduction`"),
        (["a"], [["a"]], {"lowercase": "yes"}, TypeError, "`lowercase`"),
    ],
)
def test_bad_input(preds, target, kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        bleu_score(preds, target, **kwargs)


def test_module_rejects_bad_options_and_inputs() -> None:
    with pytest.raises(ValueError, match="`mode`"):
        gpumetrics.BLEUScore(mode="x")
    metric = gpumetrics.BLEUScore()
    with pytest.raises(ValueError, match="`preds` and `target`"):
        metric.update(["a"], [["a"], ["b"]])


def test_result_device_and_dtype() -> None:
    score = bleu_score(["a b c d"], [["a b c d"]], device=torch.device("cpu"))
    assert score.dtype == torch.float64 and math.isclose(score.item(), 1.0, abs_tol=1e-12)


# ------------------------------------------------------------------------------------------------ wide random parity
WIDE_PIECES = [
    "the", "Cat", "42", "3.14", "1,000.", "-5", "5-", "x-ray", "don't", "U.S.A.", "кошка", "Ёж", "北京", "我爱猫。", "🐈‍⬛",
    "e\u0301", "Z̤͂", "ß", "İstanbul", "K\u212a", "ﬁ", "שלום", "مرحبا", "हिन्दी", "\u200b", "\u200d", ",", ".", "!",
    "«»",
    "—", "&amp;", "&quot;", "&lt;", "<skipped>", "€5", "$3.50", "°", "(a)", "...", "a.b", ",5", ".5", "x,",
]
WIDE_SEPARATORS = [" ", " ", "  ", "\t", "", "\n", "\r", "\r\n", "\u2028", "\u00a0", "\u3000", "\x0b", "\x1c", "\x85"]


def wide_text(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.06:
        return rng.choice(["", " ", "\t", "\n", "\u00a0", "\u3000", "...", "!?", "\u200b"])
    if kind < 0.12:  # random code points: controls, punctuation, symbols, marks, CJK, astral, lone surrogates
        return "".join(chr(rng.choice([rng.randint(0, 0x7F), rng.randint(0x80, 0x33FF), rng.randint(0x3400, 0xFFFF),
                                       rng.randint(0x10000, 0x10FFFF)])) for _ in range(rng.randint(1, 12)))
    text = rng.choice(WIDE_PIECES)
    for _ in range(rng.randint(0, 11)):
        text += rng.choice(WIDE_SEPARATORS) + rng.choice(WIDE_PIECES)
    return text


def wide_corpus(rng: random.Random, size: int) -> tuple[list[str], list[list[str]]]:
    preds, target = [], []
    for _ in range(size):
        refs = [wide_text(rng) for _ in range(rng.randint(1, 4))]
        words = rng.choice(refs).split(" ")
        rng.shuffle(words) if rng.random() < 0.3 else None
        preds.append(" ".join(w for w in words if rng.random() < 0.85) if rng.random() < 0.7 else wide_text(rng))
        target.append(refs)
    return preds, target


def test_wide_random_parity_every_option() -> None:
    """Seeded rounds of random options on Unicode / whitespace / punctuation soup: corpus, sentence and module
    (several updates) against sacrebleu, corpus and sentence against NLTK."""
    rng = random.Random(2024)
    for _ in range(40):
        preds, target = wide_corpus(rng, rng.choice([1, 2, 5, 12]))
        tokenize, lowercase = rng.choice(TOKENIZERS), rng.random() < 0.3
        smooth = rng.choice(("exp", "floor", "add-k", "none"))
        value = rng.choice([None, 0, 0.5, 2]) if smooth in ("floor", "add-k") else None
        order = rng.choice([1, 2, 4, 4, 6])
        effective_order = rng.random() < 0.4
        kwargs = {"tokenize": tokenize, "smooth": smooth, "smooth_value": value, "lowercase": lowercase,
                  "effective_order": effective_order, "weights": [1 / order] * order}
        what = f"{kwargs} {preds!r} {target!r}"
        expected = sacrebleu_corpus(preds, target, tokenize, smooth, value, lowercase, effective_order, order)
        assert_close(bleu_score(preds, target, **kwargs), expected, 1e-9, what=what)
        metric, cut = gpumetrics.BLEUScore(**kwargs), rng.randint(0, len(preds))
        metric.update(preds[:cut], target[:cut])
        metric.update(preds[cut:], target[cut:])
        assert_close(metric.compute(), expected, 1e-9, what=what)
        sacre = BLEU(tokenize=tokenize, smooth_method=smooth, smooth_value=value, lowercase=lowercase,
                     effective_order=effective_order, max_ngram_order=order)
        sentences = [sacre.sentence_score(p, refs).score / 100 for p, refs in zip(preds, target)]
        assert_close(bleu_score(preds, target, reduction="none", **kwargs), sentences, 1e-9, what=what)

        weights = rng.choice([(0.25,) * 4, (0.5, 0.5), (1.0,), (0.1, 0.2, 0.3, 0.4), (0.0, 1.0), (0.2,) * 5])
        method = rng.choice([f"method{k}" for k in (0, 1, 2, 3, 4, 5, 7)])
        hyps = sacrebleu_tokenize_batch(preds, tokenize, lowercase)
        refs = [sacrebleu_tokenize_batch(r, tokenize, lowercase) for r in target]
        function = getattr(SmoothingFunction(), method)
        nltk_kwargs = {"mode": "nltk", "tokenize": tokenize, "lowercase": lowercase, "weights": weights,
                       "smooth": method}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = corpus_bleu(refs, hyps, weights=weights, smoothing_function=function)
            sentences = [sentence_bleu(r, h, weights=weights, smoothing_function=function) for h, r in zip(hyps, refs)]
        assert_close(bleu_score(preds, target, **nltk_kwargs), expected, 1e-9, what=f"{nltk_kwargs} {what}")
        assert_close(bleu_score(preds, target, reduction="none", **nltk_kwargs), sentences, 1e-9,
                     what=f"{nltk_kwargs} {what}")


def test_13a_when_every_separator_candidate_occurs() -> None:
    """Regression: when the batch holds every control character the fast path could use to join lines, the
    line-by-line fallback skipped 13a's unescaping, ``<skipped>`` removal and ``-\\n`` joining."""
    lines = ["a.b " + "".join(SEPARATOR_CANDIDATES) + " x,y&amp;", "", "Hello, \x01world!",
             "a-\nb <skipped>&QUOT;q&quot; &lt;5&gt;"]
    reference = _get_tokenizer("13a")()
    for lowercase in (False, True):
        expected = [reference((line.lower() if lowercase else line).rstrip()).split() for line in lines]
        assert sacrebleu_tokenize_batch(lines, "13a", lowercase) == expected
        batch = get_tokenizer("13a", lowercase=lowercase).encode(lines)
        assert batch.lengths.tolist() == [len(tokens) for tokens in expected]
        assert batch.vocab_size == len({token for tokens in expected for token in tokens})
        preds, target = lines, [[line, lines[-1]] for line in reversed(lines)]
        assert_close(bleu_score(preds, target, lowercase=lowercase),
                     sacrebleu_corpus(preds, target, lowercase=lowercase), 1e-9)


@pytest.mark.skipif(shutil.which("java") is None, reason="pycocoevalcap's PTBTokenizer needs java")
def test_coco_mode_supplementary_digits_equal_cocoevalcap():
    # pycocoevalcap's Java PTB tokenizer deletes supplementary-plane digits ("\U0001d7d9", "\U000104a0"): the port
    # kept them as number tokens, so a caption holding one scored a different BLEU in mode="coco"
    import contextlib
    import io

    Bleu = import_oracle("pycocoevalcap.bleu.bleu").Bleu
    PTBTokenizer = import_oracle("pycocoevalcap.tokenizer.ptbtokenizer").PTBTokenizer

    preds = ["two \U0001d7d9 dogs run on the grass", "a cat \U000104a0 sits on a mat", "fig.", "no. 5 people"]
    target = [["two dogs run on the grass"], ["a cat sits on a mat \U0001d7d9"], ["\U0001d7d9 fig"], ["no 5 people"]]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        tokenizer = PTBTokenizer()
        gts = tokenizer.tokenize({i: [{"caption": r} for r in refs] for i, refs in enumerate(target)})
        res = tokenizer.tokenize({i: [{"caption": p}] for i, p in enumerate(preds)})
        score, scores = Bleu(4).compute_score(gts, res, verbose=0)
    assert abs(bleu_score(preds, target, mode="coco").item() - score[-1]) <= 1e-12
    assert_close(bleu_score(preds, target, mode="coco", reduction="none"),
                 torch.tensor(scores[-1], dtype=torch.float64), atol=1e-12)
