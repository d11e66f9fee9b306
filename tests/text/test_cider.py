"""CIDEr-D against pycocoevalcap's ``Cider``, CIDEr against a direct implementation of Vedantam et al. (2015)."""

import math
import random
from collections import Counter

import pytest
import torch

from gpumetrics import CIDErScore
from gpumetrics.functional import cider_score
from gpumetrics.text.cider import _check_no_collision, _token_code
from tests.helpers.harness import assert_close, check_metric
from tests.helpers.oracles import import_oracle


_VOCAB = (
    "a the man woman dog cat on in with sitting standing red blue of is two кошка сидит на окне 猫 が 座って "
    "😀 🐶 café naïve e\u0301 ü\u0308 αβγ supercalifragilistic очень-длинное-слово 1 2,000 3.5 . , !"
).split()


def _sentence(rng: random.Random, max_len: int = 12) -> str:
    # a small vocabulary with repeats makes shared n-grams (and clipping) frequent; long tokens exercise hashing
    return " ".join(rng.choice(_VOCAB[: rng.choice([8, len(_VOCAB)])]) for _ in range(rng.randint(0, max_len)))


def _corpus(rng: random.Random, n: int, max_refs: int = 4) -> tuple[list[str], list[list[str]]]:
    preds = [_sentence(rng) for _ in range(n)]
    target = [[_sentence(rng) for _ in range(rng.randint(1, max_refs))] for _ in range(n)]
    return preds, target


def _batches(seed: int, sizes=(5, 1, 9, 3)):
    rng = random.Random(seed)
    return [_corpus(rng, n) for n in sizes]


def _pycoco(preds, target, n=4, sigma=6.0):
    Cider = import_oracle("pycocoevalcap.cider.cider").Cider

    gts = {i: list(refs) for i, refs in enumerate(target)}
    res = {i: [p] for i, p in enumerate(preds)}
    score, scores = Cider(n=n, sigma=sigma).compute_score(gts, res)
    return float(score), torch.tensor(scores, dtype=torch.float64)


def _pycoco_mean(preds, target):
    return _pycoco(preds, target)[0]


def _pycoco_none(preds, target):
    return _pycoco(preds, target)[1]


def _cider_formula(preds, target, n_max=4):
    """Vedantam et al. 2015, eq. (1)-(4): TF-IDF g_k (TF normalised by the sentence's n-gram count), cosine per
    order averaged over references, uniform weights over n = 1..4. IDF log(|I| / max(1, df))."""
    n_images = len(preds)

    def grams(sentence, n):
        words = sentence.split()
        return Counter(tuple(words[i: i + n]) for i in range(len(words) - n + 1))

    df = Counter()
    for refs in target:
        df.update({g for ref in refs for n in range(1, n_max + 1) for g in grams(ref, n)})

    def vector(sentence, n):
        h = grams(sentence, n)
        total = sum(h.values())
        return {g: c / total * math.log(n_images / max(1.0, df[g])) for g, c in h.items()}

    def cosine(u, v):
        nu, nv = math.sqrt(sum(x * x for x in u.values())), math.sqrt(sum(x * x for x in v.values()))
        return 0.0 if nu == 0 or nv == 0 else sum(x * v.get(g, 0.0) for g, x in u.items()) / (nu * nv)

    scores = []
    for pred, refs in zip(preds, target):
        per_order = [sum(cosine(vector(pred, n), vector(ref, n)) for ref in refs) / len(refs)
                     for n in range(1, n_max + 1)]
        scores.append(sum(per_order) / n_max)
    return torch.tensor(scores, dtype=torch.float64)


def test_cider_d_equals_pycocoevalcap():
    # DDP is checked below on the per-sample scores (same states and gathering; stricter than the mean)
    check_metric(CIDErScore, cider_score, _pycoco_mean, _batches(0), metric_kwargs={"tokenize": "none"}, ddp=False)


@pytest.mark.ddp
def test_cider_d_per_sample_equals_pycocoevalcap_with_ddp():
    # no batch of one sample here: torchmetrics squeezes a one-element compute() result to a 0-d tensor
    check_metric(
        CIDErScore,
        cider_score,
        _pycoco_none,
        _batches(1, sizes=(6, 2, 8, 3)),
        metric_kwargs={"tokenize": "none", "reduction": "none"},
    )


