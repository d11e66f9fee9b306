"""CodeBLEU against ``codebleu.calc_codebleu`` 0.7.0 (mode "codebleu-0.7", every key to 1e-9), the paper mode's
formula on hand-checked cases, the module under the harness (forward, merge_state, state_dict, pickle, DDP), bad input.

Data flow is ours (``gpumetrics/text/codebleu/dataflow.py``, one walker over per-language tables); codebleu's own DFG
functions are only the oracle (tests/text/test_codebleu_dataflow.py compares the edges directly).
"""

from __future__ import annotations

import math
import random
import warnings

import pytest
import torch

import gpumetrics
from gpumetrics.functional import codebleu_score
from gpumetrics.text.codebleu import LANGUAGES, parsing
from gpumetrics.text.codebleu.keywords import KEYWORDS
from gpumetrics.text.codebleu.ngram import ngram_statistics
from tests.helpers.harness import check_metric
from testkit.codebleu_data import SNIPPETS, edit_program, edit_snippet, humaneval_solutions
from tests.helpers.oracles import import_oracle

codebleu = import_oracle("codebleu", "codebleu==0.7.0")


def reference(preds, target, lang, **options):
    """codebleu 0.7.0 with our argument order; its log warning for no data flow silenced."""
    import logging

    logging.getLogger().setLevel(logging.ERROR)
    return codebleu.calc_codebleu(target, preds, lang, **options)


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def test_keywords_equal_codebleu_files():
    from pathlib import Path

    folder = Path(codebleu.__file__).parent / "keywords"
    for lang in LANGUAGES:
        words = [line.strip() for line in (folder / f"{lang}.txt").read_text(encoding="utf-8").splitlines()]
        assert KEYWORDS[lang] == frozenset(words), lang


def test_comment_stripping_and_token_index_equal_codebleu():
    from codebleu.parser import index_to_code_token, remove_comments_and_docstrings, tree_to_token_index

    rng = random.Random(3)
    programs = [(code, "python") for code in humaneval_solutions()[:60]]
    programs += [(edit_program(code, rng), "python") for code, _ in programs]
    programs += [(code, lang) for lang, codes in SNIPPETS.items() for code in codes]
    programs += [("x = 'é' + y  # ü\ndef f(:\n", "python"), ("int a = 1; /* open", "c"), ('s = "a\\"//b";', "java")]
    for code, lang in programs:
        try:
            expected = remove_comments_and_docstrings(code, lang)
        except Exception:
            expected = code
        assert parsing.strip_comments(code, lang) == expected, (lang, code)
        root = parsing.parse(code, lang)
        lines = code.split("\n")
        table = {span: (k, index_to_code_token(span, lines)) for k, span in enumerate(tree_to_token_index(root))}
        assert parsing.index_to_code(root, code) == table, (lang, code)


def test_ngram_statistics_by_hand():
    # hypothesis "a a b", references "a b b" and "a c": BLEU clips by the max over references, the weighted match
    # sums per reference; keyword "a" weighs 5 fifths, others 1
    stats = ngram_statistics([["a", "a", "b"]], [[["a", "b", "b"], ["a", "c"]]], frozenset({"a"}), torch.device("cpu"))
    row = stats[0].tolist()
    assert row[0:4] == [2.0, 1.0, 0.0, 0.0]  # unigrams: a min(2, 1) + b min(1, 2); bigram "a b"
    assert row[4:8] == [3.0, 2.0, 1.0, 1.0]  # max(1, n-grams of the hypothesis)
    assert row[8:10] == [3.0, 3.0]  # hypothesis length, closest reference length (3 vs 2: tie → shorter? |3-3|=0)
    # recall: ref 1: a 5·min(1,2) + b 1·min(2,1) = 6; ref 2: a 5·1 = 5 → 11 fifths; bigrams: "a b" 1 + 0
    assert row[10:14] == [11.0, 1.0, 0.0, 0.0]
    # denominators: ref 1: 5+1+1 = 7, ref 2: 5+1 = 6 → 13 fifths; bigrams max(1, 2) + max(1, 1) = 3, then 1 + 1
    assert row[14:18] == [13.0, 3.0, 2.0, 2.0]
    # paper: weighted clipped unigrams a 5·min(2, 1) + b 1·min(1, 2) = 6 over hypothesis weights 5+5+1 = 11
    assert row[18:20] == [6.0, 11.0]


# ------------------------------------------------------------------------------------------------ parity
def _close(ours, expected, what):
    assert set(ours) == set(expected)
    for key, value in expected.items():
        assert abs(float(ours[key]) - value) <= 1e-9, (what, key, float(ours[key]), value)


