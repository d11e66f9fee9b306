"""Word Mover's Distance vs gensim ``KeyedVectors.wmdistance`` on the vectors shipped in gensim's wheel."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from gpumetrics.functional import word_movers_distance
from gpumetrics.text.wmd import load_embeddings

gensim = pytest.importorskip("gensim")
pytest.importorskip("ot")
from gensim.models import KeyedVectors  # noqa: E402
from gensim.utils import simple_preprocess  # noqa: E402

DATA = Path(gensim.__file__).parent / "test" / "test_data"
VEC = DATA / "lee_fasttext.vec"  # fastText vectors of the Lee corpus, 1,762 words × 10 dimensions (word2vec text)


@pytest.fixture(scope="module")
def kv():
    return KeyedVectors.load_word2vec_format(str(VEC))


@pytest.fixture(scope="module")
def sentences():
    text = (DATA / "lee.cor").read_text(encoding="latin-1")
    out = []
    for line in text.splitlines():
        for sentence in line.split(". "):
            tokens = simple_preprocess(sentence)
            if tokens:
                out.append(tokens)
    return out


def _pairs(sentences, n: int, seed: int) -> tuple[list, list]:
    rng = random.Random(seed)
    preds, target = [], []
    for _ in range(n):
        a, b = rng.choice(sentences), rng.choice(sentences)
        preds.append(a[: rng.randint(1, 25)] + (["zzz-oov"] if rng.random() < 0.3 else []))
        target.append(b[: rng.randint(1, 25)])
    # gensim's edge cases: empty, all out of vocabulary, the same single word, identical documents, one shared word
    preds += [[], ["zzz-oov", "qqq"], ["the", "the"], sentences[0][:8], ["the"], ["government"]]
    target += [["the", "cat"], ["the"], ["the"], sentences[0][:8], ["the", "the", "government"], ["the"]]
    return preds, target


def _gensim(kv, preds, target) -> torch.Tensor:
    return torch.tensor([kv.wmdistance(p, t) for p, t in zip(preds, target)], dtype=torch.float64)


def _assert_same(ours: torch.Tensor, expected: torch.Tensor, tol: float = 1e-9) -> None:
    assert ours.shape == expected.shape
    inf = torch.isinf(expected)
    assert torch.equal(torch.isinf(ours), inf), (ours[inf], expected[inf])
    assert float((ours[~inf] - expected[~inf]).abs().max()) <= tol


@pytest.mark.parametrize("seed", range(3))
def test_exact_emd_equals_gensim(kv, sentences, seed):
    preds, target = _pairs(sentences, 60, seed)
    expected = _gensim(kv, preds, target)
    _assert_same(word_movers_distance(preds, target, kv), expected)
    # the same vectors given as a file and as a dict (norms recomputed in float32, as gensim does)
    _assert_same(word_movers_distance(preds, target, str(VEC)), expected)
    table = {word: kv[word] for word in kv.index_to_key}
    _assert_same(word_movers_distance([" ".join(p) for p in preds], [" ".join(t) for t in target], table), expected)


def test_unnormalised_vectors_and_stop_words(kv, sentences):
    preds, target = _pairs(sentences, 30, 7)
    expected = torch.tensor([kv.wmdistance(p, t, norm=False) for p, t in zip(preds, target)], dtype=torch.float64)
    _assert_same(word_movers_distance(preds, target, kv, normalize=False), expected)
    stop = {"the", "a", "of", "to", "and", "in"}
    expected = _gensim(kv, [[w for w in p if w not in stop] for p in preds], [[w for w in t if w not in stop]
                                                                              for t in target])
    _assert_same(word_movers_distance(preds, target, kv, stop_words=stop), expected)


def test_glove_text_file_and_binary_word2vec():
    glove = DATA / "test_glove.txt"  # GloVe format: no header line
    kv = KeyedVectors.load_word2vec_format(str(glove), no_header=True)
    words = kv.index_to_key
    rng = random.Random(0)
    preds = [rng.sample(words, rng.randint(1, 6)) for _ in range(20)]
    target = [rng.sample(words, rng.randint(1, 6)) for _ in range(20)]
    _assert_same(word_movers_distance(preds, target, str(glove)), _gensim(kv, preds, target))
    binary = KeyedVectors.load_word2vec_format(str(DATA / "euclidean_vectors.bin"), binary=True)
    words = binary.index_to_key[:200]
    preds = [rng.sample(words, rng.randint(1, 6)) for _ in range(20)]
    target = [rng.sample(words, rng.randint(1, 6)) for _ in range(20)]
    _assert_same(word_movers_distance(preds, target, str(DATA / "euclidean_vectors.bin")),
                 _gensim(binary, preds, target))


def test_sinkhorn_is_close_to_exact(kv, sentences):
    preds, target = _pairs(sentences, 80, 3)
    exact = word_movers_distance(preds, target, kv)
    for reg, iterations, bound in ((0.01, 1000, 0.005), (0.005, 3000, 0.002)):  # README: measured gaps
        approx = word_movers_distance(preds, target, kv, "sinkhorn", reg=reg, max_iter=iterations)
        finite = torch.isfinite(exact)
        assert torch.equal(torch.isfinite(approx), finite)
        gap = (approx[finite] - exact[finite])
        assert float(gap.min()) > -1e-6  # the entropic plan is feasible: never below the optimum (up to tolerance)
        assert float(gap.max()) < bound, (reg, float(gap.max()))


def test_small_cases_and_shapes(kv):
    assert word_movers_distance([], [], kv).shape == (0,)
    out = word_movers_distance([["the"]], [["the", "the"]], kv)
    assert out.tolist() == [0.0]
    table = load_embeddings({"a": [1.0, 0.0], "b": [0.0, 1.0]})
    assert math.isclose(float(word_movers_distance(["a"], ["b"], table)[0]), math.sqrt(2), rel_tol=1e-12)
    assert math.isclose(float(word_movers_distance(["a a b"], ["b"], table)[0]), 2 / 3 * math.sqrt(2), rel_tol=1e-12)
    assert np.isinf(float(word_movers_distance(["x"], ["a"], table)[0]))


@pytest.mark.parametrize("call, error, match", [
    (lambda kv: word_movers_distance(["a"], ["a", "b"], kv), ValueError, "`preds` and `target` must have the same"),
    (lambda kv: word_movers_distance(["a"], ["a"], kv, "wasserstein"), ValueError, "`method` must be one of"),
    (lambda kv: word_movers_distance(["a"], ["a"], kv, "sinkhorn", reg=0), ValueError, "`reg` must be a positive"),
    (lambda kv: word_movers_distance("a", ["a"], kv), TypeError, "`preds` must be a sequence of documents"),
    (lambda kv: word_movers_distance([3], ["a"], kv), TypeError, r"`preds\[0\]` must be a string"),
    (lambda kv: word_movers_distance(["a"], ["a"], 42), TypeError, "`embeddings` must be"),
    (lambda kv: word_movers_distance(["a"], ["a"], "/nonexistent/vectors.txt"), ValueError, "does not exist"),
    (lambda kv: word_movers_distance(["a"], ["a"], kv, stop_words="the"), TypeError, "`stop_words`"),
    (lambda kv: word_movers_distance(["a"], ["a"], kv, device="tpu"), ValueError, "`device`"),
])
def test_bad_input_names_the_argument(kv, call, error, match):
    with pytest.raises(error, match=match):
        call(kv)


def test_module_equals_function_ddp_and_checkpoint(kv, sentences):
    from gpumetrics import WordMoversDistance
    from tests.helpers.harness import check_metric

    preds, target = _pairs(sentences, 9, 4)
    keep = [i for i in range(len(preds)) if preds[i] and any(w in kv for w in preds[i])]  # finite means
    preds, target = [preds[i] for i in keep][:10], [target[i] for i in keep][:10]
    batches = [(preds[a:b], target[a:b]) for a, b in ((0, 3), (3, 4), (4, 10))]
    table = load_embeddings(kv)
    for reduction in ("mean", "none"):
        check_metric(WordMoversDistance, word_movers_distance, lambda p, t: _gensim(kv, p, t).mean() if reduction ==
                     "mean" else _gensim(kv, p, t), batches, {"embeddings": table, "reduction": reduction},
                     ddp=reduction == "mean")


@pytest.mark.parametrize("name", ["wmd_emd", "wmd_sinkhorn"])
def test_benchmark_case_runs_at_a_tiny_size(name):
    from benchmarks.__main__ import CASES, load_cases, run_case

    load_cases()
    rows = run_case(CASES[name], 30, "cpu", repeats=1)  # raises when gpumetrics and the anchor disagree
    assert rows and all(row["ours_s"] > 0 for row in rows)


def test_sinkhorn_log_domain_for_small_reg(kv, sentences):
    """reg small enough that exp(−C/reg) underflows: the log-domain iteration takes over."""
    preds, target = _pairs(sentences, 12, 8)
    exact = word_movers_distance(preds, target, kv)
    approx = word_movers_distance(preds, target, kv, "sinkhorn", reg=0.001, max_iter=3000)
    finite = torch.isfinite(exact)
    assert torch.equal(torch.isfinite(approx), finite)
    assert float((approx[finite] - exact[finite]).abs().max()) < 2e-3