def test_cider_equals_vedantam_formula():
    check_metric(
        CIDErScore,
        cider_score,
        _cider_formula,
        _batches(2, sizes=(4, 7, 2)),
        metric_kwargs={"tokenize": "none", "mode": "cider", "reduction": "none"},
        ddp=False,  # the two tests above cover DDP; the mode only changes the final formula
    )


def test_cider_d_random_corpora_and_options():
    rng = random.Random(3)
    for n in (1, 2, 7, 40):
        preds, target = _corpus(rng, n)
        if not any(ref.split() for refs in target for ref in refs):
            continue  # pycocoevalcap fails on a corpus without any reference token (see the empty test)
        score, scores = _pycoco(preds, target)
        assert_close(cider_score(preds, target, tokenize="none"), score)
        assert_close(cider_score(preds, target, tokenize="none", reduction="none"), scores)
        assert_close(cider_score(preds, target, tokenize="none", reduction="sum"), scores.sum())
    preds, target = _corpus(rng, 25)
    for sigma in (0.5, 3.0, 100.0):  # pycocoevalcap's `n` is inert (its cook_* helpers always count up to 4-grams)
        assert_close(
            cider_score(preds, target, tokenize="none", sigma=sigma, reduction="none"),
            _pycoco(preds, target, 4, sigma)[1],
        )
    for n in (1, 2, 6):
        assert_close(
            cider_score(preds, target, mode="cider", tokenize="none", n_gram=n, reduction="none"),
            _cider_formula(preds, target, n),
        )
    preds, target = _corpus(rng, 25)
    assert_close(cider_score(preds, target, mode="cider", tokenize="none", reduction="none"),
                 _cider_formula(preds, target))


def test_large_batch_many_references():
    rng = random.Random(4)
    preds, target = _corpus(rng, 400, max_refs=6)
    assert_close(cider_score(preds, target, tokenize="none", reduction="none"), _pycoco(preds, target)[1])


def test_ptb_tokenization_equals_pycocoevalcap_pipeline():
    PTBTokenizer = import_oracle("pycocoevalcap.tokenizer.ptbtokenizer").PTBTokenizer

    preds = ["A man's dog doesn't like cats.", "Two DOGS, playing (frisbee)!", "", "A cat; sitting on the mat...",
             "A DOG'S toy\u00a0** :) on\ufeffthe mat --- x\u00b2y"]  # characters/rules the Java tool has its own way
    target = [
        ["A man's dog does not like cats!", "The dog of a man: no cats."],
        ["two dogs play frisbee", "Dogs are playing with a frisbee, outside."],
        ["An empty caption's reference."],
        ["A cat is sitting on the mat.", "There's a cat on a mat -- sitting.", "cat"],
        ["The dog's toy is on the mat :)", "a toy\u00ad on a mat \u2010 x\u00b2y 's"],
    ]
    tokenizer = PTBTokenizer()
    gts = tokenizer.tokenize({i: [{"caption": r} for r in refs] for i, refs in enumerate(target)})
    res = tokenizer.tokenize({i: [{"caption": p}] for i, p in enumerate(preds)})
    Cider = import_oracle("pycocoevalcap.cider.cider").Cider

    score, scores = Cider().compute_score(gts, res)
    assert_close(cider_score(preds, target, tokenize="ptb", reduction="none"), torch.tensor(scores))
    metric = CIDErScore(tokenize="ptb")
    metric.update(preds[:1], target[:1])
    metric.update(preds[1:], target[1:])
    assert_close(metric.compute(), float(score))


