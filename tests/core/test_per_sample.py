"""The per-sample score base (``gpumetrics.core.per_sample``): reductions, empty compute, the one-sample rule,
merge order, checkpoints, option errors — and that every metric built on it agrees with its function."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import pytest
import torch

import gpumetrics
from gpumetrics.core import REDUCTIONS, PerSampleScore, reduce_scores
from gpumetrics.functional import (
    bleu_score, clip_score, edit_distance, exact_match, normalized_edit_similarity, rouge_score, string_accuracy,
    token_f1,
)
from tests.helpers.harness import assert_close, check_metric, checkpoint_round_trip


# ---------------------------------------------------------------------------------------------------- toy metrics
class Lengths(PerSampleScore):
    """Score of a sample: its length (float64)."""

    def update(self, texts: list[str]) -> None:
        self._accumulate(torch.tensor([len(t) for t in texts], dtype=torch.float64))


class Counts(PerSampleScore):
    """Integer ``[B, 2]`` scores: (length, number of spaces)."""

    score_dtype = torch.long

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(score_shape=(2,), **kwargs)

    def update(self, texts: list[str]) -> None:
        self._accumulate(torch.tensor([[len(t), t.count(" ")] for t in texts], dtype=torch.long).reshape(-1, 2))


def lengths(texts: list[str], reduction: str = "mean") -> torch.Tensor:
    return reduce_scores(torch.tensor([len(t) for t in texts], dtype=torch.float64), reduction)


def counts(texts: list[str], reduction: str = "mean") -> torch.Tensor:
    scores = torch.tensor([[len(t), t.count(" ")] for t in texts], dtype=torch.long).reshape(-1, 2)
    return reduce_scores(scores, reduction)


TEXTS = [(["abc", "de f"],), ([],), (["x"],), (["a b c", "", "hello"],)]


# ---------------------------------------------------------------------------------------------------- the base
def test_each_reduction_and_its_dtype_and_shape():
    for reduction, expected in (("mean", 3.0), ("sum", 18.0), ("none", [3.0, 4.0, 1.0, 5.0, 0.0, 5.0])):
        metric = Lengths(reduction=reduction)
        for (batch,) in TEXTS:
            metric.update(batch)
        value = metric.compute()
        assert value.dtype == torch.float64
        assert value.tolist() == pytest.approx(expected)
        assert value.shape == ((6,) if reduction == "none" else ())
    integer = Counts(reduction="sum")
    for (batch,) in TEXTS:
        integer.update(batch)
    assert integer.compute().dtype == torch.long and integer.compute().tolist() == [18, 3]
    mean = Counts()
    mean.update(["a b"])
    assert mean.compute().dtype == torch.float64 and mean.compute().tolist() == [3.0, 1.0]  # the mean is float64


def test_states_are_score_sum_count_and_scores_only_for_none():
    for reduction in REDUCTIONS:
        metric = Lengths(reduction=reduction)
        expected = {"score_sum", "count"} | ({"scores"} if reduction == "none" else set())
        assert set(metric._defaults) == expected
        assert metric.score_sum.dtype == torch.float64 and metric.count.dtype == torch.long


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_empty_compute(reduction):
    expected_shape = (0,) if reduction == "none" else ()
    for metric in (Lengths(reduction=reduction), Lengths(reduction=reduction)):
        with pytest.warns(UserWarning, match="before the ``update``"):
            value = metric.compute()
        assert value.shape == expected_shape and value.dtype == torch.float64 and not value.isnan().any()
        metric.update([])  # an empty batch: same value, and the functional agrees
        assert torch.equal(metric.compute(), value)
        assert torch.equal(lengths([], reduction), value)
    with pytest.warns(UserWarning, match="before the ``update``"):
        assert Counts(reduction=reduction).compute().shape == ((0, 2) if reduction == "none" else (2,))


def test_one_sample_keeps_its_dimension():
    """``none`` is ``[N]`` also for N = 1 (torchmetrics would squeeze it to 0-d), in compute and forward."""
    metric = Lengths(reduction="none")
    assert metric(["abc"]).shape == (1,)
    assert metric.compute().shape == (1,) and metric.compute().tolist() == [3.0]
    assert lengths(["abc"], "none").shape == (1,)
    for reduction in ("mean", "sum"):
        single = Lengths(reduction=reduction)
        single.update(["abc"])
        assert single.compute().shape == () == lengths(["abc"], reduction).shape
    pair = Counts(reduction="none")
    pair.update(["a"])
    assert pair.compute().shape == (1, 2)


def test_merge_state_keeps_update_order():
    left, right = Lengths(reduction="none"), Lengths(reduction="none")
    left.update(["a", "bb"])
    right.update(["ccc"])
    right.update(["dddd"])
    left.merge_state(right)
    assert left.compute().tolist() == [1.0, 2.0, 3.0, 4.0]
    assert int(left.count) == 4 and float(left.score_sum) == 10.0


def test_merge_state_into_a_fresh_metric_counts_the_merged_updates(recwarn):
    # torchmetrics leaves the update count alone: compute() warned "called before the update method" and a
    # checkpoint of the merged metric said 0 updates (found by fuzzing merge_state against one pass)
    merged, worker = Lengths(), Lengths()
    worker.update(["ab"])
    worker.update(["c"])
    merged.merge_state(worker)
    assert merged.update_called and merged.update_count == 2
    assert float(merged.compute()) == 1.5
    assert not [w for w in recwarn if "before the ``update``" in str(w.message)]
    merged.persistent(True)
    assert int(merged.state_dict()["_update_count"]) == 2


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_checkpoint_round_trip(reduction):
    first = Lengths(reduction=reduction)
    first.update(["ab", "c"])
    first.persistent(True)
    state = checkpoint_round_trip(first.state_dict())
    assert {"score_sum", "count"} <= set(state) and ("scores" in state) == (reduction == "none")
    restored = Lengths(reduction=reduction)
    restored.load_state_dict(state)
    restored.update(["defg"])
    assert torch.equal(restored.compute(), lengths(["ab", "c", "defg"], reduction))


@pytest.mark.ddp
@pytest.mark.parametrize("cls, fn", [(Lengths, lengths), (Counts, counts)])
def test_module_forward_merge_checkpoint_and_ddp_equal_the_function(cls, fn):
    for reduction in REDUCTIONS:
        check_metric(cls, fn, None, TEXTS, {"reduction": reduction}, ddp=reduction != "sum")


def test_bad_reduction_names_the_argument():
    with pytest.raises(ValueError, match="`reduction` must be one of 'mean', 'sum', 'none'; got 'max'"):
        Lengths(reduction="max")
    with pytest.raises(ValueError, match="`reduction`"):
        reduce_scores(torch.zeros(2), "avg")
    for cls in (gpumetrics.TokenF1, gpumetrics.ExactMatch, gpumetrics.StringAccuracy, gpumetrics.EditDistance,
                gpumetrics.NormalizedEditSimilarity, gpumetrics.ROUGEScore, gpumetrics.BLEUScore):
        with pytest.raises(ValueError, match="`reduction`"):
            cls(reduction="max")
    for fn in (token_f1, exact_match, string_accuracy, edit_distance, normalized_edit_similarity, rouge_score,
               bleu_score):
        with pytest.raises(ValueError, match="`reduction`"):
            fn(["a"], ["a"], reduction="max")


def test_empty_error_raises_for_every_reduction():
    class Strict(Lengths):
        empty_error = "needs a sample"

    for reduction in REDUCTIONS:
        with pytest.raises(ValueError, match="needs a sample"), pytest.warns(UserWarning):
            Strict(reduction=reduction).compute()
        with pytest.raises(ValueError, match="needs a sample"):
            reduce_scores(torch.zeros(0), reduction, "needs a sample")


def test_signature_names_a_reduction_other_than_mean():
    assert "reduction" not in gpumetrics.TokenF1().signature()
    assert "|reduction:none|" in gpumetrics.TokenF1(reduction="none").signature()
    assert gpumetrics.EditDistance().signature().count("reduction:") == 1  # named by the metric itself


# ---------------------------------------------------------------------------------------- every adopting metric
PREDS = ["the cat sat on the mat", "a dog barked", "Кошка спит", "", "hello world"]
REFS = [["the cat is on the mat", "a cat sat"], ["the dog barked loudly"], ["кошка спит на диване"], ["x"],
        ["hello there world"]]
SINGLE = [r[0] for r in REFS]
TINY_OPEN_CLIP = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}


def _text_batches(refs: list) -> list[tuple]:
    return [(PREDS[:2], refs[:2]), (PREDS[2:3], refs[2:3]), (PREDS[3:], refs[3:])]


def _clip_case(tmp: Path) -> tuple[Callable, Callable, list[tuple]]:
    config = tmp / "tiny-clip.json"
    config.write_text(json.dumps(TINY_OPEN_CLIP))
    options = {"backend": "open_clip", "model_name": str(config), "pretrained": "random"}
    images = (torch.rand(4, 3, 40, 36, generator=torch.Generator().manual_seed(0)) * 255).to(torch.uint8)
    captions = ["a red square", "пустая комната", "鳥", "🙂 a cat"]
    batches = [(images[:2], captions[:2]), (images[2:3], captions[2:3]), (images[3:], captions[3:])]

    def concat(parts):
        return torch.cat([p[0] for p in parts]), sum((list(p[1]) for p in parts), [])

    return (lambda **kw: gpumetrics.CLIPScore(**options, **kw),
            lambda *args, **kw: clip_score(*args, **options, **kw), batches, concat)


def _text_case(cls, fn, refs, **options):
    def concat(parts):
        return sum((list(p[0]) for p in parts), []), sum((list(p[1]) for p in parts), [])

    return (lambda **kw: cls(**options, **kw), lambda *args, **kw: fn(*args, **options, **kw), _text_batches(refs),
            concat)


ADOPTERS: dict[str, Callable[[Path], tuple]] = {
    "TokenF1": lambda _: _text_case(gpumetrics.TokenF1, token_f1, REFS),
    "TokenF1(aij2022)": lambda _: _text_case(gpumetrics.TokenF1, token_f1, REFS, preset="aij2022"),
    "ExactMatch": lambda _: _text_case(gpumetrics.ExactMatch, exact_match, REFS),
    "StringAccuracy": lambda _: _text_case(gpumetrics.StringAccuracy, string_accuracy, SINGLE),
    "EditDistance": lambda _: _text_case(gpumetrics.EditDistance, edit_distance, SINGLE),
    "EditDistance(word, torch)": lambda _: _text_case(gpumetrics.EditDistance, edit_distance, SINGLE, unit="word",
                                                      backend="torch"),
    "NormalizedEditSimilarity": lambda _: _text_case(gpumetrics.NormalizedEditSimilarity, normalized_edit_similarity,
                                                     REFS, preset="aij2022"),
    "ROUGEScore": lambda _: _text_case(gpumetrics.ROUGEScore, rouge_score, REFS, rouge_keys=("rouge1", "rougeL")),
    "BLEUScore": lambda _: _text_case(gpumetrics.BLEUScore, bleu_score, REFS, effective_order=True),
    "BLEUScore(nltk)": lambda _: _text_case(gpumetrics.BLEUScore, bleu_score, REFS, mode="nltk", smooth="method1"),
    "CLIPScore": _clip_case,
}


def _same(module_value: Any, function_value: Any, what: str, atol: float = 1e-12) -> None:
    if isinstance(function_value, dict):
        assert isinstance(module_value, dict) and module_value.keys() == function_value.keys(), what
        for key in function_value:
            _same(module_value[key], function_value[key], f"{what}[{key}]", atol)
        return
    assert module_value.shape == function_value.shape, f"{what}: {module_value.shape} vs {function_value.shape}"
    assert module_value.dtype == function_value.dtype, f"{what}: {module_value.dtype} vs {function_value.dtype}"
    assert_close(module_value, function_value, atol, what=what)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", sorted(ADOPTERS))
def test_every_adopting_module_equals_its_function(name, reduction, tmp_path):
    make, fn, batches, concat = ADOPTERS[name](tmp_path)
    # CLIP: the float32 encoders give batch-size dependent rounding (~1e-7 relative); the rest is float64 / exact
    atol = 1e-4 if name == "CLIPScore" else 1e-12
    same = lambda a, b, what: _same(a, b, what, atol)  # noqa: E731
    metric = make(reduction=reduction)
    for batch in batches:
        same(metric(*batch), fn(*batch, reduction=reduction), f"{name} forward")
    same(metric.compute(), fn(*concat(batches), reduction=reduction), f"{name} compute")
    single = make(reduction=reduction)  # one sample: [1] for none, 0-d otherwise, in both
    single.update(*batches[1])
    expected = fn(*batches[1], reduction=reduction)
    same(single.compute(), expected, f"{name} one sample")
    for value in expected.values() if isinstance(expected, dict) else [expected]:
        assert value.shape == ((1,) if reduction == "none" else ()), f"{name}: {value.shape}"
    restored = make(reduction=reduction)
    metric.persistent(True)
    restored.load_state_dict(copy.deepcopy(metric.state_dict()))
    same(restored.compute(), fn(*concat(batches), reduction=reduction), f"{name} state_dict")


def test_every_per_sample_module_is_covered():
    adopters = {gpumetrics.TokenF1, gpumetrics.ExactMatch, gpumetrics.StringAccuracy, gpumetrics.EditDistance,
                gpumetrics.NormalizedEditSimilarity, gpumetrics.ROUGEScore, gpumetrics.BLEUScore, gpumetrics.CLIPScore}
    assert all(issubclass(cls, PerSampleScore) for cls in adopters)
    covered = {name.split("(")[0] for name in ADOPTERS}
    assert covered == {cls.__name__ for cls in adopters}
