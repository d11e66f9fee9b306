"""METEOR modes "aij2022-caption" / "aij2022-vqa" (gpumetrics/text/meteor/aij2022.py) vs the official AIJ-2022 scripts.

The scripts cannot be installed (they download NLTK data and need a RuWordNet database): their numbers were produced
once, outside this repository, and stored with the data in data/meteor_aij2022_golden.json — its "note" says how.
That run lemmatised with pymorphy3's own 2022 dictionary standing in for the scripts' pymorphy2; the library now
reads the scripts' 2020 dictionary (test_russian_lemmas.py), and every golden value holds with both (checked).
"""

import json
from pathlib import Path

import pytest
import torch
from tests.helpers.oracles import import_oracle

import_oracle("nltk")
import_oracle("pymorphy3")
import_oracle("razdel")

from gpumetrics.text.meteor.aij2022 import (  # noqa: E402
    aij2022_caption_scores, aij2022_vqa_scores, caption_tokens, vqa_tokens, words_to_digits,
)
from gpumetrics.text.meteor.synonyms import DictSynonyms, NoSynonyms, RuWordNetSynonyms  # noqa: E402

GOLDEN = json.loads((Path(__file__).parent / "data" / "meteor_aij2022_golden.json").read_text(encoding="utf-8"))


class _Obj:
    def __init__(self, **fields):
        self.__dict__.update(fields)


class FakeRuWordNet:
    """ruwordnet.RuWordNet.get_senses over the golden file's senses — the object the scripts were run with."""

    def __init__(self, senses):
        self.senses = senses

    def get_senses(self, lemma):
        return [
            _Obj(synset=_Obj(hypernyms=[_Obj(title=t) for t in sense["hypernyms"]]),
                 derivations=[_Obj(name=n) for n in sense["derivations"]])
            for sense in self.senses.get(lemma.upper().strip(), [])
        ]


def _provider():
    return RuWordNetSynonyms(FakeRuWordNet(GOLDEN["senses"]))


@pytest.mark.parametrize("task, scores_fn", [("caption", aij2022_caption_scores), ("vqa", aij2022_vqa_scores)])
def test_equals_official_script_per_sample_and_mean(task, scores_fn):
    data = GOLDEN[task]
    got = scores_fn(data["preds"], data["target"], synonyms=_provider())
    assert got.dtype == torch.float64 and got.shape == (len(data["preds"]),)
    torch.testing.assert_close(got, torch.tensor(data["scores"], dtype=torch.float64), rtol=0, atol=1e-9)
    assert abs(got.mean().item() - data["mean"]) < 1e-9


@pytest.mark.parametrize("task, scores_fn", [("caption", aij2022_caption_scores), ("vqa", aij2022_vqa_scores)])
def test_golden_data_exercises_the_synonym_stage(task, scores_fn):
    data = GOLDEN[task]
    with_synonyms = scores_fn(data["preds"], data["target"], synonyms=_provider())
    without = scores_fn(data["preds"], data["target"], synonyms=NoSynonyms())
    assert int((with_synonyms != without).sum()) > 0


def test_batches_split_anywhere_give_the_same_scores():
    data = GOLDEN["vqa"]
    whole = aij2022_vqa_scores(data["preds"], data["target"], synonyms=_provider())
    parts = [aij2022_vqa_scores(data["preds"][k:k + 37], data["target"][k:k + 37], synonyms=_provider())
             for k in range(0, len(data["preds"]), 37)]
    torch.testing.assert_close(torch.cat(parts), whole, rtol=0, atol=0)


def test_words_to_digits_equals_wordtodigits():
    data = GOLDEN["wordtodigits"]
    assert [words_to_digits(text) for text in data["inputs"]] == data["outputs"]


def test_preprocessing_quirks():
    assert caption_tokens("Кот {и} «пёс»", False) == ("кот", "{", "и", "«", "пёс", "»")  # "{" survives, "}" does not
    assert caption_tokens("one cat", True) == ("1", "cat") and caption_tokens("one cat", False) == ("one", "cat")
    assert vqa_tokens("Кошки бежали!", False) == ("кошки", "бежать")  # the whole answer is one "word" for pymorphy
    assert vqa_tokens("двух", False) == ("2",) and vqa_tokens("two", False) == ("two",)  # English only in preds


def test_numeric_rule():
    scores = aij2022_vqa_scores(
        ["3", "10", "нет", "5кг 7", "0", "two", "1,000", "½"], ["5", "5", "5", "5", "0", "two", "1000", "½"],
        synonyms=NoSynonyms(),
    )
    expected = [3 / 5, 5 / 10, 0.0, 5 / 7, 1.0, 0.0, 1.0, 0.0]
    torch.testing.assert_close(scores, torch.tensor(expected, dtype=torch.float64), rtol=0, atol=1e-12)


def test_empty_gold_list_scores_zero_and_synonyms_from_a_mapping():
    scores = aij2022_caption_scores(["кот", "кот"], [[], ["кот"]], synonyms={})
    torch.testing.assert_close(scores, torch.tensor([0.0, 0.5], dtype=torch.float64))
    vqa = aij2022_vqa_scores(["кошка"], ["животное"], synonyms=DictSynonyms({"кошка": ["животное"]}))
    torch.testing.assert_close(vqa, torch.tensor([1.0], dtype=torch.float64))


@pytest.mark.parametrize("scores_fn", [aij2022_caption_scores, aij2022_vqa_scores])
def test_bad_inputs_name_the_argument(scores_fn):
    with pytest.raises(TypeError, match="preds"):
        scores_fn([1], ["a"], synonyms=NoSynonyms())
    with pytest.raises(TypeError, match=r"target\[0\]\[0\]"):
        scores_fn(["a"], [[1]], synonyms=NoSynonyms())
    with pytest.raises(ValueError, match="`preds` and `target`"):
        scores_fn(["a", "b"], ["a"], synonyms=NoSynonyms())
    with pytest.raises(TypeError, match="`synonyms`"):
        scores_fn(["a"], ["a"], synonyms=3)


def test_empty_batches():
    for scores_fn in (aij2022_caption_scores, aij2022_vqa_scores):
        assert scores_fn([], [], synonyms=NoSynonyms()).shape == (0,)


# ---------------------------------------------------------------------------------------------------- module, DDP
@pytest.mark.parametrize("task, ddp", [pytest.param("caption", True, marks=pytest.mark.ddp), ("vqa", False)])
def test_module_equals_the_official_mean(task, ddp):
    from gpumetrics import METEORScore
    from gpumetrics.functional import meteor_score
    from tests.helpers.harness import check_metric

    data = GOLDEN[task]
    n = len(data["preds"])
    cuts = [0, n // 3, n // 3 + 1, 2 * n // 3, n]
    batches = [(data["preds"][a:b], data["target"][a:b]) for a, b in zip(cuts, cuts[1:])]
    check_metric(
        METEORScore, meteor_score, lambda preds, target: data["mean"], batches,
        metric_kwargs={"mode": f"aij2022-{task}", "synonyms": _provider()}, check_forward=False, ddp=ddp,
    )
