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
from tests.helpers.oracles import import_oracle

gensim = import_oracle("gensim")
import_oracle("ot", "POT")
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
    _assert_same(word_movers_distance(preds, target, embeddings=kv, reduction="none"), expected)
    # the same vectors given as a file and as a dict (norms recomputed in float32, as gensim does)
    _assert_same(word_movers_distance(preds, target, embeddings=str(VEC), reduction="none"), expected)
    table = {word: kv[word] for word in kv.index_to_key}
    _assert_same(word_movers_distance([" ".join(p) for p in preds], [" ".join(t) for t in target], embeddings=table,
                                      reduction="none"), expected)


def test_unnormalised_vectors_and_stop_words(kv, sentences):
    preds, target = _pairs(sentences, 30, 7)
    expected = torch.tensor([kv.wmdistance(p, t, norm=False) for p, t in zip(preds, target)], dtype=torch.float64)
    _assert_same(word_movers_distance(preds, target, embeddings=kv, reduction="none", normalize=False), expected)
    stop = {"the", "a", "of", "to", "and", "in"}
    expected = _gensim(kv, [[w for w in p if w not in stop] for p in preds], [[w for w in t if w not in stop]
                                                                              for t in target])
    _assert_same(word_movers_distance(preds, target, embeddings=kv, reduction="none", stop_words=stop), expected)


def test_glove_text_file_and_binary_word2vec():
    glove = DATA / "test_glove.txt"  # GloVe format: no header line
    kv = KeyedVectors.load_word2vec_format(str(glove), no_header=True)
    words = kv.index_to_key
    rng = random.Random(0)
    preds = [rng.sample(words, rng.randint(1, 6)) for _ in range(20)]
    target = [rng.sample(words, rng.randint(1, 6)) for _ in range(20)]
    _assert_same(word_movers_distance(preds, target, embeddings=str(glove), reduction="none"),
                 _gensim(kv, preds, target))
    binary = KeyedVectors.load_word2vec_format(str(DATA / "euclidean_vectors.bin"), binary=True)
    words = binary.index_to_key[:200]
    preds = [rng.sample(words, rng.randint(1, 6)) for _ in range(20)]
    target = [rng.sample(words, rng.randint(1, 6)) for _ in range(20)]
    _assert_same(word_movers_distance(preds, target, embeddings=str(DATA / "euclidean_vectors.bin"), reduction="none"),
                 _gensim(binary, preds, target))


def test_sinkhorn_is_close_to_exact(kv, sentences):
    preds, target = _pairs(sentences, 80, 3)
    exact = word_movers_distance(preds, target, embeddings=kv, reduction="none")
    for reg, iterations, bound in ((0.01, 1000, 0.005), (0.005, 3000, 0.002)):  # README: measured gaps
        approx = word_movers_distance(preds, target, embeddings=kv, reduction="none", method="sinkhorn", reg=reg,
                                      max_iter=iterations)
        finite = torch.isfinite(exact)
        assert torch.equal(torch.isfinite(approx), finite)
        gap = (approx[finite] - exact[finite])
        assert float(gap.min()) > -1e-6  # the entropic plan is feasible: never below the optimum (up to tolerance)
        assert float(gap.max()) < bound, (reg, float(gap.max()))



@pytest.mark.parametrize("method", ["emd", "sinkhorn"])
def test_documents_of_very_different_lengths_are_padded_in_buckets(kv, sentences, monkeypatch, method):
    """Pairs bucketed by document length (each bucket padded to its own longest) score as one padded block does, and
    exact WMD still equals gensim's: short and long documents, gensim's edge cases, empty sides."""
    from gpumetrics.text import wmd

    preds, target = _pairs(sentences, 40, 11)
    long_doc = [word for sentence in sentences[:60] for word in sentence]
    preds += [long_doc[:400], long_doc[100:130], []]
    target += [long_doc[200:], long_doc[:3], long_doc[:50]]
    whole = word_movers_distance(preds, target, embeddings=kv, reduction="none", method=method)
    monkeypatch.setattr(wmd, "_PAD_BUDGET_BYTES", 0)
    assert len(wmd._length_buckets(*(_bag_lengths(kv, docs) for docs in (preds, target)), kv.vector_size)) > 3
    bucketed = word_movers_distance(preds, target, embeddings=kv, reduction="none", method=method)
    # Sinkhorn stops when every pair of its batch is within tol (1e-6) of its marginals: other batches, other stops
    _assert_same(bucketed, whole, 0 if method == "emd" else 1e-5)
    if method == "emd":
        _assert_same(bucketed, _gensim(kv, preds, target))


def _bag_lengths(kv, docs) -> np.ndarray:
    return np.array([len({word for word in doc if word in kv.key_to_index}) for doc in docs], dtype=np.int64)


