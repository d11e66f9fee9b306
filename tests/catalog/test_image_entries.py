"""The image-file catalog entries (fid, kid, clip_score) through the harness, with random-weight models on a few
small images: the task's score equals the image metric fed the same images directly."""

from __future__ import annotations

import json

import pytest
import torch

from gpumetrics.harness.config import ConfigError, parse_config
from gpumetrics.harness.runner import evaluate
from testkit.clip_models import TINY_CLIP, save_random_hf_clip
from tests.helpers.image_files import save_random_images


def _records(tmp_path, predictions, references):
    with open(tmp_path / "p.jsonl", "w") as handle:
        handle.writelines(json.dumps({"id": i, "prediction": p}) + "\n" for i, p in predictions.items())
    with open(tmp_path / "r.jsonl", "w") as handle:
        handle.writelines(json.dumps({"id": i, "references": r}) + "\n" for i, r in references.items())


def _run(tmp_path, metric, options):
    task = {"name": "t", "metric": metric, "options": options, "predictions": "p.jsonl", "references": "r.jsonl"}
    (result,) = evaluate(parse_config({"tasks": [task]}, tmp_path / "c.yaml"), batch_size=2).tasks
    return result


@pytest.fixture
def image_pairs(tmp_path):
    fake = save_random_images(tmp_path / "fake", seed=1, n=5)
    real = save_random_images(tmp_path / "real", seed=2, n=5)
    _records(tmp_path, {i: f"fake/{i}.png" for i in range(5)}, {i: [f"real/{i}.png"] for i in range(5)})
    return fake, real


def test_fid_entry_equals_the_metric_on_the_same_images(tmp_path, image_pairs):
    from gpumetrics.image.fid import FrechetInceptionDistance

    fake, real = image_pairs
    result = _run(tmp_path, "fid", {"feature": 64, "weights": "random"})
    direct = FrechetInceptionDistance(feature=64, weights="random")
    direct.update(fake, real=False)
    direct.update(real, real=True)
    assert result.score == pytest.approx(float(direct.compute()), rel=1e-6)
    assert result.higher_is_better is False and "weights:random" in result.signature


def test_kid_entry_equals_the_metric_on_the_same_images(tmp_path, image_pairs):
    from gpumetrics.image.kid import KernelInceptionDistance

    fake, real = image_pairs
    options = {"feature": 64, "weights": "random", "subsets": 3, "subset_size": 4}
    result = _run(tmp_path, "kid", options)
    direct = KernelInceptionDistance(**options)
    direct.update(fake, real=False)
    direct.update(real, real=True)
    mean, std = direct.compute()
    assert result.score == pytest.approx(float(mean), rel=1e-6, abs=1e-9)
    assert result.details["kid_std"] == pytest.approx(float(std), rel=1e-6, abs=1e-9)


def test_clip_score_entry_equals_the_metric_on_the_same_pairs(tmp_path):
    from gpumetrics.image.clip_score import CLIPScore

    (tmp_path / "clip").mkdir()
    model = save_random_hf_clip(tmp_path / "clip", TINY_CLIP)
    images = save_random_images(tmp_path / "img", seed=3, n=3, size=(32, 32))
    captions = ["a red dog", "two cats", "a house"]
    _records(tmp_path, {i: f"img/{i}.png" for i in range(3)}, {i: [c] for i, c in enumerate(captions)})
    result = _run(tmp_path, "clip_score", {"model_name": model})
    direct = CLIPScore("hf", model)
    direct.update(images, captions)
    assert result.score == pytest.approx(float(direct.compute()), rel=1e-5)


def test_image_entries_check_options_without_loading_a_model(tmp_path, image_pairs):
    with pytest.raises(ConfigError, match="batch_size"):
        _run(tmp_path, "fid", {"batch_size": 0, "weights": "random"})
    with pytest.raises(ConfigError, match="no_such_option"):
        _run(tmp_path, "kid", {"no_such_option": 1})
    with pytest.raises(Exception, match="image file not found"):
        _records(tmp_path, {0: "fake/nope.png"}, {0: ["real/0.png"]})
        _run(tmp_path, "fid", {"feature": 64, "weights": "random"})
    assert torch.is_tensor(image_pairs[0])


def test_fid_entry_reads_with_workers_to_the_same_bits(tmp_path, image_pairs):
    """The task's reading options: decoding processes change nothing; they are not in the signature."""
    # one image per chunk: each update of 2 records reads 2 chunks, so 2 processes start
    serial = _run(tmp_path, "fid", {"feature": 64, "weights": "random", "batch_size": 1, "workers": 0})
    parallel = _run(tmp_path, "fid", {"feature": 64, "weights": "random", "batch_size": 1, "workers": 2})
    assert parallel.score == serial.score and parallel.signature == serial.signature
    assert "decode" not in serial.signature


def test_image_entries_take_speed_mode_and_check_the_reading_options(tmp_path, image_pairs):
    result = _run(tmp_path, "fid", {"feature": 64, "weights": "random", "speed_mode": "bf16"})
    assert "bf16" in result.signature
    with pytest.raises(ConfigError, match="workers"):
        _run(tmp_path, "fid", {"feature": 64, "weights": "random", "workers": -1})
    with pytest.raises(ConfigError, match="decode"):
        _run(tmp_path, "kid", {"decode": "turbojpeg"})
    with pytest.raises(ValueError, match="nvjpeg"):  # decoded on a CUDA device only; the metric is on the CPU
        _run(tmp_path, "fid", {"feature": 64, "weights": "random", "decode": "nvjpeg"})


def test_the_nvjpeg_decoder_is_recorded_in_the_signature():
    from gpumetrics.catalog.image_files import image_file_score

    pil = image_file_score("gpumetrics.image.fid:FrechetInceptionDistance", "sets", feature=64, weights="random")
    gpu = image_file_score("gpumetrics.image.fid:FrechetInceptionDistance", "sets", feature=64, weights="random",
                           decode="nvjpeg")
    assert "decode" not in pil.signature() and "|decode:nvjpeg|version:" in gpu.signature()
    assert pil.signature().rsplit("|", 1)[1] == gpu.signature().rsplit("|", 1)[1]
