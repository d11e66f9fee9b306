"""METEOR 1.5 (mode "meteor-1.5") against the jar itself: pycocoevalcap's ``Meteor().compute_score`` for English, the
same jar over the same stdio protocol for Russian. Java 17 runs the jar inside the installed pycocoevalcap.

Every comparison is exact to 1e-9 (the issue allows 1e-4 on 99.5 % of sentences; no sentence needs it)."""

from __future__ import annotations

import gzip
import itertools
import random
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from gpumetrics import METEORScore
from gpumetrics.functional import meteor_score
from gpumetrics.kernels.alignment import Matches, beam_align
from gpumetrics.text.meteor import tables
from gpumetrics.text.meteor.jar import split_references
from gpumetrics.text.tokenize.meteor import meteor_jar
from tests.helpers.harness import assert_close, check_metric
from tests.helpers.meteor_jar import meteor_data_installed, pycocoevalcap_meteor, stdio_meteor
from testkit.text_data import caption_batch


@pytest.fixture(scope="module", autouse=True)
def _tables():
    """Build (first run: ≈ 25 s) or load the paraphrase cache once, before any DDP worker needs it."""
    tables.paraphrase_table()


def _check_against_jar(preds, target, jar=pycocoevalcap_meteor, **options):
    corpus, segments = jar(preds, target)
    assert_close(meteor_score(preds, target, reduction="none", **options), segments, what="segment scores")
    assert_close(meteor_score(preds, target, **options), corpus, what="corpus score")


def test_random_captions_equal_pycocoevalcap():
    # COCO-like captions × 5 references: punctuation, digits, case, hyphens, apostrophes, stems, WordNet synonyms
    # and paraphrase-table phrases; 1,200 hypotheses, 5,800 alignments, one JVM
    preds, target = caption_batch(random.Random(0), 1200)
    _check_against_jar(preds, target)


def _paraphrase_sentences(rng: random.Random, n: int) -> tuple[list[str], list[list[str]]]:
    """Sentences built from table entries (both sides, 1–7 words, several per sentence, overlapping)."""
    with gzip.open(tables.paraphrase_file(), "rt", encoding="utf-8") as handle:
        lines = list(itertools.islice(handle, 3 * 200_000))
    entries = [(lines[k + 1].strip(), lines[k + 2].strip()) for k in range(0, len(lines) - 2, 3)]
    filler = "a the man on of and is in with".split()
    preds, target = [], []
    for _ in range(n):
        picked = [rng.choice(entries) for _ in range(rng.randint(1, 4))]
        hyp = [side for pair in picked for side in (pair[rng.random() < 0.5], rng.choice(filler))]
        refs = [" ".join(rng.sample([side for pair in picked for side in pair] + filler[:3], k=3))
                for _ in range(rng.randint(1, 3))]
        preds.append(" ".join(hyp))
        target.append(refs)
    return preds, target


def test_paraphrase_heavy_sentences_equal_pycocoevalcap():
    preds, target = _paraphrase_sentences(random.Random(1), 300)
    _check_against_jar(preds, target)


def _edge_cases() -> tuple[list[str], list[list[str]]]:
    long_text = " ".join(f"word{i % 37} the" for i in range(90))  # 180 words: three 64-bit words per bitset
    cases = [
        ("", ["a man riding a horse"]),
        ("a man riding a horse", [""]),
        ("", [""]),
        ("A man riding a horse.", ["a man riding a horse ."]),  # identical after -norm: exact module only
        ("the cats are running", ["the cats are running", "cat runs"]),
        ("Aa BB", ["BB Aa"]),  # Java String.hashCode collision: "Aa" and "BB" match exactly, as in the jar
        ("a a a a a", ["a a"]),
        ("a b a b a b", ["b a b a b a", "a b"]),
        ("the the the cat the the", ["the cat the the the the the"]),
        ("dog", [long_text]),
        (long_text, ["word3 the word4"]),
        (long_text, [long_text.replace("word1 ", "word2 ")]),
        ("Кошка сидит на окне 🐈 猫", ["кошка сидит 猫", "🐈"]),
        ("café naïve Straße ÉCOLE", ["cafe naive strasse école"]),
        ("it's a well-known U.S. x-ray, isn't it?", ["it is a well known us xray", "It's well-known."]),
        ("1,000 cats ... 3.5 kg", ["1000 cats 3.5 kg ...", "1,000 cat"]),
        ("a ||| b", ["a b", "c ||| a"]),  # pycocoevalcap: ||| removed from the hypothesis, splits a reference
        ("a  man\triding", ["a man riding"]),
        ("people are walking along the shore", ["persons walk by the coast", "a person walks on the beach"]),
        ("a giant elephant", ["an enormous elephant", "a huge elephant", "big elephants"]),
        ("he was running quickly", ["he ran fast", "he runs quick", "running was he"]),
        ("word " * 300, ["word"]),
        ("the", ["the"] * 20),
        # two references whose scores tie to the last bit only when Fmean divides as the jar does (once, not by a
        # reciprocal): the first one's statistics must enter the corpus sums
        ("Some kids looks at a surfboard in the park", ["a man holds the sky", "a person holds the snow at 3 pm"]),
    ]
    return [c[0] for c in cases], [c[1] for c in cases]