def test_empty_inputs_are_defined():
    # empty hypotheses score 0 (pycocoevalcap agrees); a corpus with no reference token and no sample give 0, no NaN
    preds, target = ["", "a b c"], [["a b"], ["a b c"]]
    assert_close(cider_score(preds, target, tokenize="none", reduction="none"), _pycoco(preds, target)[1])
    assert cider_score(preds, target, tokenize="none", reduction="none")[0].item() == 0.0
    assert cider_score(["a", ""], [[""], ["", " "]], tokenize="none").item() == 0.0
    assert cider_score([], [], tokenize="none").item() == 0.0
    assert cider_score([], [], tokenize="none", reduction="none").shape == (0,)
    with pytest.warns(UserWarning, match="before the ``update``"):
        assert CIDErScore().compute().item() == 0.0
    single = cider_score(["a cat"], [["a cat"]], tokenize="none")
    assert single.item() == 0.0 == _pycoco(["a cat"], [["a cat"]])[0]  # one image: idf log(1) − log(1) = 0


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="same number"):
        cider_score(["a", "b"], [["a"]])
    with pytest.raises(ValueError, match=r"`target\[1\]`"):
        cider_score(["a", "b"], [["a"], []])
    with pytest.raises(TypeError, match=r"`preds\[1\]`"):
        cider_score(["a", 3], [["a"], ["b"]])
    with pytest.raises(TypeError, match=r"`target\[0\]\[0\]`"):
        cider_score(["a"], [[None]])
    with pytest.raises(ValueError, match="`mode`"):
        cider_score(["a"], [["a"]], mode="cider-x")
    for call in (cider_score, lambda *args, **kwargs: CIDErScore(**kwargs)):  # renamed `mode` (0.x API)
        with pytest.raises(TypeError, match="unexpected keyword argument 'variant'"):
            call(["a"], [["a"]], variant="cider")
    with pytest.raises(ValueError, match="`tokenize`"):
        CIDErScore(tokenize="13a")
    with pytest.raises(ValueError, match="`reduction`"):
        cider_score(["a"], [["a"]], reduction="max")
    with pytest.raises(ValueError, match="`n_gram`"):
        cider_score(["a"], [["a"]], n_gram=0)
    with pytest.raises(ValueError, match="`sigma`"):
        CIDErScore(sigma=-1.0)
    # 2σ² must be a positive finite double: σ = 1e-200 gave NaN (0/0 for a caption of the reference's length), 1e200
    # an OverflowError from σ ** 2 (pycocoevalcap: ZeroDivisionError / OverflowError); found by fuzzing
    for sigma in (1e-200, 1e200):
        with pytest.raises(ValueError, match="`sigma` must have a positive finite 2·sigma²"):
            cider_score(["a b", "b c"], [["a b"], ["b c d"]], sigma=sigma)
        with pytest.raises(ValueError, match="`sigma`"):
            CIDErScore(sigma=sigma)
    assert float(cider_score(["a b", "b c"], [["a b"], ["b c d"]], sigma=1e-150)) == 2.5


def test_token_codes_are_exact_or_checked():
    assert _token_code("abcdefg")[1] == 0 and _token_code("abcdefgh")[0] < 0  # 7 bytes packed, 8 bytes hashed
    assert len({_token_code(t)[0] for t in ["a", "a\x00", "ab", "b", "é", "e\u0301"]}) == 6
    codes, checks = torch.tensor([-5, -5, -7]), torch.tensor([1, 1, 2])
    _check_no_collision(codes, checks)  # the same token seen twice is fine
    with pytest.raises(RuntimeError, match="share a 63-bit hash"):
        _check_no_collision(torch.tensor([-5, -5]), torch.tensor([1, 2]))


def test_signature_and_device_argument():
    metric = CIDErScore(mode="cider", tokenize="none")
    assert metric.signature().startswith("cider|mode:cider|tok:none|n:4|idf:corpus|")
    value = cider_score(["a b"], [["a b"]], device="cpu")
    assert value.dtype == torch.float64 and value.device.type == "cpu"


def test_one_sample_keeps_its_dimension_for_reduction_none():
    preds, target = ["a cat on a mat"], [["a cat is on the mat", "there is a cat"]]
    metric = CIDErScore(tokenize="none", reduction="none")
    metric.update(preds, target)
    module, function = metric.compute(), cider_score(preds, target, tokenize="none", reduction="none")
    assert module.shape == function.shape == (1,) and torch.equal(module, function)
    mean = CIDErScore(tokenize="none")
    mean.update(preds, target)
    assert mean.compute().shape == () and float(mean.compute()) == float(function[0])
