import random

import pytest
import torch
from torchmetrics.functional.text import squad as torchmetrics_squad

import gpumetrics
from gpumetrics.functional import exact_match, string_accuracy, token_f1
from gpumetrics.text.tokenize.answers import squad_tokens
from testkit import qa_reference as ref
from tests.helpers.harness import assert_close, check_metric
from testkit.text_data import qa_batch, qa_batches

SIZES = [5, 0, 1, 23, 11]  # includes an empty and a single-sample batch


def _kw(fn, **fixed):
    return lambda preds, target: fn(preds, target, **fixed)


@pytest.mark.ddp
def test_token_f1_squad_matches_official_formula_module_functional_ddp():
    check_metric(gpumetrics.TokenF1, token_f1, ref.squad_f1, qa_batches(0, SIZES), {"preset": "squad"})


@pytest.mark.ddp
def test_token_f1_aij2022_matches_independent_implementation_and_ddp():
    check_metric(gpumetrics.TokenF1, token_f1, ref.aij2022_f1, qa_batches(1, SIZES), {"preset": "aij2022"})


@pytest.mark.ddp
def test_exact_match_aij2022_matches_independent_implementation_and_ddp():
    check_metric(gpumetrics.ExactMatch, exact_match, ref.aij2022_exact, qa_batches(2, SIZES), {"preset": "aij2022"})


def test_exact_match_squad_and_raw():
    check_metric(gpumetrics.ExactMatch, exact_match, ref.squad_exact, qa_batches(3, SIZES), {"preset": "squad"},
                 ddp=False)
    check_metric(gpumetrics.ExactMatch, exact_match, ref.raw_accuracy, qa_batches(4, SIZES), {"preset": "raw"},
                 ddp=False)


@pytest.mark.ddp
def test_string_accuracy_matches_raw_equality_and_ddp():
    rng = random.Random(5)
    batches = []
    for size in SIZES:
        preds, target = qa_batch(rng, size, max_refs=1)
        batches.append((preds, [golds[0] for golds in target]))  # HTR: one gold string per line
    check_metric(gpumetrics.StringAccuracy, string_accuracy, ref.raw_accuracy, batches)


def test_large_batch_matches_the_formulas():
    rng = random.Random(100)
    preds, target = qa_batch(rng, 2000)
    assert_close(token_f1(preds, target), ref.squad_f1(preds, target), what="squad f1")
    assert_close(exact_match(preds, target), ref.squad_exact(preds, target), what="squad em")
    assert_close(token_f1(preds, target, preset="aij2022"), ref.aij2022_f1(preds, target), what="aij f1")
    assert_close(exact_match(preds, target, preset="aij2022"), ref.aij2022_exact(preds, target), what="aij em")


def test_squad_preset_agrees_with_torchmetrics_squad_v1_where_answers_are_non_empty():
    """torchmetrics implements the SQuAD v1.1 script: same normalisation and F1; it differs only for answers that
    normalise to nothing (v1.1 scores empty vs empty as 0), so those samples are left out here."""
    rng = random.Random(7)
    preds, target = qa_batch(rng, 600)
    keep = [i for i, (p, golds) in enumerate(zip(preds, target)) if squad_tokens(p) and all(map(squad_tokens, golds))]
    preds = [preds[i] for i in keep]
    target = [target[i] for i in keep]
    assert len(preds) > 100
    expected = torchmetrics_squad(
        [{"prediction_text": p, "id": str(i)} for i, p in enumerate(preds)],
        [{"answers": {"answer_start": [0] * len(g), "text": g}, "id": str(i)} for i, g in enumerate(target)],
    )
    assert_close(token_f1(preds, target) * 100, expected["f1"], atol=1e-4)
    assert_close(exact_match(preds, target) * 100, expected["exact_match"], atol=1e-4)


