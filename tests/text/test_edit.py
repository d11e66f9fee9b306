"""Edit-distance metrics against rapidfuzz, jiwer, torchmetrics and nltk; module == functional; DDP; bad inputs."""

import random
import re

import jiwer
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nltk.metrics.distance import edit_distance as nltk_edit_distance
from rapidfuzz.distance import Levenshtein
from torchmetrics.functional.text import char_error_rate as tm_char_error_rate
from torchmetrics.functional.text import edit_distance as tm_edit_distance
from torchmetrics.functional.text import word_error_rate as tm_word_error_rate

import gpumetrics
from gpumetrics.functional import char_error_rate, edit_distance, normalized_edit_similarity, word_error_rate
from gpumetrics.catalog import get_metric
from tests.helpers.harness import assert_close, check_metric
from testkit.text_data import random_text, related_text

SIZES = [7, 0, 1, 29, 12]  # includes an empty and a single-sample batch
SPECIAL = ["", "a", "é", "e\u0301", "🐈\u200d⬛", "猫", "Ёж"]
EDGE_LENGTHS = [1, 63, 64, 65, 128, 129]
CHARS = "abc АбвЁж 中文 😀 e\u0301ß"


def _long(rng, n):
    return "".join(rng.choice(CHARS) for _ in range(n))


def _pair(rng):
    kind = rng.random()
    if kind < 0.1:
        return rng.choice(SPECIAL), rng.choice(SPECIAL)
    if kind < 0.2:
        return _long(rng, rng.choice(EDGE_LENGTHS)), _long(rng, rng.choice(EDGE_LENGTHS))
    target = random_text(rng, 10)
    return related_text(rng, target), target


def make_batches(seed, sizes=SIZES, long_pair=True, clean_spaces=False):
    """``(preds, target)`` batches with Unicode, empty strings, edge lengths and (once) a 5,000+ char pair."""
    rng = random.Random(seed)
    batches = []
    for size in sizes:
        pairs = [_pair(rng) for _ in range(size)]
        batches.append(([p for p, _ in pairs], [t for _, t in pairs]))
    if long_pair:
        source = _long(rng, 5200)
        edited = source[:1000] + _long(rng, 30) + source[1100:4000] + source[4100:]
        batches[-1][0].append(edited)
        batches[-1][1].append(source)
    if clean_spaces:  # one space between words, none at the ends (jiwer's default transforms are then no-ops)
        batches = [([" ".join(p.split()) for p in preds], [" ".join(t.split()) for t in target])
                   for preds, target in batches]
    return batches


def _rf(preds, target, words=False):
    if words:
        return [Levenshtein.distance(p.split(), t.split()) for p, t in zip(preds, target)]
    return [Levenshtein.distance(p, t) for p, t in zip(preds, target)]


def _kw(fn, **fixed):
    return lambda preds, target: fn(preds, target, **fixed)


# -------------------------------------------------------------------------------------------------- edit distance
@pytest.mark.ddp
def test_edit_distance_sum_matches_rapidfuzz_and_ddp():
    check_metric(gpumetrics.EditDistance, edit_distance, lambda p, t: sum(_rf(p, t)), make_batches(0),
                 {"reduction": "sum"})


def test_edit_distance_per_pair_matches_rapidfuzz_module_and_functional():
    # not through check_metric: torchmetrics' merge_state puts the incoming pairs first, so per-pair order differs
    for backend, batches in (("auto", make_batches(0)), ("torch", make_batches(0, long_pair=False))):
        preds, target = sum((b[0] for b in batches), []), sum((b[1] for b in batches), [])
        expected = _rf(preds, target)
        assert edit_distance(preds, target, reduction="none", backend=backend).tolist() == expected
        metric = gpumetrics.EditDistance(reduction="none", backend=backend)
        for i, batch in enumerate(batches):
            assert metric(*batch).tolist() == _rf(*batch), f"forward on batch {i}"
        assert metric.compute().tolist() == expected
        assert metric.compute().dtype == torch.long
    single = gpumetrics.EditDistance(reduction="none")
    single.update(["abc"], ["abd"])
    assert single.compute().shape == (1,)


def _short(batches, limit=25):
    """Pairs of at most ``limit`` characters: torchmetrics' ``edit_distance`` searches a beam of 25 cells around the
    diagonal (sacrebleu TER's helper), exact only when no cell of the DP lies outside it."""
    return [([p[:limit] for p in preds], [t[:limit] for t in target]) for preds, target in batches]


def test_edit_distance_mean_matches_torchmetrics_where_its_beam_is_exact():
    batches = _short(make_batches(1, long_pair=False))
    check_metric(gpumetrics.EditDistance, edit_distance, lambda p, t: tm_edit_distance(p, t, reduction="mean"),
                 batches, {"reduction": "mean"}, ddp=False, reference_atol=1e-5)  # torchmetrics: float32
    preds, target = sum((b[0] for b in batches), []), sum((b[1] for b in batches), [])
    assert_close(edit_distance(preds, target, reduction="sum"), tm_edit_distance(preds, target, reduction="sum"))
    assert_close(edit_distance(preds, target, reduction="none"), tm_edit_distance(preds, target, reduction="none"))


def test_edit_distance_is_exact_where_torchmetrics_beam_overestimates():
    # known divergence: the best alignment puts "кошк" 40 cells off the diagonal; torchmetrics says 47
    preds, target = ["кошки"], ["well-known dog\tnaïve  Москва -5 Z̤͂  три\tЁж% кошка"]
    assert edit_distance(preds, target, reduction="sum").item() == Levenshtein.distance(preds[0], target[0]) == 46
    assert tm_edit_distance(preds, target, reduction="sum").item() == 47


def test_edit_distance_word_unit_matches_rapidfuzz_on_tokens_both_backends():
    batches = make_batches(2)
    preds, target = sum((b[0] for b in batches), []), sum((b[1] for b in batches), [])
    for backend in ("torch", "rapidfuzz"):
        check_metric(gpumetrics.EditDistance, edit_distance, lambda p, t: sum(_rf(p, t, words=True)),
                     batches, {"unit": "word", "reduction": "sum", "backend": backend}, ddp=False)
        got = edit_distance(preds, target, unit="word", reduction="none", backend=backend)
        assert got.tolist() == _rf(preds, target, words=True)