def test_humaneval_with_edits_equals_codebleu():
    rng = random.Random(0)
    solutions = humaneval_solutions()
    assert len(solutions) == 164
    preds = [edit_program(code, rng) for code in solutions]
    _close(_quiet(codebleu_score, preds, solutions, language="python"), reference(preds, solutions, "python"), "1 ref")
    # the references edited too, and the roles swapped
    edited = [edit_program(code, rng) for code in solutions]
    _close(_quiet(codebleu_score, edited, preds, language="python"), reference(edited, preds, "python"), "swapped")


def test_humaneval_several_references_equal_codebleu():
    rng = random.Random(1)
    solutions = humaneval_solutions()
    preds = [edit_program(code, rng) for code in solutions]
    target = [[code] + [edit_program(code, rng) for _ in range(rng.randint(0, 2))] for code in solutions]
    target[5] = [solutions[5], ""]  # an empty reference next to a real one
    _close(_quiet(codebleu_score, preds, target, language="python"), reference(preds, target, "python"), "several refs")


def test_sentence_level_equals_codebleu_per_sample():
    rng = random.Random(2)
    solutions = humaneval_solutions()[:24]
    preds = [edit_program(code, rng) for code in solutions]
    ours = _quiet(codebleu_score, preds, solutions, language="python", reduction="none")
    for i, (pred, ref) in enumerate(zip(preds, solutions)):
        _close({key: value[i] for key, value in ours.items()}, reference([pred], [ref], "python"), f"sample {i}")


@pytest.mark.parametrize("lang", sorted(SNIPPETS))
def test_other_languages_equal_codebleu(lang):
    rng = random.Random(lang)
    preds, target = [], []
    for _ in range(3):
        for code in SNIPPETS[lang]:
            preds.append(edit_snippet(code, rng))
            target.append([code, edit_snippet(code, rng)] if rng.random() < 0.5 else code)
    _close(_quiet(codebleu_score, preds, target, language=lang), reference(preds, target, lang), lang)


def test_weights_and_tokenizer_equal_codebleu():
    solutions = humaneval_solutions()[:30]
    rng = random.Random(4)
    preds = [edit_program(code, rng) for code in solutions]

    def tokenizer(text):
        return [t for t in text.replace("(", " ( ").replace(")", " ) ").split() if t]

    weights = (0.1, 0.2, 0.3, 0.4)
    _close(_quiet(codebleu_score, preds, solutions, language="python", weights=weights, tokenize=tokenizer),
           reference(preds, solutions, "python", weights=weights, tokenizer=tokenizer), "weights + tokenizer")


def test_dataflow_zero_counts_as_one_in_codebleu_07_only():
    # data flow in the reference, none matched: codebleu 0.7 counts the 0 as 1 in the total
    preds, target = ["print(1)"], ["x = 1\ny = x + 2"]
    expected = reference(preds, target, "python")
    assert expected["dataflow_match_score"] == 0
    ours = _quiet(codebleu_score, preds, target, language="python")
    _close(ours, expected, "0 → 1")
    paper = _quiet(codebleu_score, preds, target, language="python", mode="paper")
    assert float(paper["dataflow_match_score"]) == 0
    parts = [float(paper[k]) for k in ("ngram_match_score", "weighted_ngram_match_score", "syntax_match_score")]
    assert float(paper["codebleu"]) == pytest.approx(0.25 * sum(parts), abs=1e-12)


def test_no_reference_dataflow_warns():
    with pytest.warns(UserWarning, match="no data flow"):
        result = codebleu_score(["return 1"], ["pass"], language="python")
    assert float(result["dataflow_match_score"]) == 0


# ------------------------------------------------------------------------------------------------ paper mode
def test_docstring_worked_example():
    preds = ["def add(a, b):\n    return a + b"]
    target = [["def sum(first, second):\n    return second + first"]]
    old = codebleu_score(preds, target, language="python")
    _close(old, reference(preds, target, "python"), "worked example")
    # by hand: 3/7 unigrams, no bigram → (3/7 · 0.1/6 · 0.1/5 · 0.1/4)^(1/4); weighted unigram recall 2.2/3
    bleu = (3 / 7 * 0.1 / 6 * 0.1 / 5 * 0.1 / 4) ** 0.25
    weighted = (2.2 / 3 * 0.1 / 6 * 0.1 / 5 * 0.1 / 4) ** 0.25
    assert float(old["ngram_match_score"]) == pytest.approx(bleu, abs=1e-12)
    assert float(old["weighted_ngram_match_score"]) == pytest.approx(weighted, abs=1e-12)
    paper = codebleu_score(preds, target, language="python", mode="paper")
    assert float(paper["ngram_match_score"]) == 0  # no smoothing
    assert float(paper["weighted_ngram_match_score"]) == pytest.approx(2.2 / 3, abs=1e-12)
    assert float(paper["codebleu"]) == pytest.approx(0.25 * (0 + 2.2 / 3 + 1 + 1), abs=1e-12)
    assert round(float(old["codebleu"]), 4) == 0.5233 and round(float(paper["codebleu"]), 4) == 0.6833