def test_edge_cases_are_defined():
    assert token_f1([""], [""]).item() == 1.0  # empty vs empty
    assert token_f1(["a the"], ["an"]).item() == 1.0  # both normalise to nothing
    assert token_f1([""], ["cat"]).item() == 0.0
    assert token_f1(["cat"], [["", "dog", "cat"]]).item() == 1.0  # empty gold dropped, max over the rest
    assert token_f1([], []).item() == 0.0  # no sample: 0, not NaN
    assert gpumetrics.TokenF1().compute().item() == 0.0
    assert token_f1("cat sat", "cat").item() == pytest.approx(2 / 3)  # a bare string is a batch of one
    assert token_f1(["Кошки"], ["кошка"], preset="aij2022").item() == 1.0  # lemmas
    assert token_f1(["Ответ: c"], ["C"], preset="aij2022").item() == pytest.approx(2 / 3)  # F1 > 0.5: kept
    assert token_f1(["Ответ - вариант c"], ["C"], preset="aij2022").item() == 1.0  # F1 = 0.5: letter fallback
    assert token_f1(["the answer is d"], ["d"], preset="aij2022").item() == 0.0  # first a–e letter is 'e'
    assert exact_match(["x-5"], ["x-5"], preset="aij2022").item() == 1.0  # hyphen kept
    assert exact_match(["x5"], ["x-5"], preset="aij2022").item() == 0.0
    per_sample = token_f1(["cat", "dog"], ["cat", "cat"], reduction="none")
    assert per_sample.tolist() == [1.0, 0.0]
    assert token_f1(["cat", "dog"], ["cat", "cat"], reduction="sum").item() == 1.0


def test_f1_rounds_as_the_scripts_2pr_over_p_plus_r():
    """2PR/(P+R) and 2c/(p+g) differ in the last bit for 4 common tokens of 5 and 11: the scripts' 0.5000000000000001
    is above AIJ-2022's ``F1 <= 0.5`` threshold, so no letter fallback (2c/(p+g) = 0.5 fell back to "b": 0)."""
    pred, gold = "1 2 3 4 b", "1 2 3 4 5 6 7 8 9 10 11"
    assert token_f1([pred], [gold], preset="aij2022").item() == ref.aij2022_f1([pred], [gold]) == 0.5000000000000001
    assert token_f1([gold], [pred], preset="aij2022").item() == 0.5000000000000001
    assert token_f1([pred], [gold]).item() == ref.squad_f1([pred], [gold]) == 0.5000000000000001
    rng = random.Random(11)
    preds, target = qa_batch(rng, 500)
    per_sample = token_f1(preds, target, reduction="none").tolist()
    assert per_sample == [ref.squad_f1([p], [g]) for p, g in zip(preds, target)]  # bit for bit


def test_bad_inputs_name_the_argument():
    with pytest.raises(TypeError, match="`preds`"):
        token_f1(None, ["a"])
    with pytest.raises(TypeError, match=r"`preds\[1\]`"):
        token_f1(["a", 3], ["a", "b"])
    with pytest.raises(TypeError, match=r"`target\[0\]`"):
        exact_match(["a"], [None])
    with pytest.raises(ValueError, match="`preds` and `target`"):
        string_accuracy(["a", "b"], ["a"])
    with pytest.raises(ValueError, match=r"`target\[0\]`"):
        token_f1(["a"], [[]])
    with pytest.raises(ValueError, match="`preset`"):
        gpumetrics.TokenF1(preset="raw")
    with pytest.raises(ValueError, match="`reduction`"):
        token_f1(["a"], ["a"], reduction="max")


def test_states_live_on_the_metric_device_and_are_float64():
    metric = gpumetrics.TokenF1()
    metric.update(["a cat"], ["cat"])
    assert metric.score_sum.dtype == torch.float64 and metric.score_sum.device == metric.device
    import torchmetrics

    # the base is a torchmetrics Metric by registration (ABC), no longer by inheritance (the MRO)
    assert isinstance(metric, torchmetrics.Metric) and issubclass(gpumetrics.Metric, torchmetrics.Metric)


# ---------------------------------------------------------------------------------------------------- lone surrogates
_SURROGATE_WORDS = ["\ud800", "\udfff", "a\udc00b", "кошки\ud83d", "\ud83d\ude00x\udc80"]  # lone halves, no pairs


def _with_surrogates(rng: random.Random, text: str) -> str:
    words = text.split() + [rng.choice(_SURROGATE_WORDS) for _ in range(rng.randint(0, 2))]
    rng.shuffle(words)
    return " ".join(words)