def test_torch_backend_equals_rapidfuzz_backend_for_every_metric():
    batches = make_batches(3, long_pair=False)  # long strings: tests/kernels/test_levenshtein.py
    preds, target = sum((b[0] for b in batches), []), sum((b[1] for b in batches), [])
    for fn, extra in [(edit_distance, {"reduction": "none"}), (edit_distance, {"unit": "word", "reduction": "sum"}),
                      (char_error_rate, {}), (word_error_rate, {}),
                      (normalized_edit_similarity, {}), (normalized_edit_similarity, {"preset": "aij2022"})]:
        torch_value = fn(preds, target, backend="torch", **extra)
        assert_close(torch_value, fn(preds, target, backend="rapidfuzz", **extra), what=fn.__name__)
        assert_close(torch_value, fn(preds, target, backend="auto", **extra), what=fn.__name__)


# --------------------------------------------------------------------------------------------------- CER and WER
def _jiwer_cer_no_strip(preds, target):
    return jiwer.cer(target, preds, reference_transform=jiwer.ReduceToListOfListOfChars(),
                     hypothesis_transform=jiwer.ReduceToListOfListOfChars())


@pytest.mark.ddp
def test_cer_matches_jiwer_without_strip_and_ddp():
    check_metric(gpumetrics.CharErrorRate, char_error_rate, _jiwer_cer_no_strip, make_batches(4))


def test_cer_matches_torchmetrics_and_jiwer_default_on_stripped_text():
    check_metric(gpumetrics.CharErrorRate, char_error_rate, tm_char_error_rate, make_batches(5, long_pair=False),
                 ddp=False, reference_atol=1e-6)  # torchmetrics computes in float32
    batches = make_batches(6, long_pair=False, clean_spaces=True)
    check_metric(gpumetrics.CharErrorRate, char_error_rate, lambda p, t: jiwer.cer(t, p), batches,
                 {"backend": "torch"}, ddp=False)


def test_wer_matches_jiwer_default_on_space_separated_text():
    # WordErrorRate shares its states, update and DDP path with CharErrorRate (tested under DDP above)
    check_metric(gpumetrics.WordErrorRate, word_error_rate, lambda p, t: jiwer.wer(t, p),
                 make_batches(7, clean_spaces=True), ddp=False)


def test_wer_matches_torchmetrics_on_raw_whitespace():
    check_metric(gpumetrics.WordErrorRate, word_error_rate, tm_word_error_rate, make_batches(8), ddp=False,
                 reference_atol=1e-6)  # torchmetrics computes in float32
    check_metric(gpumetrics.WordErrorRate, word_error_rate, tm_word_error_rate, make_batches(9, long_pair=False),
                 {"backend": "torch"}, ddp=False, reference_atol=1e-6)


_WHITESPACE = [" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u2028", "\u3000", " \t ", "\x1c", ""]


def _raw_whitespace_batches(seed, sizes=(9, 1, 14)):
    """Words joined by any whitespace (lone tabs, newlines, NBSP, runs), with leading/trailing whitespace."""
    rng = random.Random(seed)

    def text():
        words = [rng.choice(["a", "b", "кот", "猫", "😀", "e\u0301"]) for _ in range(rng.choice([0, 1, 3, 6]))]
        joined = "".join(w + rng.choice(_WHITESPACE) for w in words)
        return rng.choice(_WHITESPACE) + joined

    return [([text() for _ in range(n)], [text() for _ in range(n)]) for n in sizes]


@pytest.mark.parametrize("backend", ["rapidfuzz", "torch"])
def test_jiwer_transform_matches_jiwer_defaults_on_raw_whitespace(backend):
    # default transforms follow torchmetrics (str.split / no strip); transform="jiwer" follows jiwer on any text
    batches = _raw_whitespace_batches(20)
    check_metric(gpumetrics.WordErrorRate, word_error_rate, lambda p, t: jiwer.wer(t, p), batches,
                 {"transform": "jiwer", "backend": backend}, ddp=False)
    check_metric(gpumetrics.CharErrorRate, char_error_rate, lambda p, t: jiwer.cer(t, p), batches,
                 {"transform": "jiwer", "backend": backend}, ddp=False)
    preds, target = ["a\tb c", " \n"], ["a b\u00a0c", "\t"]  # lone tab / NBSP join words; all-blank refs
    assert_close(word_error_rate(preds, target, transform="jiwer"), jiwer.wer(target, preds))
    assert_close(word_error_rate(preds[1:], target[1:], transform="jiwer"), jiwer.wer(target[1:], preds[1:]))
    assert gpumetrics.WordErrorRate(transform="jiwer").signature().startswith("wer|tokenizer:jiwer")
    with pytest.raises(ValueError, match="`transform`"):
        gpumetrics.CharErrorRate(transform="whitespace")


def test_error_rates_with_only_empty_references_follow_jiwer_not_nan():
    preds, target = ["a b", ""], ["", ""]
    assert_close(word_error_rate(preds, target), jiwer.wer(target, preds))
    assert word_error_rate(["", ""], ["", ""]).item() == 0.0
    assert char_error_rate(["ab"], [""]).item() == 2.0
    assert gpumetrics.CharErrorRate().compute().item() == 0.0


# ------------------------------------------------------------------------------------ normalised edit similarity
def _golds(rng, target):
    return [[t] + [random_text(rng, 10) for _ in range(rng.choice([0, 0, 1, 3]))] for t in target]


def make_ned_batches(seed, long_pair=True):
    rng = random.Random(seed + 100)
    batches = make_batches(seed, long_pair=long_pair)
    return [(preds, _golds(rng, target)) for preds, target in batches]


def _ned_default_reference(preds, target):
    """rapidfuzz's normalized similarity (1 − lev / max len, 1 for two empty strings), max over golds, mean."""
    scores = [max(Levenshtein.normalized_similarity(p, g) for g in golds) for p, golds in zip(preds, target)]
    return sum(scores) / len(scores)


def _ned_aij2022_reference(preds, target):
    """AIJ-2022 TRitW: nltk edit distance, 0 when either string is empty, max over golds, mean."""

    def one(p, g):
        if not p or not g:
            return 0.0
        return 1 - nltk_edit_distance(p, g) / max(len(p), len(g))

    scores = [max(one(p, g) for g in golds) for p, golds in zip(preds, target)]
    return sum(scores) / len(scores)


def test_ned_default_matches_rapidfuzz_normalized_similarity():
    check_metric(gpumetrics.NormalizedEditSimilarity, normalized_edit_similarity, _ned_default_reference,
                 make_ned_batches(10), ddp=False, atol=1e-12)


