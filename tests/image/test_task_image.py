"""S_ImageGeneration: the formula, and the registered task metric on image files (random-weight models)."""

from __future__ import annotations

import json

import pytest
import torch
from PIL import Image

from gpumetrics.image.clip_score import clip_score
from gpumetrics.image.fid import FrechetInceptionDistance
from gpumetrics.tasks import get_metric
from gpumetrics.tasks.image import image_generation_score
from tests.image.test_clip_score import TINY_OPEN_CLIP


def test_formula_matches_the_spec():
    assert float(image_generation_score(0.25, 0.0)) == pytest.approx(0.625)
    assert float(image_generation_score(0.25, 200.0)) == pytest.approx(0.125)
    assert float(image_generation_score(0.25, 1e6)) == pytest.approx(0.125)
    assert float(image_generation_score(1.0, 100.0)) == pytest.approx(0.75)


def _save(folder, images):
    folder.mkdir()
    names = []
    for i, image in enumerate(images):
        Image.fromarray(image.permute(1, 2, 0).numpy()).save(folder / f"{i:02d}.png")
        names.append(f"{folder.name}/{i:02d}.png")
    return names


def test_task_metric_on_files_equals_its_parts(tmp_path, inception_file):
    generator = torch.Generator().manual_seed(0)
    real = torch.randint(0, 256, (5, 3, 30, 40), dtype=torch.uint8, generator=generator)
    fake = torch.randint(0, 200, (4, 3, 30, 40), dtype=torch.uint8, generator=generator)
    _save(tmp_path / "real", real)
    names = _save(tmp_path / "fake", fake)
    captions = ["a cat", "собака", "鳥", "🙂"]
    config = tmp_path / "tiny-clip.json"
    config.write_text(json.dumps(TINY_OPEN_CLIP))
    entry = get_metric("s_image_generation")
    metric = entry.build({
        "real": str(tmp_path / "real"), "image_root": str(tmp_path), "fid_feature": 64,
        "inception_weights": str(inception_file), "clip_backend": "open_clip", "clip_model": str(config),
        "clip_pretrained": "random", "batch_size": 3,
    })
    predictions, references = names, [[c] for c in captions]
    metric.update(*entry.update_args(predictions[:2], references[:2]))
    metric.update(*entry.update_args(predictions[2:], references[2:]))
    result = metric.compute()

    fid = FrechetInceptionDistance(feature=64, weights=str(inception_file))
    fid.update(real, real=True)
    fid.update(fake, real=False)
    with pytest.warns(UserWarning):
        expected_fid = fid.compute()
    expected_clip = clip_score(fake, captions, "open_clip", str(config), "random", scale=1)
    assert float(result["fid"]) == pytest.approx(float(expected_fid), rel=1e-9)
    assert float(result["clip"]) == pytest.approx(float(expected_clip), abs=1e-6)
    assert float(result["score"]) == pytest.approx(float(image_generation_score(expected_clip, expected_fid)), abs=1e-6)
    assert metric.signature().startswith("s_image_generation|fid:fid|feature:64|")
    with pytest.raises(ValueError, match="`images`"):
        metric.update(["missing.png"], ["x"])
    with pytest.raises(ValueError, match="`real`"):
        entry.build({"real": str(tmp_path / "nothing")})