def test_aij2022_lone_surrogates_in_preds_and_golds_are_plain_tokens():
    # pymorphy3's dictionary raised UnicodeEncodeError on these; now a token it cannot encode passes through as is
    preds = ["\ud800", "кошки \udfff", "a\udc00b", "\ud83d", "Кошки", ""]
    target = [["\ud800"], ["кошка \udfff"], ["a\udc00b c"], ["\ude00"], ["кошки\ud800"], ["\udfff"]]
    expected = torch.tensor([1.0, 1.0, 2 / 3, 0.0, 0.0, 0.0], dtype=torch.float64)
    assert torch.equal(token_f1(preds, target, preset="aij2022", reduction="none"), expected)
    assert torch.equal(exact_match(preds, target, preset="aij2022", reduction="none"), (expected == 1).double())
    assert token_f1(preds, target, preset="aij2022").item() == pytest.approx(ref.aij2022_f1(preds, target))
    metric = gpumetrics.ExactMatch(preset="aij2022")
    metric.update(preds, target)
    assert metric.compute().item() == pytest.approx(ref.aij2022_exact(preds, target))


def test_aij2022_nameless_letters_are_plain_tokens_where_pymorphy_raises():
    # pymorphy3 (as the organisers' pymorphy2) calls unicodedata.name on the letters of a word it does not know until
    # one is not Latin, and Tangut ideographs have no name: "ValueError: no such name" came out of token_f1,
    # exact_match and vqa_accuracy(lang="ru") for such words; they are now plain tokens, as lone surrogates are
    import pymorphy3

    tangut = "\U00017000"
    for word in (tangut, "a" + tangut, "\U00018d08"):
        with pytest.raises(ValueError, match="no such name"):
            pymorphy3.MorphAnalyzer(lang="ru").parse(word)
    preds = [tangut, "Три A" + tangut, "x" + tangut + " кошки", "", "кошки" + tangut]
    target = [[tangut], ["3 a" + tangut], ["кошка"], [tangut], ["кошки" + tangut]]
    expected = torch.tensor([1.0, 1.0, 2 / 3, 0.0, 1.0], dtype=torch.float64)
    assert torch.equal(token_f1(preds, target, preset="aij2022", reduction="none"), expected)
    assert torch.equal(exact_match(preds, target, preset="aij2022", reduction="none"), (expected == 1).double())
    answers = gpumetrics.functional.vqa_accuracy([tangut + "!", "Три A" + tangut], [tangut, "3 a" + tangut], "ru",
                                                 reduction="none")
    assert answers.tolist() == [1.0, 1.0]


def test_aij2022_scores_surrogate_only_text_as_squad_does():
    # non-empty texts of words with no punctuation, article, choice letter or dictionary entry: both presets see
    # the same tokens (empty golds differ by design: squad drops them, aij2022 keeps them)
    rng = random.Random(7)
    words = ["\ud800", "\udfff", "\udc00\udc01", "9\ud801", "ж\udbff"]
    preds = [" ".join(rng.choices(words, k=rng.randint(1, 4))) for _ in range(200)]
    target = [[" ".join(rng.choices(words, k=rng.randint(1, 4))) for _ in range(rng.randint(1, 3))] for _ in range(200)]
    for fn in (token_f1, exact_match):
        squad = fn(preds, target, preset="squad", reduction="none")
        assert torch.equal(fn(preds, target, preset="aij2022", reduction="none"), squad), fn.__name__


def test_aij2022_random_unicode_with_surrogates_matches_the_oracle():
    rng = random.Random(8)
    preds, target = qa_batch(rng, 400)
    preds = [_with_surrogates(rng, p) for p in preds]
    target = [[_with_surrogates(rng, g) for g in golds] for golds in target]
    assert_close(token_f1(preds, target, preset="aij2022"), ref.aij2022_f1(preds, target), what="aij f1")
    assert_close(exact_match(preds, target, preset="aij2022"), ref.aij2022_exact(preds, target), what="aij em")
    assert_close(token_f1(preds, target), ref.squad_f1(preds, target), what="squad f1")  # squad already coped


def test_aij2022_number_words_and_raw_choice_letter_as_the_organisers():
    """Issue 14: the organisers map number-word lemmas to digits and search [abcde] in the raw prediction."""
    assert token_f1(["3 кошки"], ["три кошки"], preset="aij2022").item() == 1.0
    assert exact_match(["трёх"], ["3"], preset="aij2022").item() == 1.0
    assert exact_match(["никакого"], ["0"], preset="aij2022").item() == 1.0
    assert exact_match(["Ответ: B"], ["b"], preset="aij2022").item() == 0.0  # "B" is no choice letter
    assert exact_match(["Ответ: b"], ["b"], preset="aij2022").item() == 1.0