@pytest.mark.ddp
def test_ned_aij2022_matches_nltk_rules_and_ddp():
    batches = make_ned_batches(11, long_pair=False)  # nltk's pure-Python DP would take minutes on 5,200 chars
    check_metric(gpumetrics.NormalizedEditSimilarity, normalized_edit_similarity, _ned_aij2022_reference,
                 batches, {"preset": "aij2022"}, atol=1e-12)


def test_ned_presets_on_empty_strings_and_single_strings():
    assert normalized_edit_similarity([""], [""]).item() == 1.0
    assert normalized_edit_similarity([""], [""], preset="aij2022").item() == 0.0
    assert normalized_edit_similarity(["abc"], [["", "abc"]], preset="aij2022").item() == 1.0
    assert normalized_edit_similarity("abcd", "abce").item() == 0.75
    assert normalized_edit_similarity([], []).item() == 0.0


def test_ned_aij2022_task_registered_for_configs():
    entry = get_metric("ned_aij2022")
    metric = entry.build()
    assert metric.preset == "aij2022"
    preds = ["hello", entry.empty_prediction]  # a missing prediction becomes "" and scores 0
    metric.update(*entry.update_args(preds, [["help", "hello!"], ["x"]]))
    assert_close(metric.compute(), _ned_aij2022_reference(preds, [["help", "hello!"], ["x"]]))
    for name in ("normalized_edit_similarity", "cer", "wer"):
        get_metric(name).build()


# ---------------------------------------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("fn", [edit_distance, char_error_rate, word_error_rate, normalized_edit_similarity])
def test_bad_inputs_name_the_argument(fn):
    with pytest.raises(TypeError, match="`preds`"):
        fn(None, ["a"])
    with pytest.raises(TypeError, match="`target"):
        fn(["a"], None)
    with pytest.raises(TypeError, match=r"`preds\[1\]`"):
        fn(["a", 3], ["a", "b"])
    with pytest.raises(TypeError, match=r"`preds\[5000\]`"):  # past the first slice of the rapidfuzz loop
        fn(["a"] * 5000 + [["a"]], ["b"] * 5001)
    with pytest.raises(TypeError, match=r"`target\[4\]`"):
        fn(("a",) * 5, ("b", "c", "d", "e", None))
    with pytest.raises(TypeError, match=r"`target\[0\]"):
        fn(["a"], [b"a"])
    # rapidfuzz scores items before they are held to str: items it takes (a dict indexed from 0), items it refuses
    # with another error (a dict without key 0: KeyError) and a chunk past the one-call size all name the item
    with pytest.raises(TypeError, match=r"`preds\[1\]`"):
        fn(["a", {0: "a"}], ["a", "b"])
    with pytest.raises(TypeError, match=r"`preds\[1\]`"):
        fn(["a", {"k": 1}], ["a", "b"])
    with pytest.raises(TypeError, match=r"`target\[9000\]`"):
        fn(["a"] * 9001, ["b"] * 9000 + [b"b"])
    with pytest.raises(ValueError, match="same number of samples"):
        fn(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="`backend`"):
        fn(["a"], ["a"], backend="cuda")


def test_bad_options_name_the_argument():
    with pytest.raises(ValueError, match="`unit`"):
        gpumetrics.EditDistance(unit="byte")
    with pytest.raises(ValueError, match="`reduction`"):
        edit_distance(["a"], ["b"], reduction="max")
    with pytest.raises(ValueError, match="`preset`"):
        gpumetrics.NormalizedEditSimilarity(preset="icdar")
    with pytest.raises(ValueError, match=r"`target\[0\]`"):
        normalized_edit_similarity(["a"], [[]])
    metric = gpumetrics.WordErrorRate()
    with pytest.raises(TypeError, match=r"`preds\[0\]`"):
        metric.update([None], ["a"])


def test_signatures_name_the_options():
    assert gpumetrics.NormalizedEditSimilarity(preset="aij2022").signature().startswith(
        "normalized_edit_similarity|preset:aij2022")
    assert gpumetrics.EditDistance(unit="word").signature().startswith("edit_distance|unit:word")
    assert gpumetrics.CharErrorRate().signature().startswith("cer|")
    assert gpumetrics.WordErrorRate().signature().startswith("wer|tokenizer:whitespace")


def test_ned_aij2022_from_a_config_through_the_cli(tmp_path):
    import json
    from pathlib import Path

    from gpumetrics import cli

    examples = Path(__file__).resolve().parents[2] / "examples" / "htr"
    config = tmp_path / "tritw.yaml"
    config.write_text(
        "name: tritw\ntasks:\n"
        f"  - name: TRitW\n    metric: ned_aij2022\n    predictions: {examples / 'predictions.json'}\n"
        f"    references: {examples / 'references.json'}\n"
        f"  - name: CER\n    metric: cer\n    predictions: {examples / 'predictions.json'}\n"
        f"    references: {examples / 'references.json'}\n",
        encoding="utf-8",
    )
    report = tmp_path / "report.json"
    assert cli.main(["evaluate", str(config), "--output", str(report), "--batch-size", "3"]) == 0
    text = report.read_text(encoding="utf-8")
    predictions = json.loads((examples / "predictions.json").read_text(encoding="utf-8"))
    references = json.loads((examples / "references.json").read_text(encoding="utf-8"))
    preds = [predictions.get(r["id"], "") for r in references]
    golds = [r["references"] for r in references]
    expected_ned = _ned_aij2022_reference(preds, golds)
    expected_cer = _jiwer_cer_no_strip(preds, [g[0] for g in golds])
    scores = {task["name"]: task["score"] for task in json.loads(text)["tasks"]}
    assert_close(scores["TRitW"], expected_ned, atol=1e-12)
    assert_close(scores["CER"], expected_cer, atol=1e-12)