def test_paper_syntax_match_is_clipped():
    # the reference has two `(identifier)` argument lists' worth of equal subtrees; the candidate one
    target, preds = ["f(a)\ng(b)"], ["f(a)"]
    old = _quiet(codebleu_score, preds, target, language="python")
    paper = _quiet(codebleu_score, preds, target, language="python", mode="paper")
    assert float(paper["syntax_match_score"]) < float(old["syntax_match_score"])
    _close(old, reference(preds, target, "python"), "membership")


def test_paper_mode_strips_the_candidate_once():
    preds = ["def f(x):\n    'doc'\n    return x"]
    target = [["def f(y):\n    return y", "def f(z):\n    return z"]]
    paper = _quiet(codebleu_score, preds, target, language="python", mode="paper")
    assert float(paper["syntax_match_score"]) == 1.0


# ------------------------------------------------------------------------------------------------ module
def _batches(preds, target, sizes):
    out, start = [], 0
    for size in sizes:
        out.append((preds[start: start + size], target[start: start + size]))
        start += size
    return out


def _hash_seed_free(code: str, lang: str) -> bool:
    """No data-flow token of the program has parents of two different names (the walker and the merge list them in
    Python's set order of strings, which follows ``PYTHONHASHSEED``): its edges are then the same in every process,
    spawned DDP workers included."""
    from gpumetrics.text.codebleu.dataflow import DataflowError, dataflow_edges

    root = parsing.parse(code, lang)
    try:
        edges = dataflow_edges(root, parsing.index_to_code(root, code), lang)
    except DataflowError:
        return True
    names: dict[int, set] = {}
    for edge in edges:
        names.setdefault(edge[1], set()).update(edge[3])
    return all(len(parents) < 2 for parents in names.values())


