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
from tests.image.test_clip_score import TINY_OPEN_CLIP, empty_caches  # noqa: F401 (a fixture)


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


def test_missing_clip_files_fail_when_the_config_loads_before_any_task_is_scored(no_models, empty_caches):
    """CLIP files that are not where the run would load them fail the config when it loads — naming the task and the
    constructor's message (the files, where they were looked for) — instead of at that task's build, after every
    task before it had been scored (an hour of text metrics, then "not found"). The check reads the disk only:
    ``no_models`` fails the test if a model is built, ``empty_caches`` if the network is asked."""
    hf_folder = no_models / "hf-clip"
    hf_folder.mkdir()
    (hf_folder / "config.json").write_text("{}")
    (no_models / "ruclip").mkdir()
    (no_models / "ruclip" / "config.json").write_text("{}")
    cases = [
        ({"backend": "hf", "model_name": "acme/not-cached"}, FileNotFoundError, "not in the Hugging Face cache"),
        ({"backend": "hf", "model_name": str(hf_folder)}, FileNotFoundError, "lacks model.safetensors or"),
        ({"backend": "open_clip", "model_name": "ViT-B-32", "pretrained": "openai"}, FileNotFoundError,
         "no cached copy"),
        ({"backend": "open_clip", "model_name": "ViT-B-32", "pretrained": str(no_models / "w.bin")}, ValueError,
         "is neither a file, 'random' nor a pretrained tag of open_clip model 'ViT-B-32'"),
        ({"backend": "open_clip", "model_name": "ViT-B-32", "pretrained": "opneai"}, ValueError, "closest: 'openai'"),
        ({"backend": "ruclip", "model_name": str(no_models / "ruclip")}, FileNotFoundError, "lacks bpe.model"),
        ({"backend": "ruclip", "model_name": str(no_models / "none")}, FileNotFoundError, "not found locally"),
        ({"backend": "ruclip", "model_name": str(no_models / "ruclip"), "pretrained": str(no_models / "w.bin")},
         FileNotFoundError, "lacks bpe.model"),
    ]
    bleu = {"name": "BLEU", "metric": "bleu", "predictions": "p.jsonl", "references": "r.jsonl"}
    for options, error, words in cases:
        with pytest.raises(error, match=words) as built:
            CLIPScore(**options)
        clip = {"name": "CLIP", "metric": "clip_score", "options": options, "predictions": "p.jsonl",
                "references": "r.jsonl"}
        with pytest.raises(ConfigError) as checked:
            parse_config({"tasks": [bleu, clip]}, no_models / "c.yaml")
        assert "tasks[1] (CLIP)" in str(checked.value), options
        assert str(checked.value).endswith(f": {built.value}"), options
    # the same files for the AIJ-2022 task's CLIP term (its options are clip_*)
    generation = {"name": "Gen", "metric": "s_image_generation", "predictions": "p.jsonl", "references": "r.jsonl",
                  "options": {"real": str(no_models / "real"), "inception_weights": "random", "clip_backend": "ruclip",
                              "clip_model": str(no_models / "none")}}
    with pytest.raises(ConfigError, match=r"tasks\[1\] \(Gen\).*ruCLIP model .* not found locally"):
        parse_config({"tasks": [bleu, generation]}, no_models / "c.yaml")
    # named as the task's options (`clip_model`), not as CLIPScore's arguments (`model_name`)
    for option, value, words in (("clip_pretrained", 7, "`clip_pretrained` must be a tag"),
                                 ("clip_model", str(no_models / "x.json"), "`clip_model`: open_clip model config"),
                                 ("clip_backend", "jax", "`clip_backend` must be one of")):
        bad = {**generation["options"], "clip_backend": "open_clip", "clip_pretrained": "random", option: value}
        with pytest.raises(ConfigError, match=words):
            parse_config({"tasks": [{**generation, "options": bad}]}, no_models / "c.yaml")
    # files in place: the config loads (nothing read from them, no model built)
    (hf_folder / "model.safetensors").write_bytes(b"")
    for options in ({"backend": "hf", "model_name": str(hf_folder)},
                    {"backend": "hf", "model_name": str(hf_folder), "pretrained": "random"},
                    {"backend": "open_clip", "model_name": "ViT-B-32", "pretrained": "random"},
                    {"backend": "open_clip", "model_name": "ViT-B-32", "pretrained": str(hf_folder / "config.json")}):
        clip = {"name": "CLIP", "metric": "clip_score", "options": options, "predictions": "p.jsonl",
                "references": "r.jsonl"}
        parse_config({"tasks": [bleu, clip]}, no_models / "c.yaml")


def test_clip_model_paths_beside_the_config_resolve_against_its_folder(no_models, monkeypatch, tmp_path_factory):
    """``model_name`` / ``pretrained`` (``clip_model`` / ``clip_pretrained``) that name a file beside the config resolve
    against the config's folder like the data paths (they were read from the working directory, so a config run from
    elsewhere did not find its own model); names, hub ids and tags stay as written."""
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    (no_models / "w.bin").write_bytes(b"")
    bleu = {"name": "BLEU", "metric": "bleu", "predictions": "p.jsonl", "references": "r.jsonl"}
    cases = [({"backend": "open_clip", "model_name": "clip.json", "pretrained": "random"},
              {"model_name": str(no_models / "clip.json"), "pretrained": "random"}),
             ({"backend": "open_clip", "model_name": "ViT-B-32", "pretrained": "w.bin"},
              {"model_name": "ViT-B-32", "pretrained": str(no_models / "w.bin")})]
    for options, resolved in cases:
        clip = {"name": "CLIP", "metric": "clip_score", "options": options, "predictions": "p.jsonl",
                "references": "r.jsonl"}
        task = parse_config({"tasks": [bleu, clip]}, no_models / "c.yaml").tasks[1]
        assert {key: task.options[key] for key in resolved} == resolved
    generation = {"name": "Gen", "metric": "s_image_generation", "predictions": "p.jsonl", "references": "r.jsonl",
                  "options": {"real": "real", "inception_weights": "random", "clip_backend": "open_clip",
                              "clip_model": "clip.json", "clip_pretrained": "random"}}
    task = parse_config({"tasks": [generation]}, no_models / "c.yaml").tasks[0]
    assert task.options["clip_model"] == str(no_models / "clip.json")