# --------------------------------------------------------------------------- several references (issue 10, item 6)
def _best_reference_reference(preds, target, unit):
    """Independent rule: per sample, min over references of (edits, −length) with rapidfuzz; then pooled."""
    from rapidfuzz.distance import Levenshtein as _Lev

    edits = total = 0
    for pred, refs in zip(preds, target):
        refs = [refs] if isinstance(refs, str) else refs
        split = (lambda s: s.split()) if unit == "word" else (lambda s: s)
        e, neg_len = min((_Lev.distance(split(pred), split(r)), -len(split(r))) for r in refs)
        edits, total = edits + e, total - neg_len
    return edits / total if total else float(edits)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_several_references_take_the_best_and_ignore_their_order(seed):
    rng = random.Random(seed)
    words = ["кот", "cat", "a", "the", "中文", "😀", "", "mat", "sat"]
    preds, target = [], []
    for _ in range(60):
        preds.append(" ".join(rng.choice(words) for _ in range(rng.randint(0, 6))))
        refs = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 6))) for _ in range(rng.randint(1, 4))]
        target.append(refs if len(refs) > 1 or rng.random() < 0.5 else refs[0])
    shuffled = [list(reversed(r)) if isinstance(r, list) else r for r in target]
    for fn, unit in ((char_error_rate, "char"), (word_error_rate, "word")):
        expected = _best_reference_reference(preds, target, unit)
        for backend in ("rapidfuzz", "torch"):
            assert float(fn(preds, target, backend=backend)) == pytest.approx(expected, abs=1e-12)
            assert float(fn(preds, shuffled, backend=backend)) == pytest.approx(expected, abs=1e-12)
    metric = gpumetrics.CharErrorRate()
    metric.update(preds[:25], target[:25])
    metric.update(preds[25:], shuffled[25:])
    assert float(metric.compute()) == pytest.approx(_best_reference_reference(preds, target, "char"), abs=1e-12)


def test_best_reference_ties_prefer_the_longer_reference():
    # "ab" vs "abX" and vs "a": both 1 edit; the longer reference (3 chars) gives the lower rate 1/3
    assert float(char_error_rate(["ab"], [["a", "abX"]])) == pytest.approx(1 / 3)
    assert float(char_error_rate(["ab"], [["abX", "a"]])) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="target"):
        char_error_rate(["ab"], [[]])


def test_several_references_error_names_the_sample_index():
    with pytest.raises(TypeError, match=r"`preds\[1\]`"):
        gpumetrics.functional.word_error_rate(["a", None], [["a", "b"], ["c"]])
    with pytest.raises(TypeError, match=r"`target"):
        gpumetrics.functional.char_error_rate(["a", "b"], [["a", 3], ["c"]])


@pytest.mark.parametrize("backend", ["rapidfuzz", "torch"])
def test_string_subclasses_are_strings_and_bytes_or_lists_are_not(backend):
    import numpy as np

    preds, target = list(np.array(["kitten", "flaw"])), ["sitting", "lawn"]  # numpy.str_ items
    assert edit_distance(preds, target, reduction="none", backend=backend).tolist() == [3, 2]
    for bad in ([b"kitten", "flaw"], [["k", "i"], "flaw"]):
        with pytest.raises(TypeError, match=r"`preds\[0\]`"):
            edit_distance(bad, target, backend=backend)


# ------------------------------------------------------------------------- device route for strings, run on the CPU
_ANY_TEXT = st.text(alphabet=st.one_of(st.characters(blacklist_categories=()),  # every plane, NUL, lone surrogates
                                        st.sampled_from(" \t\n\u00a0\u3000ab")), max_size=15)


@pytest.fixture
def rows_on_device(monkeypatch):
    """Off the CPU strings travel with separators and their rows and words are found on the device: switched on here
    so that route runs (on CPU tensors) against the references."""
    from gpumetrics.kernels import levenshtein_routes

    monkeypatch.setattr(levenshtein_routes, "_rows_on_device", lambda device: True)
    routed = []  # per call: True when the rows were found on the device, False when the host encoding served
    found = levenshtein_routes._device_route

    def recorded(*args):
        rows = found(*args)
        routed.append(rows is not None)
        return rows

    monkeypatch.setattr(levenshtein_routes, "_device_route", recorded)
    return routed


def test_device_route_equals_the_references_for_every_string_metric(rows_on_device):
    batches = make_batches(30) + _raw_whitespace_batches(31)
    preds, target = sum((b[0] for b in batches), []), sum((b[1] for b in batches), [])
    assert edit_distance(preds, target, reduction="none", backend="torch").tolist() == _rf(preds, target)
    assert edit_distance(preds, target, unit="word", reduction="none", backend="torch").tolist() == \
        _rf(preds, target, words=True)
    for fn, reference in [(char_error_rate, tm_char_error_rate), (word_error_rate, tm_word_error_rate)]:
        check_metric(getattr(gpumetrics, {"char_error_rate": "CharErrorRate"}.get(fn.__name__, "WordErrorRate")),
                     fn, reference, batches, {"backend": "torch"}, ddp=False, reference_atol=1e-6)
        rates = fn(preds, target, backend="torch", reduction="none")
        assert_close(rates, fn(preds, target, backend="rapidfuzz", reduction="none"), what=fn.__name__)
    for transform_fn, reference in [(word_error_rate, jiwer.wer), (char_error_rate, jiwer.cer)]:
        assert_close(transform_fn(preds, target, transform="jiwer", backend="torch"), reference(target, preds))
    for preset, reference in [("default", _ned_default_reference), ("aij2022", _ned_aij2022_reference)]:
        ned_preds, ned_target = make_ned_batches(32)[0]
        assert_close(normalized_edit_similarity(ned_preds, ned_target, preset=preset, backend="torch"),
                     reference(ned_preds, ned_target), what=preset)
    assert len(rows_on_device) > 10 and all(rows_on_device)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(_ANY_TEXT, _ANY_TEXT), max_size=10))
def test_device_route_on_any_text(rows_on_device, pairs):
    preds, target = [p for p, _ in pairs], [t for _, t in pairs]
    assert edit_distance(preds, target, reduction="none", backend="torch").tolist() == _rf(preds, target)
    assert edit_distance(preds, target, unit="word", reduction="none", backend="torch").tolist() == \
        _rf(preds, target, words=True)


def test_device_route_in_chunks_of_pairs_equals_one_pass(rows_on_device, monkeypatch):
    """Batches beyond the device pass's symbol budget run in chunks of consecutive pairs (one collision read)."""
    from gpumetrics.kernels import levenshtein_routes, text_rows

    batches = make_batches(33, sizes=[40]) + _raw_whitespace_batches(34, sizes=(30,))
    preds, target = sum((b[0] for b in batches), []), sum((b[1] for b in batches), [])
    monkeypatch.setattr(text_rows, "_ENCODE_BLOCK", 4)
    monkeypatch.setattr(levenshtein_routes, "_DEVICE_ROUTE_SYMBOLS", 64)
    assert len(list(text_rows.stage_pairs_separated(preds, target, 64))) > 5
    assert edit_distance(preds, target, reduction="none", backend="torch").tolist() == _rf(preds, target)
    assert edit_distance(preds, target, unit="word", reduction="none", backend="torch").tolist() == \
        _rf(preds, target, words=True)
    assert_close(char_error_rate(preds, target, backend="torch", reduction="none"),
                 char_error_rate(preds, target, reduction="none"))
    assert_close(word_error_rate(preds, target, backend="torch"), tm_word_error_rate(preds, target), atol=1e-6)
    assert all(rows_on_device)