@pytest.mark.ddp
def test_module_corpus_ddp():
    # Spawned workers have their own hash seeds: programs whose data-flow score depends on it (codebleu's quirk,
    # see gpumetrics.text.codebleu.flow_match) are left out here, so that every rank must equal one process exactly
    rng = random.Random(5)
    solutions = [code for code in humaneval_solutions()[:80]
                 if _hash_seed_free(parsing.strip_comments(code.strip(), "python"), "python")]
    preds = [edit_program(code, rng) for code in solutions]
    keep = [i for i, code in enumerate(preds) if _hash_seed_free(parsing.strip_comments(code.strip(), "python"),
                                                                 "python")]
    solutions, preds = [solutions[i] for i in keep][:40], [preds[i] for i in keep][:40]
    target = [[code, code.replace("    ", "  ")] if i % 3 == 0 else code for i, code in enumerate(solutions)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_metric(gpumetrics.CodeBLEUScore, codebleu_score, lambda p, t: reference(p, t, "python"),
                     _batches(preds, target, [1, 17, 22]), metric_kwargs={"language": "python"})


@pytest.mark.ddp
def test_module_sentence_scores_paper_ddp():
    rng = random.Random(6)
    pairs = [(edit_snippet(code, rng), code) for code in SNIPPETS["c_sharp"] * 4]
    pairs = [(pred, code) for pred, code in pairs
             if _hash_seed_free(parsing.strip_comments(pred, "c_sharp"), "c_sharp")]
    preds, codes = [p for p, _ in pairs], [c for _, c in pairs]
    assert len(preds) >= 6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_metric(gpumetrics.CodeBLEUScore, codebleu_score, None, _batches(preds, codes, [2, len(preds) - 2]),
                     metric_kwargs={"language": "c_sharp", "mode": "paper", "reduction": "none"})


def test_module_mean_and_signature():
    solutions = humaneval_solutions()[:6]
    metric = gpumetrics.CodeBLEUScore(language="python", reduction="mean")
    metric.update(solutions[:3], solutions[:3])
    metric.update(solutions[3:], solutions[3:])
    result = metric.compute()
    assert all(float(value) == pytest.approx(1.0, abs=1e-12) for value in result.values())
    assert metric.signature().startswith("codebleu|mode:codebleu-0.7|lang:python|tok:split|reduction:mean")
    assert gpumetrics.CodeBLEUScore(preset="aij2021").signature().startswith("codebleu|mode:aij2021|lang:python")


def test_empty_batch_gives_zero():
    result = codebleu_score([], [], language="python")
    assert {key: float(value) for key, value in result.items()} == dict.fromkeys(result, 0.0)
    assert all(value.numel() == 0 for value in codebleu_score([], [], language="go", reduction="none").values())
    with pytest.raises(ZeroDivisionError):  # what codebleu does with no sample
        reference([], [], "python")


def test_task_metric_and_suite():
    from gpumetrics.harness.registry import get_metric, get_suite

    entry = get_metric("codebleu")
    assert entry.primary == "codebleu"
    assert isinstance(entry.build({"language": "rust"}), gpumetrics.CodeBLEUScore)
    tasks = {task.name: task for task in get_suite("aij2021").tasks}
    assert tasks["Code2code"].metric == "codebleu" and tasks["Code2code"].options == {"preset": "aij2021"}


# ------------------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("kwargs, error, message", [
    ({"language": "cobol"}, ValueError, "`language` must be one of"),
    ({}, ValueError, "`language` is required"),
    ({"language": "python", "mode": "codebleu"}, ValueError, "`mode` must be one of"),
    ({"language": "python", "preset": "aij2022"}, ValueError, "`preset` must be one of"),
    ({"language": "python", "reduction": "max"}, ValueError, "`reduction` must be one of"),
    ({"language": "python", "weights": (1, 2, 3)}, ValueError, "`weights` must be 4 numbers"),
    ({"language": "python", "weights": "0.25"}, TypeError, "`weights` must be a sequence"),
    ({"language": "python", "weights": (0.25, 0.25, math.nan, 0.25)}, ValueError, "`weights` must be finite"),
    ({"language": "python", "tokenize": "split"}, TypeError, "`tokenize` must be a callable"),
    ({"language": "java", "preset": "aij2021"}, ValueError, "scores Python"),
    ({"preset": "aij2021", "mode": "paper"}, ValueError, "leave `mode`"),
    ({"language": "python", "detokenize": True}, ValueError, "`detokenize` applies to preset='aij2021'"),
    ({"preset": "aij2021", "detokenize": "yes"}, TypeError, "`detokenize` must be a bool"),
    ({"lang": "python"}, TypeError, "unexpected keyword argument 'lang'"),  # renamed `language` (0.x API)
    ({"language": "python", "tokenizer": str.split}, TypeError, "unexpected keyword argument 'tokenizer'"),
])
def test_bad_options(kwargs, error, message):
    with pytest.raises(error, match=message):
        codebleu_score(["x = 1"], ["x = 1"], **kwargs)
    with pytest.raises(error, match=message):
        gpumetrics.CodeBLEUScore(**kwargs)


@pytest.mark.parametrize("preds, target, error, message", [
    ([1], ["x"], TypeError, r"`preds\[0\]` must be a string"),
    (None, ["x"], TypeError, "`preds` must be a string or a sequence"),
    (["x"], [b"x"], TypeError, r"`target\[0\]` must be a string or a list"),
    (["x"], [["x", 2]], TypeError, r"`target\[0\]\[1\]` must be a string"),
    (["x"], [[]], ValueError, "holds no reference"),
    (["x", "y"], ["x"], ValueError, "same number of samples"),
])
def test_bad_inputs(preds, target, error, message):
    with pytest.raises(error, match=message):
        codebleu_score(preds, target, language="python")


def test_bad_tokenizer_output():
    with pytest.raises(TypeError, match="`tokenize` must return a list of strings"):
        codebleu_score(["x = 1"], ["x = 1"], language="python", tokenize=lambda text: 3)


def test_missing_grammar_says_what_to_install(monkeypatch):
    from tests.helpers.imports import refuse_import

    parsing.load_grammar.cache_clear()
    refusing = refuse_import(monkeypatch, "tree_sitter_ruby")
    monkeypatch.setattr("importlib.import_module", lambda name: refusing(name))
    try:
        with pytest.raises(ImportError, match=r"tree-sitter-ruby: pip install 'gpumetrics\[code\]'"):
            parsing.grammar("ruby")
    finally:
        parsing.load_grammar.cache_clear()