def test_one_long_document_among_many_short_ones_is_not_padded_to_its_length(kv, sentences):
    """One pair of 1,500-word documents among 2,000 short pairs: padded together, Sinkhorn held 2,001 costs of
    1,500 × 1,500 float64 (36 GB); in length buckets, the long pair's own cost and the short pairs' small ones."""
    preds, target = _pairs(sentences, 2_000, 12)
    vocabulary = kv.index_to_key
    preds.append(vocabulary[:1_500])
    target.append(vocabulary[200:1_700])
    out = word_movers_distance(preds, target, embeddings=kv, reduction="none", method="sinkhorn", reg=0.05)
    alone = word_movers_distance(preds[-1:], target[-1:], embeddings=kv, reduction="none", method="sinkhorn", reg=0.05)
    short = word_movers_distance(preds[:50], target[:50], embeddings=kv, reduction="none", method="sinkhorn", reg=0.05)
    _assert_same(out[-1:], alone, 1e-5)  # Sinkhorn's stop depends on the batch (tol=1e-6 on the marginals)
    _assert_same(out[:50], short, 1e-5)

def test_small_cases_and_shapes(kv):
    assert word_movers_distance([], [], embeddings=kv, reduction="none").shape == (0,)
    out = word_movers_distance([["the"]], [["the", "the"]], embeddings=kv, reduction="none")
    assert out.tolist() == [0.0]
    table = load_embeddings({"a": [1.0, 0.0], "b": [0.0, 1.0]})
    assert math.isclose(float(word_movers_distance(["a"], ["b"], embeddings=table, reduction="none")[0]), math.sqrt(2),
                        rel_tol=1e-12)
    assert math.isclose(float(word_movers_distance(["a a b"], ["b"], embeddings=table, reduction="none")[0]),
                        2 / 3 * math.sqrt(2), rel_tol=1e-12)
    assert np.isinf(float(word_movers_distance(["x"], ["a"], embeddings=table, reduction="none")[0]))