def test_device_route_falls_back_on_nul_and_on_hash_collisions(rows_on_device, monkeypatch):
    from gpumetrics.kernels import text_rows

    preds, target = ["a\x00b c", "x y", ""], ["a b c", "x\x00 y", "q"]
    assert edit_distance(preds, target, reduction="none", backend="torch").tolist() == _rf(preds, target)
    assert_close(word_error_rate(preds, target, backend="torch"), tm_word_error_rate(preds, target), atol=1e-6)
    monkeypatch.setattr(text_rows, "_mix", lambda x: torch.zeros_like(x))  # every word hashes alike
    preds, target = ["a b c d", "b a"], ["a c", "a b b"]
    assert edit_distance(preds, target, unit="word", reduction="none", backend="torch").tolist() == \
        _rf(preds, target, words=True)
    assert rows_on_device == [False, False, False]


_ADVERSARIAL_TEXT = ["", "a", "ab c", "\x80\xff é", "中文 字", "😀", "a😀b", "\ud800", "\udfff\ud800 x", "\U0010ffff",
                     "\uffff\ufffe", "\u3000a\u00a0b\x85c", " ", "\t\n", "a b\u2028c"]


@pytest.mark.parametrize("block", [1, 3, 2048])
def test_device_route_on_blocks_of_mixed_widths_equals_rapidfuzz(rows_on_device, monkeypatch, block):
    """Blocks of every storage width in one upload (each read in its own width on the device), long strings,
    lone surrogates, empty strings: characters and words equal rapidfuzz's, CER / WER torchmetrics'."""
    from gpumetrics.kernels import text_rows

    monkeypatch.setattr(text_rows, "_ENCODE_BLOCK", block)
    rng = random.Random(block)

    def text() -> str:
        return " ".join(rng.choice(_ADVERSARIAL_TEXT) for _ in range(rng.randint(0, 4)))

    preds, target = [text() for _ in range(40)], [text() for _ in range(40)]
    assert_close(word_error_rate(preds, target, backend="torch"), tm_word_error_rate(preds, target), atol=1e-6)
    assert_close(char_error_rate(preds, target, backend="torch"), tm_char_error_rate(preds, target), atol=1e-6)
    preds += ["ab " * 200, "😀 é" * 150, "", "中" * 300]  # long strings: blocks of their own
    target += ["ab " * 199 + "b", "😀 e" * 150, "\ud800", "中 " * 150]
    assert edit_distance(preds, target, reduction="none", backend="torch").tolist() == _rf(preds, target)
    assert edit_distance(preds, target, unit="word", reduction="none", backend="torch").tolist() == \
        _rf(preds, target, words=True)
    assert all(rows_on_device) and len(rows_on_device) == 4


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("block", [1, 3, 2048])
def test_cuda_route_on_blocks_of_mixed_widths_equals_the_cpu(monkeypatch, block):  # pragma: no cover - GPU only
    """On CUDA the staged blocks travel from pinned buffers as bytes and are read in their widths there (one view,
    or a gather per symbol when the widths differ): characters and words equal the CPU's rapidfuzz."""
    from gpumetrics.kernels import text_rows

    monkeypatch.setattr(text_rows, "_ENCODE_BLOCK", block)
    rng = random.Random(block + 1)
    preds = [" ".join(rng.choice(_ADVERSARIAL_TEXT) for _ in range(rng.randint(0, 4))) for _ in range(40)]
    target = [" ".join(rng.choice(_ADVERSARIAL_TEXT) for _ in range(rng.randint(0, 4))) for _ in range(40)]
    preds += ["ab " * 200, "😀 é" * 150, "", "中" * 300]
    target += ["ab " * 199 + "b", "😀 e" * 150, "\ud800", "中 " * 150]
    for unit in ("char", "word"):
        got = edit_distance(preds, target, unit=unit, reduction="none", backend="torch", device="cuda")
        assert got.device.type == "cuda" and got.cpu().tolist() == _rf(preds, target, words=unit == "word"), unit


def test_device_route_checks_items_only_where_a_join_fails(rows_on_device, monkeypatch):
    """The device route's ``str.join`` takes strings only: the items are not checked in a pass of their own (as
    long as the encoding), and a non-string item is still named, in any block, on either side, also after a
    string holding "\\0" sent the batch to the host encoding."""
    from gpumetrics.kernels import text_rows
    from gpumetrics.text import edit

    monkeypatch.setattr(text_rows, "_ENCODE_BLOCK", 4)
    checked = []
    check = edit._check_items
    monkeypatch.setattr(edit, "_check_items", lambda *args: checked.append(1) or check(*args))
    preds, target = [f"a{i} b" for i in range(30)], [f"a{i}" for i in range(30)]
    assert edit_distance(preds, target, reduction="none", backend="torch").tolist() == _rf(preds, target)
    assert_close(word_error_rate(preds, target, backend="torch"), jiwer.wer(target, preds))
    assert checked == [] and rows_on_device == [True, True]
    for bad_preds, bad_target, name in [(preds, target[:29] + [3], "target[29]"), (preds[:13] + [b"x"] + preds[14:],
                                        target, "preds[13]"), (["a\x00"] + preds[1:], target[:20] + [["a"]] +
                                                                target[21:], "target[20]")]:
        for unit in ("char", "word"):
            with pytest.raises(TypeError, match=rf"`{re.escape(name)}`"):
                edit_distance(bad_preds, bad_target, unit=unit, backend="torch")


def test_device_route_checks_items_and_takes_string_subclasses(rows_on_device):
    import numpy as np

    preds, target = list(np.array(["kitten", "flaw"])), ["sitting", "lawn"]  # numpy.str_ items
    assert edit_distance(preds, target, reduction="none", backend="torch").tolist() == [3, 2]
    assert edit_distance([], [], reduction="none", backend="torch").tolist() == []
    assert word_error_rate(["", " "], ["", "\t"], backend="torch").item() == 0.0
    with pytest.raises(TypeError, match=r"`target\[1\]`"):
        word_error_rate(["a", "b"], ["a", 3], backend="torch")


# ------------------------------------------------------------------------------------------------ token tensors in
from gpumetrics.kernels import levenshtein_routes  # noqa: E402
from gpumetrics.kernels.ragged import Ragged  # noqa: E402
from gpumetrics.text.tokenize import dense_ids  # noqa: E402
from tests.helpers.syncs import SyncCounter  # noqa: E402


