"""The image classes check their options in one place: a bad option gives the same error (type and message) from a
config's check — which builds no model — and from the constructor (FID/KID's extractor options, KID's own, CLIP
score's, S_ImageGeneration's and S_ImageCaptioning / S_VisualQA's)."""

from __future__ import annotations

import inspect
import json
import math

import pytest

from gpumetrics.harness.config import ConfigError, parse_config
from gpumetrics.image import clip_score as clip_module
from gpumetrics.image import features as features_module
from gpumetrics.image.clip_score import CLIPScore
from gpumetrics.image.fid import FrechetInceptionDistance
from gpumetrics.image.kid import KernelInceptionDistance
from gpumetrics.suites.captioning import ImageCaptioningScore, VisualQAScore
from gpumetrics.suites.image import ImageGenerationScore
from tests.image.test_clip_score import TINY_OPEN_CLIP


@pytest.fixture()
def no_models(tmp_path, monkeypatch):
    """Neither a config check nor a constructor that refuses an option may build a model first; ``tmp_path`` holds
    the task files, a real-image folder and a tiny open_clip config."""

    def built(*args, **kwargs):
        raise AssertionError("a model was built before the options were checked")

    monkeypatch.setattr(clip_module, "_build_backend", built)
    monkeypatch.setattr(features_module, "build_extractor", built)
    for name in ("p.jsonl", "r.jsonl"):
        (tmp_path / name).write_text("")
    (tmp_path / "real").mkdir()
    (tmp_path / "clip.json").write_text(json.dumps(TINY_OPEN_CLIP))
    return tmp_path


def _same_error(folder, metric: str, build, options: dict, bad: dict) -> None:
    """For each ``name: value`` of ``bad``: the config check of task ``metric`` and ``build(**options, name=value)``
    raise the same error; the config names the task and carries the constructor's message whole."""
    for name, value in bad.items():
        with pytest.raises((TypeError, ValueError, FileNotFoundError)) as built:
            build(**{**options, name: value})
        with pytest.raises(ConfigError) as checked:
            task = {"name": "T", "metric": metric, "options": {**options, name: value},
                    "predictions": "p.jsonl", "references": "r.jsonl"}
            parse_config({"tasks": [task]}, folder / "c.yaml")
        message = str(built.value)
        assert "tasks[0] (T)" in str(checked.value) and str(checked.value).endswith(f": {message}"), name


def _same_error_from_check_options(cls, options: dict, bad: dict) -> None:
    """``cls.check_options`` (what the catalog's config check calls, all options bound) raises the constructor's
    error: same type, same message."""
    defaults = {n: p.default for n, p in inspect.signature(cls.__init__).parameters.items()
                if p.default is not inspect.Parameter.empty}
    for name, value in bad.items():
        with pytest.raises((TypeError, ValueError, FileNotFoundError)) as built:
            cls(**{**options, name: value})
        with pytest.raises(type(built.value)) as checked:
            cls.check_options({**defaults, **options, name: value})
        assert str(checked.value) == str(built.value), name


FEATURE_BAD = {"feature": 100, "resize": "bogus", "weights": 5, "download": "yes", "speed_mode": "turbo",
               "reset_real_features": "no"}


def test_fid_options_fail_alike_in_the_config_and_the_constructor(no_models):
    _same_error(no_models, "fid", FrechetInceptionDistance, {"weights": "random"}, FEATURE_BAD)
    _same_error_from_check_options(FrechetInceptionDistance, {"weights": "random"}, FEATURE_BAD)


def test_kid_options_fail_alike_in_the_config_and_the_constructor(no_models):
    bad = {"subsets": 0, "subset_size": 1, "degree": 0, "gamma": -1.0, "coef": math.nan, "seed": 1.5,
           "canonical_order": "yes", **FEATURE_BAD}
    _same_error(no_models, "kid", KernelInceptionDistance, {"weights": "random"}, bad)
    _same_error_from_check_options(KernelInceptionDistance, {"weights": "random"}, bad)


def test_clip_score_options_fail_alike_in_the_config_and_the_constructor(no_models):
    options = {"backend": "open_clip", "model_name": str(no_models / "clip.json"), "pretrained": "random"}
    bad = {"scale": 0, "clamp": "yes", "reduction": "median", "templates": "{} and {}", "speed_mode": "channels_last",
           "backend": "jax", "pretrained": None, "seed": "1", "download": "yes", "model_name": 3}
    _same_error(no_models, "clip_score", CLIPScore, options, bad)
    _same_error_from_check_options(CLIPScore, options, bad)


def test_image_generation_options_fail_alike_in_the_config_and_the_constructor(no_models):
    options = {"real": str(no_models / "real"), "image_root": str(no_models), "clip_backend": "open_clip",
               "clip_model": str(no_models / "clip.json"), "clip_pretrained": "random", "inception_weights": "random"}
    bad = {"fid_feature": 100, "resize": "bogus", "real": str(no_models / "missing"), "batch_size": 0,
           "allow_outside_root": "yes", "missing_image": "maybe", "clip_clamp": "no", "clip_templates": "x",
           "cache_dir": 5, "no_cache": "no", "workers": -1, "decode": "gpu", "fid_speed_mode": "turbo",
           "clip_speed_mode": "channels_last", "clip_backend": "jax"}
    _same_error(no_models, "s_image_generation", ImageGenerationScore, options, bad)


@pytest.mark.parametrize("cls, metric", [(ImageCaptioningScore, "s_image_captioning"), (VisualQAScore, "s_visual_qa")])
def test_captioning_options_fail_alike_in_the_config_and_the_constructor(no_models, cls, metric):
    options = {"image_root": str(no_models), "synonyms": {"кот": ["кошк"]}, "clip_backend": "open_clip",
               "clip_model": str(no_models / "clip.json"), "clip_pretrained": "random"}
    bad = {"synonyms": 5, "image_root": 3, "batch_size": 0, "allow_outside_root": "yes", "missing_image": "maybe",
           "clip_clamp": "no", "clip_templates": "x", "workers": -1, "decode": "gpu", "clip_speed_mode": "turbo",
           "clip_backend": "jax", "clip_pretrained": 7}
    _same_error(no_models, metric, cls, options, bad)