def test_edge_cases_equal_pycocoevalcap():
    preds, target = _edge_cases()
    _check_against_jar(preds, target)


def _batches(seed: int, sizes=(7, 1, 12, 4)):
    rng = random.Random(seed)
    return [caption_batch(rng, n) for n in sizes]


def _jar_corpus(preds, target):
    return pycocoevalcap_meteor(preds, target)[0]


@pytest.mark.ddp
def test_module_equals_functional_and_jar_with_ddp():
    # corpus statistics are sums: one all-reduce; uneven and empty ranks are in check_metric's DDP scenarios
    check_metric(METEORScore, meteor_score, _jar_corpus, _batches(2), check_forward=False)


@pytest.mark.ddp
def test_sentence_scores_module_with_ddp():
    batches = _batches(3, sizes=(5, 2, 6))
    check_metric(
        METEORScore, meteor_score, lambda p, t: pycocoevalcap_meteor(p, t)[1], batches,
        metric_kwargs={"reduction": "none"}, check_forward=False,
    )


def test_mean_and_sum_of_sentence_scores():
    preds, target = caption_batch(random.Random(4), 30)
    scores = meteor_score(preds, target, reduction="none")
    assert_close(meteor_score(preds, target, reduction="mean"), scores.mean())
    assert_close(meteor_score(preds, target, reduction="sum"), scores.sum())
    metric = METEORScore(reduction="mean")
    metric.update(preds[:10], target[:10])
    metric.update(preds[10:], target[10:])
    assert_close(metric.compute(), scores.mean())


def test_newline_is_whitespace():
    # pycocoevalcap cannot send a newline (its protocol is line-based and hangs); here it is a space, as -norm makes it
    assert_close(
        meteor_score(["a man\nriding a\r\nhorse"], [["a man riding\na horse"]], reduction="none"),
        meteor_score(["a man riding a horse"], [["a man riding a horse"]], reduction="none"),
    )


def test_russian_equals_the_jar():
    rng = random.Random(5)
    words = ("Кошка кошки кошку сидит сидела сидят на окне окнах и в не он она собака собаки бежали бежит по улице , . "
             "зелёный зелёная ёж").split()
    preds = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 9))) for _ in range(120)]
    target = [[" ".join(rng.choice(words) for _ in range(rng.randint(1, 9))) for _ in range(rng.randint(1, 3))]
              for _ in preds]
    # δ = 0.5 weighs content and function words alike, so the jar's function-word list cannot change a score
    _check_against_jar(
        preds, target, jar=lambda p, t: stdio_meteor(p, t, "-l", "ru", "-norm", "-m", "exact stem"), language="ru"
    )


def test_russian_private_use_character_is_not_yo():
    # fuzzing: "ё" against "\ue000" scored 0.12 (the jar: 0): the stemmer's ё swap turned the reference's own U+E000
    # into "ё" on the way back, so the two stems matched
    preds, target = ["ё", "Ё тёмен", "ёлка", "\ue000меду"], [["\ue000"], ["\ue000"], ["\ue000лка"], ["ёмеду"]]
    assert meteor_score(preds, target, language="ru", reduction="none").tolist() == [0.0] * 4
    _check_against_jar(
        preds, target, jar=lambda p, t: stdio_meteor(p, t, "-l", "ru", "-norm", "-m", "exact stem"), language="ru"
    )


def test_stemmers_equal_the_jar(tmp_path: Path):
    import pymorphy3

    morph = pymorphy3.MorphAnalyzer()
    lemmas = ("кошка собака бежать окно красивый сидеть улица человек дом быстро говорить новый ёж зелёный "
              "берёза").split()
    russian = sorted({form.word for lemma in lemmas for form in morph.parse(lemma)[0].lexeme})
    russian += ["\ue000", "ё\ue000", "\ue000меду"]  # the private-use character the stemmer swaps ё for
    english = sorted(tables.synonym_table()._sets)[::97]
    for language, words in (("en", english), ("ru", russian)):
        out = subprocess.run(
            ["java", "-Dfile.encoding=UTF-8", "-cp", str(meteor_jar()), "Stemmer", language],
            input="\n".join(words) + "\n", capture_output=True, text=True, encoding="utf-8", check=True,
        ).stdout.split("\n")
        stem = tables.snowball_stemmer(language)
        assert [stem(word) for word in words] == out[: len(words)], language


def test_java_string_hash():
    assert tables.java_string_hash("") == 0
    assert tables.java_string_hash("hello") == 99162322
    assert tables.java_string_hash("Aa") == tables.java_string_hash("BB") == 2112
    assert tables.java_string_hash("polygenelubricants") == -2**31
    assert tables.java_string_hash("🐈") == 0xD83D * 31 + 0xDC08  # UTF-16 code units


def test_split_references_as_pycocoevalcap_sends_them():
    assert split_references([["a ||| b", "c"]]) == [["a ", " b", "c"]]