def _token_layouts(items, pad_id, rng):
    """The same sequences of ids as padded ``[B, L]`` (+ lengths), padded with ``pad_id`` and flat ``Ragged``."""
    lengths = torch.tensor([len(x) for x in items], dtype=torch.long)
    width = int(lengths.max()) + rng.randint(0, 3) if items else 0
    padded = torch.full((len(items), width), pad_id, dtype=torch.long)
    garbage = torch.full((len(items), width), 7, dtype=torch.long)  # never read past a row's length
    for i, x in enumerate(items):
        padded[i, : len(x)] = torch.tensor(x, dtype=torch.long)
        garbage[i, : len(x)] = torch.tensor(x, dtype=torch.long)
    flat = torch.tensor([v for x in items for v in x], dtype=torch.long)
    return {"pad_id": (padded, None), "lengths": (garbage, lengths),
            "ragged": (Ragged.from_lengths(flat, lengths), None)}


def _char_ids(texts):
    return [[ord(c) + 1 for c in t] for t in texts]  # 0 is the padding id


def _word_ids(preds, target):
    split_p, split_t = [p.split() for p in preds], [t.split() for t in target]
    ids, _ = dense_ids([w for x in split_p + split_t for w in x])
    ids, out, at = (ids + 1).tolist(), [], 0
    for x in split_p + split_t:
        out.append(ids[at : at + len(x)])
        at += len(x)
    return out[: len(preds)], out[len(preds):]


@pytest.mark.parametrize("seed", [0, 1])
def test_token_tensors_equal_the_string_path_in_every_layout(seed):
    rng = random.Random(seed)
    for preds, target in make_batches(seed, sizes=[9, 1, 17], long_pair=seed == 0):
        for unit, (ids_p, ids_t) in (("char", (_char_ids(preds), _char_ids(target))),
                                     ("word", _word_ids(preds, target))):
            layouts_p, layouts_t = _token_layouts(ids_p, 0, rng), _token_layouts(ids_t, 0, rng)
            expected = {
                "ed": edit_distance(preds, target, unit=unit, reduction="none"),
                "rate": (char_error_rate if unit == "char" else word_error_rate)(preds, target, reduction="none"),
                "pooled": (char_error_rate if unit == "char" else word_error_rate)(preds, target),
            }
            if unit == "char":
                expected["ned"] = normalized_edit_similarity(preds, target, reduction="none")
            for name_p, (p, p_len) in layouts_p.items():
                for name_t, (t, t_len) in layouts_t.items():  # mixed layouts too
                    # explicit lengths win over pad_id; a Ragged input has its offsets
                    kw = dict(preds_lengths=p_len, target_lengths=t_len, pad_id=0)
                    rate_fn = char_error_rate if unit == "char" else word_error_rate
                    assert torch.equal(edit_distance(p, t, reduction="none", **kw), expected["ed"]), (name_p, name_t)
                    assert_close(rate_fn(p, t, reduction="none", **kw), expected["rate"])
                    assert_close(rate_fn(p, t, **kw), expected["pooled"])
                    if unit == "char":
                        assert_close(normalized_edit_similarity(p, t, reduction="none", **kw), expected["ned"])


def test_token_modules_accumulate_like_the_string_modules():
    batches = make_batches(3, sizes=[5, 8], long_pair=False)
    for cls in (gpumetrics.EditDistance, gpumetrics.CharErrorRate, gpumetrics.NormalizedEditSimilarity):
        strings, tokens = cls(), cls(pad_id=0)
        for preds, target in batches:
            strings.update(preds, target)
            p = _token_layouts(_char_ids(preds), 0, random.Random(0))["pad_id"][0]
            t = _token_layouts(_char_ids(target), 0, random.Random(1))["ragged"][0]
            tokens.update(p, t)
        assert_close(tokens.compute(), strings.compute())


def test_token_path_host_syncs_do_not_grow_with_the_batch():
    rng = random.Random(5)

    def count(n):
        texts = [_long(rng, rng.randint(0, 40)) for _ in range(2 * n)]
        p = _token_layouts(_char_ids(texts[:n]), 0, rng)["pad_id"][0]
        t = _token_layouts(_char_ids(texts[n:]), 0, rng)["ragged"][0]
        metric = gpumetrics.CharErrorRate(pad_id=0)
        with SyncCounter() as counter:
            metric.update(p, t)
        return counter.total

    small, large = count(16), count(256)
    # CPU tensor kernel: one read of the input checks, the lengths, the flattening of the padded side, and a
    # constant number per chunk of the bit kernel (one chunk here); the Triton path on CUDA needs only the checks
    assert small == large
    assert large <= 20, large  # measured 19 (CPU tensor kernel)


def test_token_inputs_bad_arguments_name_them():
    ids = torch.tensor([[1, 2, 0]])
    with pytest.raises(TypeError, match="`preds`"):
        edit_distance(ids.float(), ids)
    assert edit_distance(ids, ids[:, :1], preds_lengths=torch.tensor([2]), pad_id=2).item() == 1  # lengths win
    with pytest.raises(ValueError, match="`preds_lengths`"):
        edit_distance(ids, ids, preds_lengths=torch.tensor([1, 2]))
    assert char_error_rate(ids, ids[:, :2], backend="rapidfuzz").item() == 0.5  # CPU tokens: rapidfuzz on the host
    with pytest.raises(ValueError, match="`backend='rapidfuzz'`.*CPU"):
        from gpumetrics.kernels.levenshtein_routes import _token_route
        _token_route("rapidfuzz", torch.device("cuda"))
    with pytest.raises(ValueError, match="`backend`"):
        edit_distance(ids, ids, backend="fast")
    with pytest.raises(TypeError, match="both"):
        word_error_rate(["a b"], ids)
    with pytest.raises(ValueError, match="same number"):
        edit_distance(ids, torch.tensor([[1], [2]]))
    with pytest.raises(ValueError, match="`preds`.*2-D"):
        edit_distance(ids[0], ids)
    with pytest.raises(TypeError, match="`pad_id`"):
        edit_distance(ids, ids, pad_id=0.5)
    with pytest.raises(ValueError, match="`preds_offsets`"):
        edit_distance(Ragged(torch.tensor([1, 2]), torch.tensor([0, 3])),
                      Ragged(torch.tensor([1]), torch.tensor([0, 1])))
    with pytest.raises(ValueError, match="`target` symbols must lie in"):
        edit_distance(ids, -ids)
    meta = ids.to("meta")  # a shape without values: NotImplementedError deep inside torch (found by fuzzing)
    with pytest.raises(ValueError, match="`preds` is a tensor on the meta device"):
        edit_distance(meta, meta)
    with pytest.raises(ValueError, match="`target_lengths` is a tensor on the meta device"):
        char_error_rate(ids, ids, target_lengths=torch.tensor([1], device="meta"))
    with pytest.raises(ValueError, match=r"`target.values` is a tensor on the meta device"):
        word_error_rate(ids, Ragged(torch.tensor([1], device="meta"), torch.tensor([0, 1])))
    with pytest.raises(ValueError, match="`preds` is a tensor on the meta device"):
        from gpumetrics import NormalizedEditSimilarity
        NormalizedEditSimilarity().update(meta, ids)


