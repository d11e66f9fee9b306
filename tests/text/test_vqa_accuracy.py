"""AIJ-2021 VQA accuracy (vqaEval.py): the normalisation rules one by one, the module, bad input. Parity with the
official script on random data is tests/test_suites.py (golden numbers in tests/data/aij/golden.json)."""

import pytest
import torch

from gpumetrics import VQAAccuracy
from gpumetrics.functional import vqa_accuracy
from gpumetrics.text.tokenize.answers import vqa_eval_answer

CASES = [
    # (prediction, lang, normal form) — what the official processPunctuation + processDigitArticle give
    ("yes", "en", "yes"),
    ("  Yes\n", "en", "yes"),
    ("The dog.", "en", "dog"),
    ("an apple, a pear", "en", "apple pear"),  # ", " touches a space: deleted; articles dropped
    ("red/blue", "en", "red blue"),  # not touching a space: replaced by a space
    ("red /blue", "en", "red blue"),  # " /" touches a space: deleted
    ("1,000 dogs-x", "en", "1000 dogsx"),  # digit,digit anywhere: every mark deleted
    ("3.5", "en", "3.5"),  # a period before a digit stays
    ("end." + "." * 40, "en", "end" + "." * 9),  # at most 32 periods go (re.UNICODE passed as count)
    ("Two", "en", "2"),
    ("none", "en", "0"),
    ("eleven", "en", "eleven"),
    ("dont", "en", "don't"),
    ("Im", "en", "im"),  # the table's "Im" never matches a lower-cased word
    ("it's", "en", "it's"),  # an apostrophe is no VQA punctuation
    ("Трёх!", "ru", "3"),
    ("две кошки", "ru", "2 кошка"),
    ("никаких", "ru", "0"),
    ("Кошки, собаки", "ru", "кошка собака"),
    ("the dog", "ru", "the dog"),  # Russian rules: no article removal
]


@pytest.mark.parametrize("text,lang,expected", CASES)
def test_normal_form(text, lang, expected):
    assert vqa_eval_answer(text, lang) == expected


# Word forms whose lemma differs between pymorphy3's own 2022 dictionary and the scripts' 2020 one (pymorphy2-dicts-ru
# 2.4.417127.4579844), which the library reads: (prediction, the script's normal form, pymorphy3's with its 2022
# dictionary). The script's values were obtained by running the organisers' vqaEval.py (pymorphy2 0.9.1) on these
# predictions.
LEMMAS_OF_THE_2020_DICTIONARY = [
    ("каковы", "каков", "каковой"),
    ("Таково.", "таков", "таковой"),
    ("сие", "сие", "сей"),
    ("груднички", "грудничка", "грудничок"),  # a form added to the dictionary after 2020
    ("бзззв", "бзззвый", "бзззва"),  # in neither dictionary: the lemma is guessed from the ending
]


@pytest.mark.parametrize("text,official,newer_dictionary", LEMMAS_OF_THE_2020_DICTIONARY)
def test_lemmas_are_the_scripts_where_the_newer_dictionary_differs(text, official, newer_dictionary):
    assert vqa_eval_answer(text, "ru") == official != newer_dictionary
    assert vqa_accuracy([text], [official], "ru").item() == 1.0  # the script scores 1.0
    assert vqa_accuracy([text], [newer_dictionary], "ru").item() == 0.0


def test_gold_answers_are_compared_raw():
    preds = ["the dog", "Dog", "2", "two"]
    target = [["the dog"], ["Dog"], "2", ["two", "2"]]
    assert vqa_accuracy(preds, target, "en", reduction="none").tolist() == [0.0, 0.0, 1.0, 1.0]


def test_module_accumulates_and_takes_one_language_per_question():
    metric = VQAAccuracy()
    metric.update(["Two.", "Три"], ["2", "3"], lang=["en", "ru"])
    metric.update(["three"], ["3"], lang="ru")  # "three" is not a Russian number word
    assert metric.compute().item() == pytest.approx(2 / 3)
    assert metric.signature().startswith("vqa_accuracy|preset:aij2021")
    metric.persistent(True)
    clone = VQAAccuracy()
    clone.persistent(True)
    clone.load_state_dict(metric.state_dict())
    assert torch.equal(clone.compute(), metric.compute())


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match=r"`lang\[1\]` must be one of en, ru, got 'de'"):
        vqa_accuracy(["a", "b"], ["a", "b"], ["en", "de"])
    with pytest.raises(ValueError, match="lang"):
        vqa_accuracy(["a", "b"], ["a", "b"], ["en"])
    with pytest.raises(TypeError, match="preds"):
        vqa_accuracy([1], ["a"])
    with pytest.raises(ValueError, match="reduction"):
        vqa_accuracy(["a"], ["a"], reduction="max")


@pytest.mark.ddp
def test_module_functional_official_and_ddp():
    """Module == functional == the official script's number (golden, tests/data/aij) on the random AIJ-2021 VQA
    files; merge_state, state_dict and 2-process DDP (uneven split) as every metric."""
    import json
    from pathlib import Path

    from tests.helpers.harness import check_metric

    data = Path(__file__).resolve().parents[1] / "data" / "aij"
    truth = json.loads((data / "2021" / "vqa" / "true.json").read_text(encoding="utf-8"))
    preds = json.loads((data / "2021" / "vqa" / "pred.json").read_text(encoding="utf-8"))
    official = json.loads((data / "golden.json").read_text(encoding="utf-8"))["2021/vqa"]["official"]
    keys = list(truth)
    rows = ([preds[k] for k in keys], [truth[k]["answer"] for k in keys], [truth[k]["lang"] for k in keys])
    cuts = [0, 120, 121, 300]
    batches = [tuple(column[a:b] for column in rows) for a, b in zip(cuts, cuts[1:])]
    check_metric(VQAAccuracy, vqa_accuracy, lambda *_: torch.tensor(official, dtype=torch.float64), batches,
                 atol=1e-12)