@pytest.mark.parametrize("call, error, match", [
    (lambda kv: word_movers_distance(["a"], ["a", "b"], embeddings=kv), ValueError,
     "`preds` and `target` must have the same"),
    (lambda kv: word_movers_distance(["a"], ["a"], embeddings=kv, method="wasserstein"), ValueError,
     "`method` must be one of"),
    (lambda kv: word_movers_distance(["a"], ["a"], embeddings=kv, method="sinkhorn", reg=0), ValueError,
     "`reg` must be a finite number > 0"),
    (lambda kv: word_movers_distance("a", ["a"], embeddings=kv), TypeError, "`preds` must be a sequence of documents"),
    (lambda kv: word_movers_distance([3], ["a"], embeddings=kv), TypeError, r"`preds\[0\]` must be a string"),
    (lambda kv: word_movers_distance(["a"], ["a"], embeddings=42), TypeError, "`embeddings` must be"),
    (lambda kv: word_movers_distance(["a"], ["a"], embeddings="/nonexistent/vectors.txt"), ValueError,
     "does not exist"),
    (lambda kv: word_movers_distance(["a"], ["a"], embeddings=kv, stop_words="the"), TypeError, "`stop_words`"),
    (lambda kv: word_movers_distance(["a"], ["a"], embeddings=kv, device="tpu"), ValueError, "`device`"),
    # found by fuzzing: Sinkhorn with max_iter=0 returned the unscaled kernel's cost (1.7e-58 for 0.67), 2.5 raised
    # an unnamed TypeError, a negative / NaN tol or an infinite reg passed
    (lambda kv: word_movers_distance(["a"], ["a"], embeddings=kv, method="sinkhorn", max_iter=0), ValueError,
     "`max_iter` must be a positive integer"),
    (lambda kv: word_movers_distance(["a"], ["a"], embeddings=kv, max_iter=2.5), TypeError, "`max_iter`"),
    (lambda kv: word_movers_distance(["a"], ["a"], embeddings=kv, method="sinkhorn", tol=-1.0), ValueError, "`tol`"),
    (lambda kv: word_movers_distance(["a"], ["a"], embeddings=kv, tol=math.nan), ValueError, "`tol`"),
    (lambda kv: word_movers_distance(["a"], ["a"], embeddings=kv, method="sinkhorn", reg=math.inf), ValueError,
     "`reg` must be a finite number > 0"),
    (lambda kv: __import__("gpumetrics").WordMoversDistance(kv, "sinkhorn", max_iter=0), ValueError, "`max_iter`"),
    (lambda kv: word_movers_distance(["a"], ["a"], embeddings=kv, stop_words=b"the"), TypeError, "`stop_words`"),
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
    exact = word_movers_distance(preds, target, embeddings=kv, reduction="none")
    approx = word_movers_distance(preds, target, embeddings=kv, reduction="none", method="sinkhorn", reg=0.001,
                                  max_iter=3000)
    finite = torch.isfinite(exact)
    assert torch.equal(torch.isfinite(approx), finite)
    assert float((approx[finite] - exact[finite]).abs().max()) < 2e-3


PANG_LEE = DATA / "pang_lee_polarity_fasttext.vec"  # gensim's own test file: five words in Latin-1, not UTF-8


def test_vector_file_that_is_not_utf8():
    """strict: a ValueError naming the file and line; ignore / replace: gensim's vectors, word for word."""
    with pytest.raises(ValueError, match=r"pang_lee_polarity_fasttext\.vec'?, line 150: byte b'\\x97'.*unicode_errors"):
        load_embeddings(str(PANG_LEE))
    with pytest.raises(ValueError, match="line 150"):
        word_movers_distance(["a"], ["b"], embeddings=str(PANG_LEE))
    for errors in ("ignore", "replace"):
        kv = KeyedVectors.load_word2vec_format(str(PANG_LEE), unicode_errors=errors)
        table = load_embeddings(str(PANG_LEE), unicode_errors=errors)
        assert list(table.index) == list(kv.index_to_key)
        assert torch.equal(table.vectors, torch.from_numpy(kv.vectors))
        words = kv.index_to_key
        rng = random.Random(1)
        preds = [rng.sample(words, rng.randint(1, 8)) + [words[283]] for _ in range(15)]  # 'clich?s' in each
        target = [rng.sample(words, rng.randint(1, 8)) for _ in range(15)]
        _assert_same(word_movers_distance(preds, target, embeddings=str(PANG_LEE), unicode_errors=errors,
                                          reduction="none"), _gensim(kv, preds, target))
    with pytest.raises(ValueError, match="`unicode_errors` must be one of"):
        load_embeddings(str(PANG_LEE), unicode_errors="surrogateescape")


def test_malformed_vector_files_name_file_and_line(tmp_path):
    ragged = tmp_path / "ragged.vec"
    ragged.write_text("3 2\na 0.1 0.2\nb 0.3 0.4 0.5\nc 0.1 0.1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"ragged\.vec'?, line 3: the vector of 'b' has 3 values, expected 2"):
        load_embeddings(str(ragged))
    glove = tmp_path / "ragged.txt"  # no header: the first vector sets the length
    glove.write_text("a 0.1 0.2\nb 0.3\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 2: the vector of 'b' has 1 values, expected 2 \(as on line 1\)"):
        load_embeddings(str(glove))
    text = tmp_path / "text.vec"
    text.write_text("a 0.1 x\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 1: the vector of 'a' holds a value that is not a number"):
        load_embeddings(str(text))
    short = tmp_path / "short.vec"
    short.write_text("3 2\na 0.1 0.2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="announces 3 words, the file holds 1"):
        load_embeddings(str(short))
    with pytest.raises(ValueError, match="is a directory"):
        load_embeddings(str(tmp_path))
    with pytest.raises(ValueError, match="'a' has 2 values, 'b' has 3"):
        load_embeddings({"a": [0.1, 0.2], "b": [0.1, 0.2, 0.3]})


def test_duplicate_words_and_header_count_as_gensim(tmp_path):
    path = tmp_path / "dup.vec"
    path.write_text("3 2\na 1 0\nb 0 1\na 5 5\nextra 1 1\n", encoding="utf-8")  # 'extra' is past the header's 3
    kv = KeyedVectors.load_word2vec_format(str(path))
    table = load_embeddings(str(path))
    words = [w for w in kv.index_to_key if w is not None]  # gensim leaves an empty slot for the skipped duplicate
    assert list(table.index) == words == ["a", "b"]
    assert torch.equal(table.vectors, torch.from_numpy(np.stack([kv[w] for w in words])))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 1e200])
@pytest.mark.parametrize("kind", ["dict", "file", "keyedvectors"])
def test_vectors_with_nan_inf_or_overflow_are_refused(tmp_path, bad, kind):
    """Before: NaN gave 0.0 (emd) or NaN (sinkhorn), 1e200 overflowed to 0.0 — now one clear error, at load time."""
    vectors = {"good": [0.5, 0.5], "bad": [0.1, bad], "fine": [1.0, 0.0]}
    if kind == "dict":
        source = vectors
    elif kind == "file":
        source = tmp_path / "bad.vec"
        source.write_text("3 2\n" + "".join(f"{w} {x!r} {y!r}\n" for w, (x, y) in vectors.items()), encoding="utf-8")
        source = str(source)
    else:
        source = KeyedVectors(2)
        with np.errstate(over="ignore"):
            source.add_vectors(list(vectors), np.array(list(vectors.values()), dtype=np.float32))
    for call in (lambda: load_embeddings(source),
                 lambda: word_movers_distance(["good"], ["fine"], embeddings=source),
                 lambda: word_movers_distance(["good"], ["fine"], embeddings=source, method="sinkhorn")):
        with pytest.raises(ValueError, match=r"NaN, infinite or out-of-float32-range .* 1 word\(s\): 'bad'"):
            call()


def test_zero_vector_cannot_be_normalised():
    table = load_embeddings({"zero": [0.0, 0.0], "a": [1.0, 0.0], "b": [0.0, 1.0]})
    assert math.isclose(float(word_movers_distance(["a"], ["b"], embeddings=table)), math.sqrt(2))  # unused: fine
    for method in ("emd", "sinkhorn"):
        with pytest.raises(ValueError, match="the vector of 'zero' has norm 0.*normalize=False"):
            word_movers_distance(["a zero"], ["b"], embeddings=table, method=method)
    assert math.isclose(float(word_movers_distance(["zero"], ["a"], embeddings=table, normalize=False)), 1.0)
    huge = load_embeddings({"x": [1e30, 0.0], "y": [0.0, 1e30], "a": [1.0, 0.0]})  # float32 norm overflows to inf
    with pytest.raises(ValueError, match="the vectors of 'x', 'y' have norm 0 .*overflows"):
        word_movers_distance(["x a"], ["y"], embeddings=huge)  # before: every unit vector 0, the distance inf
    assert math.isclose(float(word_movers_distance(["x"], ["y"], embeddings=huge, normalize=False)),
                        math.sqrt(2) * 1e30, rel_tol=1e-6)


def test_function_and_module_share_defaults():
    import inspect

    from gpumetrics import WordMoversDistance

    function = inspect.signature(word_movers_distance).parameters
    module = inspect.signature(WordMoversDistance.__init__).parameters
    shared = [name for name in module if name in function and name not in ("embeddings",)]
    assert {"method", "stop_words", "normalize", "reg", "max_iter", "tol", "unicode_errors", "reduction"} <= set(shared)
    for name in shared:
        assert function[name].default == module[name].default, name
        assert function[name].kind is inspect.Parameter.KEYWORD_ONLY, name
    assert function["reduction"].default == "mean"
    assert list(function)[:2] == ["preds", "target"] and function["embeddings"].kind is inspect.Parameter.KEYWORD_ONLY


def test_keyed_vectors_own_lookup_and_dtype():
    """A KeyedVectors is read as gensim reads it: a key added twice in one ``add_vectors`` call reads its last row
    (``key_to_index``), and float64 / float16 vectors are normalised in their own dtype, not cast to float32 (was:
    the first row, 1.4142 instead of 0.6325; 7.6e-9 off for float64)."""
    kv = KeyedVectors(2, count=0)
    kv.add_vectors(["cat", "dog", "cat"], np.array([[1, 0], [0, 1], [0.6, 0.8]], dtype=np.float32))
    assert kv.key_to_index["cat"] == 2
    _assert_same(word_movers_distance([["cat"]], [["dog"]], embeddings=kv, reduction="none"),
                 _gensim(kv, [["cat"]], [["dog"]]), tol=0.0)
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(30)]
    sample = random.Random(2)
    preds = [sample.sample(words, sample.randint(1, 8)) for _ in range(20)]
    target = [sample.sample(words, sample.randint(1, 8)) for _ in range(20)]
    for dtype in (np.float64, np.float16):
        kv = KeyedVectors(8, count=0, dtype=dtype)
        kv.add_vectors(words, rng.standard_normal((30, 8)).astype(dtype))
        for norm in (True, False):
            expected = torch.tensor([kv.wmdistance(p, t, norm=norm) for p, t in zip(preds, target)],
                                    dtype=torch.float64)
            _assert_same(word_movers_distance(preds, target, embeddings=kv, normalize=norm, reduction="none"),
                         expected, tol=1e-12)


def test_sinkhorn_iterations_and_tolerance_are_in_the_signature():
    """Sinkhorn's cost depends on max_iter and tol (an unconverged plan): metrics that differ in them must not merge
    or exchange checkpoints (they did: neither was in the signature; found by fuzzing)."""
    from gpumetrics import WordMoversDistance

    vectors = {"a": [1.0, 0.0], "b": [0.0, 1.0]}
    few, many = WordMoversDistance(vectors, "sinkhorn", max_iter=2), WordMoversDistance(vectors, "sinkhorn")
    assert "|iter:2|tol:1e-06|" in few.signature() and "|iter:1000|" in many.signature()
    many.update(["a"], ["b"])
    with pytest.raises(ValueError, match="signatures differ"):
        few.merge_state(many)
    assert "iter" not in WordMoversDistance(vectors, max_iter=2).signature()  # the exact EMD ignores them