@pytest.mark.parametrize("fn", [edit_distance, char_error_rate, word_error_rate, normalized_edit_similarity])
def test_row_lengths_with_texts_are_an_error(fn):
    """Lengths describe padded token rows: passed with strings they would be ignored, so they raise."""
    with pytest.raises(ValueError, match="`target_lengths` is for padded token tensors"):
        fn(["a b"], ["a c"], target_lengths=torch.tensor([1]))
    with pytest.raises(ValueError, match="`preds_lengths`"):
        fn(["a b"], ["a c"], preds_lengths=torch.tensor([1]))


@pytest.mark.parametrize("layout", ["padded", "mixed"])
@pytest.mark.parametrize("lengths", [[4, 1], [-1, 1]])
def test_token_lengths_outside_the_padded_width_are_errors_in_every_layout(layout, lengths):
    """A padded side's lengths must lie in [0, L] whether the other side is padded or Ragged (the mixed path used to
    clamp them, and CER then divided by the unclamped reference length)."""
    padded = torch.tensor([[1, 2, 3], [4, 5, 6]])
    other = padded[:, :2] if layout == "padded" else Ragged(torch.tensor([1, 2, 4, 4]), torch.tensor([0, 2, 4]))
    for fn in (edit_distance, char_error_rate, word_error_rate):
        with pytest.raises(ValueError, match=r"`target_lengths` must lie in \[0, 3\]"):
            fn(other, padded, target_lengths=torch.tensor(lengths))
        with pytest.raises(ValueError, match=r"`preds_lengths` must lie in \[0, 3\]"):
            fn(padded, other, preds_lengths=torch.tensor(lengths))
    within = torch.tensor([3, 0])
    assert edit_distance(padded, other, preds_lengths=within, reduction="none").tolist() == [1, 2]


def test_error_rate_reduction_none_is_each_samples_rate_and_mean_the_pooled_rate():
    preds, target = make_batches(4, sizes=[11], long_pair=False, clean_spaces=True)[0]
    target = [t if t else "x" for t in target]  # jiwer needs a non-empty reference per sample
    per_sample = char_error_rate(preds, target, reduction="none")
    chars = jiwer.ReduceToListOfListOfChars()
    expected = [jiwer.cer(t, p, reference_transform=chars, hypothesis_transform=chars) for p, t in zip(preds, target)]
    assert_close(per_sample, torch.tensor(expected, dtype=torch.float64))
    words = word_error_rate(preds, target, reduction="none")
    assert_close(words, torch.tensor([jiwer.wer(t, p) for p, t in zip(preds, target)], dtype=torch.float64))
    module = gpumetrics.WordErrorRate(reduction="none")
    module.update(preds[:4], target[:4])
    module.update(preds[4:], target[4:])
    assert_close(module.compute(), words)
    assert "reduction:none" in module.signature()
    with pytest.raises(ValueError, match="`reduction`"):
        char_error_rate(preds, target, reduction="sum")
    with pytest.raises(ValueError, match="`reduction`"):
        gpumetrics.CharErrorRate(reduction="sum")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_token_tensors_equal_cpu_strings_with_one_host_sync():  # pragma: no cover - runs on GPU machines only
    preds, target = make_batches(6, sizes=[300], long_pair=True)[0]
    rng = random.Random(6)
    p_layouts = _token_layouts(_char_ids(preds), 0, rng)
    t_layouts = _token_layouts(_char_ids(target), 0, rng)
    expected = edit_distance(preds, target, reduction="none")
    for name in ("ragged", "lengths", "pad_id"):
        (p, p_len), (t, t_len) = p_layouts[name], t_layouts[name]
        to = (lambda x: None if x is None else (Ragged(*(v.cuda() for v in x)) if isinstance(x, Ragged) else x.cuda()))
        p, t, p_len, t_len = to(p), to(t), to(p_len), to(t_len)
        metric = gpumetrics.CharErrorRate(pad_id=0).cuda()
        with SyncCounter() as counter:
            metric.update(p, t, preds_lengths=p_len, target_lengths=t_len)
        # one read of the input checks (`bounds.cpu().numpy()`, which the counter sees as its two steps)
        assert dict(counter.counts) == {"to-host:cpu": 1, "to-host:numpy": 1}, (name, dict(counter.counts))
        got = edit_distance(p, t, pad_id=0, preds_lengths=p_len, target_lengths=t_len, reduction="none")
        assert got.device.type == "cuda" and torch.equal(got.cpu(), expected), name
        assert_close(metric.compute().cpu(), char_error_rate(preds, target))
    # strings on CUDA: rows (and words) found on the device, the Triton kernel; equal to the CPU path
    with SyncCounter() as counter:
        got = edit_distance(preds, target, reduction="none", device="cuda")
    assert torch.equal(got.cpu(), expected)
    if levenshtein_routes._has_triton():  # characters: no host sync at all
        assert sum(counter.counts.values()) == 0, dict(counter.counts)
    with SyncCounter() as counter:
        rate = word_error_rate(preds, target, device="cuda")
    assert_close(rate.cpu(), word_error_rate(preds, target))
    if levenshtein_routes._has_triton():  # words: one read of the word ids' collision flag
        assert sum(counter.counts.values()) == 1, dict(counter.counts)
    with_nul = [p + "\x00" for p in preds]  # the host encoding serves, same values
    assert torch.equal(edit_distance(with_nul, target, reduction="none", device="cuda").cpu(),
                       edit_distance(with_nul, target, reduction="none"))


