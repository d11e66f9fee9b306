"""What ``compute()`` returns when nothing was scored, for every exported module (README, "Empty input").

Each module class found in the package must have an entry in ``CASES``, and its name must appear in the README's
table, so a new metric without a documented rule fails here. Every option family that changes the empty value
(BLEU modes and reductions, OCR matchings, ``reduction="none"``, classification averages …) is listed.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
import warnings
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import pytest
import torch

import gpumetrics
import gpumetrics.suites.captioning
from gpumetrics.text.meteor.synonyms import NoSynonyms
from gpumetrics import classification

README = Path(__file__).resolve().parents[1] / "docs" / "metrics" / "conventions.md"  # the rules every metric shares
_TORCHMETRICS_WARNING = re.compile(r"The ``compute`` method of metric \w+ was called before the ``update``")

ZERO, EMPTY, ZERO_DIVISION = "zero", "empty", "zero_division"


def _text_empty(metric):
    metric.update([], [])


def _labels(shape):
    return lambda m: m.update(torch.zeros(shape), torch.zeros(shape, dtype=torch.long))


def _scores(shape):
    return lambda m: m.update(torch.zeros(shape), torch.zeros(shape[:1], dtype=torch.long))


def _images_empty(metric):
    metric.update(torch.zeros(0, 3, 32, 32), real=True)


def _tiny_clip_config(tmp_path: Path) -> str:
    config = tmp_path / "tiny-clip.json"
    config.write_text(json.dumps({
        "embed_dim": 16,
        "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
        "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
    }))
    return str(config)


def _image_generation(tmp_path: Path):
    real = tmp_path / "real.npz"
    np.savez(real, mu=np.zeros(64), sigma=np.eye(64))
    return gpumetrics.suites.image.ImageGenerationScore(
        str(real), fid_feature=64, inception_weights="random", clip_backend="open_clip",
        clip_model=_tiny_clip_config(tmp_path), clip_pretrained="random",
    )


def _cases() -> dict[str, list[tuple[str, Callable[[Path], Any], Optional[Callable], Any]]]:
    """class name → [(label, build(tmp_path), update with zero samples or None, expected)]."""
    cases: dict[str, list] = {}

    def add(cls_name, label, build, empty_update, expected):
        cases.setdefault(cls_name, []).append((label, build, empty_update, expected))

    for cls, options in [
        (gpumetrics.TokenF1, [{"preset": "squad"}, {"preset": "aij2022"}, {"reduction": "sum"},
                              {"reduction": "none"}]),
        (gpumetrics.ExactMatch, [{"preset": "squad"}, {"preset": "aij2022"}, {"preset": "raw"},
                                 {"preset": "raw", "reduction": "none"}]),
        (gpumetrics.StringAccuracy, [{}, {"reduction": "sum"}, {"reduction": "none"}]),
        (gpumetrics.EditDistance, [{"reduction": "mean"}, {"reduction": "sum"}, {"reduction": "none"}]),
        (gpumetrics.CharErrorRate, [{}, {"transform": "jiwer"}, {"reduction": "none"}]),
        (gpumetrics.WordErrorRate, [{}, {"transform": "jiwer"}, {"reduction": "none"}]),
        (gpumetrics.NormalizedEditSimilarity, [{"preset": "default"}, {"preset": "aij2022"}, {"reduction": "sum"},
                                               {"reduction": "none"}]),
        (gpumetrics.BLEUScore, [{"mode": mode, "reduction": reduction}
                                for mode in ("sacrebleu", "nltk", "coco")
                                for reduction in ("corpus", "mean", "sum", "none")]),
        (gpumetrics.ROUGEScore, [{"reduction": "mean"}, {"reduction": "sum"}, {"reduction": "none"},
                                 {"rouge_keys": ("rouge1", "rougeW"), "reduction": "none"},
                                 {"mode": "coco"}, {"mode": "coco", "reduction": "none"}]),
        (gpumetrics.COCOCaptionScores, [{}, {"tokenize": "none"}, {"reduction": "none"}]),
        (gpumetrics.CIDErScore, [{"mode": "cider-d"}, {"mode": "cider"},
                                 {"mode": "cider", "reduction": "none"}]),
        (gpumetrics.METEORScore, [{"reduction": reduction} for reduction in ("corpus", "mean", "sum", "none")]
         + [{"language": "ru"}]
         + [{"mode": mode, "synonyms": NoSynonyms(), "reduction": reduction}
            for mode in ("nltk", "aij2022-caption", "aij2022-vqa") for reduction in ("corpus", "none")]),
        (gpumetrics.CodeBLEUScore, [{"language": "python", "mode": mode, "reduction": reduction}
                                    for mode in ("codebleu-0.7", "paper") for reduction in ("corpus", "mean", "none")]
         + [{"preset": "aij2021"}]),
    ]:
        for kwargs in options:
            expected = EMPTY if kwargs.get("reduction") == "none" else ZERO
            add(cls.__name__, repr(kwargs), lambda _, cls=cls, kwargs=kwargs: cls(**kwargs), _text_empty, expected)

    for kwargs in ({}, {"reduction": "none"}):
        add("VQAAccuracy", repr(kwargs), lambda _, kwargs=kwargs: gpumetrics.VQAAccuracy(**kwargs),
            lambda m: m.update([], [], []), EMPTY if kwargs else ZERO)
    for matching in ("many-to-many", "icdar15"):
        add("OCREndToEnd", matching, lambda _, m=matching: gpumetrics.OCREndToEnd(matching=m),
            lambda m: m.update([], [], [], []), ZERO)
    for preset in ("aij2021", "strict"):
        add("ZeroShotDetectionF1", preset, lambda _, p=preset: gpumetrics.ZeroShotDetectionF1(preset=p),
            lambda m: m.update([], []), ZERO)

    for name in ("Precision", "Recall", "F1Score"):
        for zero_division in (0, 1):
            binary = getattr(classification, f"Binary{name}")
            add(binary.__name__, f"zero_division={zero_division}",
                lambda _, c=binary, z=zero_division: c(zero_division=z), _labels((0,)), (ZERO_DIVISION, zero_division))
            for average in ("micro", "macro", "weighted", "none"):
                multiclass = getattr(classification, f"Multiclass{name}")
                add(multiclass.__name__, f"{average}, zero_division={zero_division}",
                    lambda _, c=multiclass, a=average, z=zero_division: c(num_classes=3, average=a, zero_division=z),
                    _scores((0, 3)), (ZERO_DIVISION, zero_division))
                multilabel = getattr(classification, f"Multilabel{name}")
                add(multilabel.__name__, f"{average}, zero_division={zero_division}",
                    lambda _, c=multilabel, a=average, z=zero_division: c(num_labels=3, average=a, zero_division=z),
                    _labels((0, 3)), (ZERO_DIVISION, zero_division))

    vectors = {"a": [1.0, 0.0], "b": [0.0, 1.0]}
    for reduction in ("mean", "sum", "none"):
        add("WordMoversDistance", repr({"reduction": reduction}),
            lambda _, r=reduction: gpumetrics.WordMoversDistance(vectors, reduction=r), _text_empty,
            EMPTY if reduction == "none" else ZERO)
    for empty in ("zero", "one", "skip", "error"):  # no query scored: 0 whatever the empty-query rule
        add("RankingMetrics", f"empty={empty}",
            lambda _, e=empty: gpumetrics.RankingMetrics(["ndcg@10", "map"], empty=e),
            lambda m: m.update(torch.zeros(0, 5), torch.zeros(0, 5)), ZERO)
    add("RankingMetrics", "flat", lambda _: gpumetrics.RankingMetrics(["mrr"]),
        lambda m: m.update(torch.zeros(0), torch.zeros(0), query_ids=torch.zeros(0, dtype=torch.long)), ZERO)

    fid_message = "FID needs at least 2"
    add("FrechetInceptionDistance", "", lambda _: gpumetrics.FrechetInceptionDistance(feature=64, weights="random"),
        _images_empty, (ValueError, fid_message))
    add("KernelInceptionDistance", "", lambda _: gpumetrics.KernelInceptionDistance(feature=64, weights="random"),
        _images_empty, (ValueError, "KID needs real and generated features"))
    for reduction in ("mean", "sum", "none"):  # undefined without a pair, whatever the reduction
        add("CLIPScore", repr({"reduction": reduction}),
            lambda tmp, r=reduction: gpumetrics.CLIPScore("open_clip", _tiny_clip_config(tmp), pretrained="random",
                                                          reduction=r),
            lambda m: m.update(torch.zeros(0, 3, 32, 32), []), (ValueError, "CLIP score needs at least one"))
    add("ImageGenerationScore", "", _image_generation, None, (ValueError, fid_message))
    for task in ("ImageCaptioningScore", "VisualQAScore"):  # their CLIP term is undefined without a pair
        add(task, "", lambda tmp, t=task: getattr(gpumetrics.suites.captioning, t)(
            str(tmp), {}, "open_clip", _tiny_clip_config(tmp), "random"), None,
            (ValueError, "CLIP score needs at least one"))
    return cases


CASES = _cases()


def _module_classes() -> set[type]:
    """Every public ``gpumetrics.Metric`` subclass defined anywhere in the package, plus the exported ones."""
    found = set()
    for info in pkgutil.walk_packages(gpumetrics.__path__, "gpumetrics."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, gpumetrics.Metric) and value is not gpumetrics.Metric \
                    and not name.startswith("_") and value.__module__.startswith("gpumetrics") \
                    and not inspect.isabstract(value):
                found.add(value)
    for namespace in (gpumetrics, classification):
        for name in namespace.__all__:
            value = getattr(namespace, name)
            if inspect.isclass(value) and issubclass(value, gpumetrics.Metric) and value is not gpumetrics.Metric:
                found.add(value)
    return found


def _readme_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("**Empty input.**")
    return text[start: text.index("\n## ", start)]


def test_every_module_has_an_empty_input_rule_documented_and_tested():
    names = {cls.__name__ for cls in _module_classes()}
    assert names, "no module class found"
    assert names == set(CASES), f"without a case: {sorted(names - set(CASES))}; stale: {sorted(set(CASES) - names)}"
    for cls in _module_classes():  # every option family with per-sample output has its empty case
        if "reduction" in inspect.signature(cls.__init__).parameters:
            labels = [label for label, *_ in CASES[cls.__name__]]
            assert any("'reduction': 'none'" in label for label in labels), f"{cls.__name__}: no reduction='none' case"
    section = _readme_section()
    undocumented = [name for name in sorted(names)
                    if not re.search(rf"`{name}`", section)
                    and not re.search(rf"`{re.sub(r'(Precision|Recall|F1Score)$', '', name)}`", section)]
    assert not undocumented, f"missing from README's 'Empty input' table: {undocumented}"


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    assert isinstance(value, torch.Tensor), f"unexpected result {value!r}"
    return [value]


def _check_value(result: Any, expected: Any) -> None:
    tensors = _tensors(result)
    assert tensors
    if expected == EMPTY:
        assert all(t.numel() == 0 for t in tensors), result
    elif expected == ZERO:
        assert all(t.ndim == 0 and t.item() == 0 for t in tensors), result
    else:
        _, value = expected
        assert all(t.numel() > 0 and bool((t == value).all()) for t in tensors), result


def _params():
    return [pytest.param(name, i, id=f"{name}-{label}" if label else name)
            for name, entries in CASES.items() for i, (label, *_) in enumerate(entries)]


@pytest.mark.parametrize("name, index", _params())
def test_compute_with_nothing_scored_gives_the_documented_value(name, index, tmp_path):
    _, build, empty_update, expected = CASES[name][index]
    raises = isinstance(expected, tuple) and expected[0] is ValueError

    metric = build(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if raises:
            with pytest.raises(ValueError, match=expected[1]):
                metric.compute()
        else:
            _check_value(metric.compute(), expected)
    others = [str(w.message) for w in caught if not _TORCHMETRICS_WARNING.search(str(w.message))]
    assert not others, others

    if empty_update is None:
        return
    metric = build(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty batch warns about nothing
        if raises:
            with pytest.raises(ValueError, match="empty"):
                empty_update(metric)
            return
        empty_update(metric)
        _check_value(metric.compute(), expected)
        empty_update(metric)  # twice, and the result is the same
        _check_value(metric.compute(), expected)