def test_alignment_kernel_quirks():
    t = np.array
    # line 2 "x y", line 1 "y x": both single matches are fixed; two chunks
    m = Matches(t([0, 0]), t([0, 1]), t([1, 1]), t([1, 0]), t([1, 1]), t([2, 2]))
    result = beam_align(m, t([2]), t([2]))
    assert result.chosen.tolist() == [True, True] and result.chunks.tolist() == [2]
    # an empty pair and a pair without candidates
    m = Matches(*(t([], dtype=np.int64) for _ in range(6)))
    assert beam_align(m, t([0, 3]), t([2, 0])).chunks.tolist() == [0, 0]
    with pytest.raises(ValueError, match="beam"):
        beam_align(m, t([1]), t([1]), beam=0)
    # CPU tensors are read as arrays
    m = Matches(*(torch.tensor(x) for x in ([0, 0], [0, 1], [1, 1], [1, 0], [1, 1], [2, 2])))
    assert beam_align(m, torch.tensor([2]), torch.tensor([2])).chunks.tolist() == [2]


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"mode": "bleu"}, ValueError, "mode"),
        ({"language": "de"}, ValueError, "language"),
        ({"mode": "nltk", "language": "ru"}, ValueError, "language"),
        ({"alpha": 0.5}, ValueError, "alpha"),
        ({"synonyms": {"a": ["b"]}}, ValueError, "synonyms"),
        ({"reduction": "max"}, ValueError, "reduction"),
    ],
)
def test_bad_options(kwargs, error, match):
    with pytest.raises(error, match=match):
        meteor_score(["a"], [["a"]], **kwargs)
    with pytest.raises(error, match=match):
        METEORScore(**kwargs)


def test_bad_inputs():
    with pytest.raises(ValueError, match="target"):
        meteor_score(["a", "b"], [["a"]])
    with pytest.raises(ValueError, match="target"):
        meteor_score(["a"], [[]])
    with pytest.raises(TypeError, match="preds"):
        meteor_score([1], [["a"]])
    with pytest.raises(TypeError, match="target"):
        meteor_score(["a"], [[None]])


def test_empty_batch_and_no_data():
    assert meteor_score([], []).item() == 0.0
    assert meteor_score([], [], reduction="none").shape == (0,)
    assert METEORScore().compute().item() == 0.0


def test_one_sample_keeps_its_dimension():
    metric = METEORScore(reduction="none")
    metric.update(["a cat"], [["a cat"]])
    assert metric.compute().shape == (1,)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.skipif(not meteor_data_installed(), reason="METEOR 1.5's data (pycocoevalcap) is not installed")
def test_cuda_equals_cpu():
    preds, target = caption_batch(random.Random(6), 200)
    for reduction in ("corpus", "none"):
        assert_close(
            meteor_score(preds, target, reduction=reduction, device="cuda").cpu(),
            meteor_score(preds, target, reduction=reduction),
        )


@pytest.mark.slow
def test_large_random_corpus_equals_pycocoevalcap():
    preds, target = caption_batch(random.Random(7), 6000)
    _check_against_jar(preds, target)


def test_command_line_task(tmp_path: Path, capsys):
    import json

    from gpumetrics import cli

    preds, target = caption_batch(random.Random(8), 12)
    (tmp_path / "p.jsonl").write_text("".join(json.dumps({"id": i, "prediction": p}) + "\n"
                                              for i, p in enumerate(preds)))
    (tmp_path / "r.jsonl").write_text("".join(json.dumps({"id": i, "references": t}) + "\n"
                                              for i, t in enumerate(target)))
    (tmp_path / "syn.tsv").write_text("man\tperson\n", encoding="utf-8")
    tasks = [
        {"name": "jar", "metric": "meteor", "predictions": "p.jsonl", "references": "r.jsonl"},
        {"name": "nltk", "metric": "meteor", "options": {"mode": "nltk", "synonyms": "syn.tsv"},
         "predictions": "p.jsonl", "references": "r.jsonl"},
    ]
    (tmp_path / "c.yaml").write_text(json.dumps({"tasks": tasks}))
    assert cli.main(["evaluate", str(tmp_path / "c.yaml"), "--output",
                     str(tmp_path / "out.json")]) == 0, capsys.readouterr().err
    report = {task["name"]: task["score"] for task in json.loads((tmp_path / "out.json").read_text())["tasks"]}
    assert report["jar"] == pytest.approx(meteor_score(preds, target).item(), abs=1e-12)
    expected = meteor_score(preds, target, mode="nltk", synonyms=str(tmp_path / "syn.tsv")).item()
    assert report["nltk"] == pytest.approx(expected, abs=1e-12)


def test_tables_are_loaded_once_per_process():
    assert tables.paraphrase_table() is tables.paraphrase_table()
    trie = tables.paraphrase_table().trie  # host arrays: the matchers walk it in numpy, on every device
    assert all(isinstance(getattr(trie, name), np.ndarray) for name in trie._fields[1:])
    assert tables.synonym_table() is tables.synonym_table()