def test_padding_may_hold_any_value_such_as_minus_100():
    preds = torch.tensor([[3, 4, 5, -100], [7, -100, -100, -100]])
    target = torch.tensor([[3, 5, -100], [7, 8, 9]])
    got = edit_distance(preds, target, preds_lengths=torch.tensor([3, 1]), target_lengths=torch.tensor([2, 3]),
                        reduction="none")
    assert got.tolist() == [1, 2]
    assert edit_distance(preds, target, pad_id=-100, reduction="none").tolist() == [1, 2]
    with pytest.raises(ValueError, match="symbols"):
        edit_distance(preds, target, reduction="none")  # no lengths, no pad_id: -100 is a symbol, and ids are ≥ 0


@pytest.mark.parametrize("dtype", [torch.uint16, torch.uint32, torch.uint64])
@pytest.mark.parametrize("backend", ["auto", "torch", "rapidfuzz"])
def test_ragged_tokens_of_every_unsigned_dtype(dtype, backend):
    """torch has no min / max for uint16 / uint32 / uint64, so a Ragged of them raised NotImplementedError in the
    input checks (found by fuzzing); padded tensors of them already worked. Unsigned offsets are read as int64, so a
    falling offset in uint8 no longer wraps to a row of 255 symbols (it did: a wrong distance, or an IndexError)."""
    values = torch.tensor([1, 2, 3, 9], dtype=dtype)
    preds = Ragged(values, torch.tensor([0, 3, 3, 4], dtype=dtype if dtype != torch.uint64 else torch.long))
    target = torch.tensor([[1, 3, 0], [5, 0, 0], [9, 0, 0]], dtype=dtype)
    got = edit_distance(preds, target, pad_id=0, backend=backend, reduction="none")
    assert got.tolist() == [1, 1, 0]
    assert_close(char_error_rate(preds, target, pad_id=0, backend=backend, reduction="none"),
                 torch.tensor([0.5, 1.0, 0.0], dtype=torch.float64))
    high = Ragged(torch.tensor([2**32 - 1, 7], dtype=torch.uint32), torch.tensor([0, 1, 2]))
    assert edit_distance(high, high, backend=backend).item() == 0
    with pytest.raises(ValueError, match=r"`target` symbols must lie in \[0, 2\*\*32\)"):
        edit_distance(preds, Ragged(torch.tensor([2**32], dtype=torch.uint64), torch.tensor([0, 1, 1, 1])))
    huge = torch.tensor([2**63 + 5], dtype=torch.uint64)  # read as int64 it is negative: named as what it is
    for other in (Ragged(huge, torch.tensor([0, 1, 1, 1])), huge.expand(3, 1)):
        with pytest.raises(ValueError, match=r"`target` symbols must lie in .*, got a uint64 id of 2\*\*63 or more"):
            edit_distance(preds if isinstance(other, Ragged) else target, other, backend=backend)
    falling = Ragged(torch.tensor([1, 2]), torch.tensor([0, 2, 1, 2], dtype=torch.uint8))
    with pytest.raises(ValueError, match="`preds_offsets` must rise"):
        edit_distance(falling, torch.ones(3, 1, dtype=torch.long), backend=backend)


def test_ragged_fields_of_the_wrong_shape_or_dtype_name_the_field():
    """The number of samples was read from the offsets before they were checked: empty or 2-D offsets gave
    "must have the same number of samples, got -1 and 0" (found by fuzzing)."""
    ids = torch.tensor([[1, 2]])
    for offsets in (torch.zeros(0, dtype=torch.long), torch.tensor([[0, 2]]), torch.tensor(0)):
        with pytest.raises(ValueError, match=r"`preds.offsets` must be a 1-D tensor of B \+ 1 offsets"):
            edit_distance(Ragged(torch.tensor([1, 2]), offsets), ids)
    with pytest.raises(TypeError, match=r"`target.offsets` must be an integer tensor, got torch.float32"):
        char_error_rate(ids, Ragged(torch.tensor([1, 2]), torch.tensor([0.0, 2.0])))
    with pytest.raises(TypeError, match=r"`target.values` must be an integer tensor, got torch.bool"):
        word_error_rate(ids, Ragged(torch.tensor([True, False]), torch.tensor([0, 2])))


@pytest.mark.parametrize("backend", ["auto", "torch", "rapidfuzz"])
def test_pad_id_is_compared_by_value_whatever_the_token_dtype(backend):
    """``tokens == pad_id`` wraps a pad_id the dtype cannot hold: -1 matched 255 in uint8 and 300 matched 44 in int8,
    cutting rows short (found by fuzzing); a pad_id past int64 raised OverflowError and a numpy uint64 one a TypeError.
    A pad_id outside the dtype's range now matches nothing, as numerically it cannot."""
    target = torch.tensor([[255, 1]])
    for pad_id in (-1, 256, 2**70, np.uint64(2**64 - 1)):
        got = edit_distance(torch.tensor([[255, 1]], dtype=torch.uint8), target, pad_id=pad_id, backend=backend)
        assert got.item() == 0, pad_id
    small, flat = torch.tensor([[44, 1]], dtype=torch.int8), Ragged(torch.tensor([44, 1]), torch.tensor([0, 2]))
    assert edit_distance(small, flat, pad_id=300, backend=backend).item() == 0
    assert edit_distance(small, flat, pad_id=np.int64(44), backend=backend).item() == 2  # in range: it cuts
    module = gpumetrics.CharErrorRate(pad_id=-1, backend=backend)
    module.update(torch.tensor([[255, 7]], dtype=torch.uint8), torch.tensor([[255, 1]], dtype=torch.uint8))
    assert module.compute().item() == 0.5
    with pytest.raises(ValueError, match=r"`preds` symbols must lie in \[0, 2\*\*32\)"):  # not a cut at -2**63
        edit_distance(torch.tensor([[1, -2**63]]), target, pad_id=2**63, backend=backend)


def test_token_lengths_must_be_integer_tensors():
    """Complex lengths were accepted (a UserWarning from the cast, the imaginary part dropped); a list of lengths was
    a ValueError saying it must be a tensor: now a TypeError naming the argument."""
    ids = torch.tensor([[1, 2, 0]])
    with pytest.raises(TypeError, match=r"`preds_lengths` must be an integer tensor, got torch.complex64"):
        edit_distance(ids, ids, preds_lengths=torch.tensor([2 + 0j]))
    with pytest.raises(TypeError, match=r"`target_lengths` must be a 1-D integer tensor, got list"):
        char_error_rate(ids, ids, target_lengths=[2])
    with pytest.raises(ValueError, match=r"`target_lengths` must be a 1-D tensor of 1 lengths, got shape \(1, 1\)"):
        word_error_rate(ids, ids, target_lengths=torch.tensor([[2]]))
