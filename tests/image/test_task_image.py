"""S_ImageGeneration: the formula, and the registered task metric on image files (random-weight models)."""

from __future__ import annotations

import json
import warnings

import pytest
import torch
from PIL import Image

from gpumetrics.image.clip_score import clip_score
from gpumetrics.image.fid import FrechetInceptionDistance
from gpumetrics.catalog import get_metric
from gpumetrics.suites.image import image_generation_score
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
    with pytest.raises(ValueError, match=r"`images\[0\]`"):
        metric.update(["missing.png"], ["x"])
    with pytest.raises(ValueError, match="`real`"):
        entry.build({"real": str(tmp_path / "nothing")})


def _tiny_task_options(tmp_path, inception_file):
    config = tmp_path / "tiny-clip.json"
    config.write_text(json.dumps(TINY_OPEN_CLIP))
    return {"fid_feature": 64, "inception_weights": str(inception_file), "clip_backend": "open_clip",
            "clip_model": str(config), "clip_pretrained": "random", "batch_size": 3}


def test_prediction_paths_must_stay_inside_image_root(tmp_path, inception_file):
    generator = torch.Generator().manual_seed(1)
    _save(tmp_path / "real", torch.randint(0, 256, (3, 3, 30, 40), dtype=torch.uint8, generator=generator))
    root = tmp_path / "submission"
    root.mkdir()
    names = _save(root / "gen", torch.randint(0, 256, (2, 3, 30, 40), dtype=torch.uint8, generator=generator))
    (root / "link.png").symlink_to(tmp_path / "real" / "00.png")
    options = {**_tiny_task_options(tmp_path, inception_file), "real": str(tmp_path / "real"), "image_root": str(root)}
    metric = get_metric("s_image_generation").build(options)
    metric.update(names, ["a", "b"])  # inside: fine
    escapes = ["../real/00.png", str(tmp_path / "real" / "01.png"), "link.png", "gen/../../real/02.png"]
    for escape in escapes:
        with pytest.raises(ValueError, match=r"`images\[1\]`.*leaves image_root.*allow_outside_root"):
            metric.update([names[0], escape], ["a", "b"])
    allowed = get_metric("s_image_generation").build({**options, "allow_outside_root": True})
    allowed.update(escapes, ["a", "b", "c", "d"])
    assert "outside-root-allowed" in allowed.signature() and "outside-root" not in metric.signature()
    with pytest.raises(TypeError, match="`allow_outside_root`"):
        get_metric("s_image_generation").build({**options, "allow_outside_root": "yes"})


def test_real_and_image_root_resolve_against_the_config_folder(tmp_path, inception_file, monkeypatch):
    from gpumetrics.harness.config import load_config

    generator = torch.Generator().manual_seed(2)
    project = tmp_path / "project"
    (project / "configs").mkdir(parents=True)
    _save(project / "real", torch.randint(0, 256, (3, 3, 30, 40), dtype=torch.uint8, generator=generator))
    names = _save(project / "gen", torch.randint(0, 256, (2, 3, 30, 40), dtype=torch.uint8, generator=generator))
    (project / "p.jsonl").write_text("".join(json.dumps({"id": i, "prediction": n}) + "\n"
                                             for i, n in enumerate(names)))
    (project / "r.jsonl").write_text("".join(json.dumps({"id": i, "references": ["x"]}) + "\n" for i in range(2)))
    options = {**_tiny_task_options(tmp_path, inception_file), "real": "../real", "image_root": ".."}
    config = project / "configs" / "gen.yaml"
    config.write_text(json.dumps({"tasks": [{"name": "G", "metric": "s_image_generation", "options": options,
                                             "predictions": "../p.jsonl", "references": "../r.jsonl"}]}))
    monkeypatch.chdir(tmp_path)  # not the config's folder: `real`/`image_root` must not depend on it
    (task,) = load_config(config).tasks
    assert task.options["real"] == str(project / "real") and task.options["image_root"] == str(project)
    metric = task.metric.build(task.options)
    metric.update(*task.metric.update_args(names, [["x"], ["y"]]))
    assert 0 <= float(metric.compute()["score"]) <= 1
    # an unset image_root is the config's folder, not the working directory
    del options["image_root"]
    config.write_text(json.dumps({"tasks": [{"name": "G", "metric": "s_image_generation", "options": options,
                                             "predictions": "../p.jsonl", "references": "../r.jsonl"}]}))
    assert load_config(config).tasks[0].options["image_root"] == str(project / "configs")


def test_config_validation_loads_no_model(tmp_path, inception_file, monkeypatch):
    """A config is validated without building Inception or CLIP, and bad options still fail there, named."""
    from gpumetrics.image import clip_score as clip_module
    from gpumetrics.image import inception as inception_module
    from gpumetrics.harness.config import ConfigError, parse_config

    def no_model(*args, **kwargs):
        raise AssertionError("config validation built a model")

    monkeypatch.setattr(inception_module.FIDInceptionV3, "__init__", no_model)
    monkeypatch.setattr(clip_module, "_build_backend", no_model)
    (tmp_path / "real").mkdir()
    for name in ("p.jsonl", "r.jsonl"):
        (tmp_path / name).write_text("")
    good = {**_tiny_task_options(tmp_path, inception_file), "real": "real", "image_root": "."}

    def parse(options):
        task = {"name": "G", "metric": "s_image_generation", "options": options,
                "predictions": "p.jsonl", "references": "r.jsonl"}
        return parse_config({"tasks": [task]}, tmp_path / "gen.yaml")

    (task,) = parse(good).tasks
    assert task.options["real"] == str(tmp_path / "real")
    bad = {
        "fid_feature": (100, "feature"), "resize": ("bogus", "resize"), "clip_backend": ("jax", "backend"),
        "batch_size": (0, "batch_size"), "real": ("missing", "real"), "inception_weights": ("nope.pth", "weights"),
        "allow_outside_root": ("yes", "allow_outside_root"), "fid_featur": (64, "fid_featur"),
    }
    for key, (value, named) in bad.items():
        with pytest.raises(ConfigError, match=rf"tasks\[0\] \(G\).*{named}"):
            parse({**good, key: value})


def test_the_real_folder_is_cached_and_its_pass_reported(tmp_path, inception_file, extracted, feature_cache_dir):
    generator = torch.Generator().manual_seed(3)
    _save(tmp_path / "real", torch.randint(0, 256, (4, 3, 30, 40), dtype=torch.uint8, generator=generator))
    names = _save(tmp_path / "gen", torch.randint(0, 256, (2, 3, 30, 40), dtype=torch.uint8, generator=generator))
    entry = get_metric("s_image_generation")
    options = {**_tiny_task_options(tmp_path, inception_file), "real": str(tmp_path / "real"),
               "image_root": str(tmp_path), "cache_dir": str(tmp_path / "cache")}

    def run(**changes):
        extracted.clear()
        reports = []
        metric = entry.build({**options, **changes})
        metric.load_real(progress=lambda *report: reports.append(report))
        reference_calls = list(extracted)
        metric.update(names, ["a", "b"])
        metric.load_real()  # once: compute() does not read the folder again
        return metric.compute(), reference_calls, reports

    first, calls, reports = run()
    assert calls == [3, 1] and ("real images", 4, 4) in reports and ("hashing real images", 4, 4) in reports
    second, calls, reports = run()
    assert calls == [] and [r for r in reports if r[0] == "real images"] == []
    assert len(list((tmp_path / "cache").iterdir())) == 1
    uncached, calls, _ = run(no_cache=True, cache_dir=str(tmp_path / "unused"))
    assert calls == [3, 1] and not (tmp_path / "unused").exists()
    for key in ("fid", "score"):
        assert first[key].item() == second[key].item() == uncached[key].item()
    assert list(feature_cache_dir.iterdir()) == []
    run(cache_dir=None)  # unset: the default folder
    assert len(list(feature_cache_dir.iterdir())) == 1
    with pytest.raises(TypeError, match="`no_cache`"):
        entry.check({**options, "no_cache": "yes"})
    with pytest.raises(TypeError, match="`cache_dir`"):
        entry.check({**options, "cache_dir": 3})


def test_evaluate_reads_the_real_folder_first_and_reports_it(tmp_path, inception_file):
    from gpumetrics.harness.config import load_config
    from gpumetrics.harness.runner import evaluate

    generator = torch.Generator().manual_seed(4)
    _save(tmp_path / "real", torch.randint(0, 256, (4, 3, 30, 40), dtype=torch.uint8, generator=generator))
    names = _save(tmp_path / "gen", torch.randint(0, 256, (2, 3, 30, 40), dtype=torch.uint8, generator=generator))
    (tmp_path / "p.jsonl").write_text("".join(json.dumps({"id": i, "prediction": n}) + "\n"
                                              for i, n in enumerate(names)))
    (tmp_path / "r.jsonl").write_text("".join(json.dumps({"id": i, "references": ["x"]}) + "\n" for i in range(2)))
    options = {**_tiny_task_options(tmp_path, inception_file), "real": "real", "cache_dir": "cache"}
    config = tmp_path / "gen.yaml"
    config.write_text(json.dumps({"tasks": [{"name": "G", "metric": "s_image_generation", "options": options,
                                             "predictions": "p.jsonl", "references": "r.jsonl"}]}))
    reports = []
    evaluate(load_config(config), progress=lambda *report: reports.append(report))
    phases = list(dict.fromkeys(phase for phase, _, _ in reports))
    assert phases == ["G: reading predictions", "G: reading references", "G: hashing real images", "G: real images",
                      "G"]
    assert ("G: real images", 4, 4) in reports and len(list((tmp_path / "cache").iterdir())) == 1  # config-relative


def test_reading_and_speed_options_of_the_image_generation_task(tmp_path, inception_file):
    """workers change nothing (the same bits, the same signature); speed modes and the decoder are recorded; bad
    values name their option before any model is built."""
    generator = torch.Generator().manual_seed(2)
    _save(tmp_path / "real", torch.randint(0, 256, (4, 3, 30, 40), dtype=torch.uint8, generator=generator))
    names = _save(tmp_path / "gen", torch.randint(0, 256, (5, 3, 30, 40), dtype=torch.uint8, generator=generator))
    options = {**_tiny_task_options(tmp_path, inception_file), "real": str(tmp_path / "real"),
               "image_root": str(tmp_path), "batch_size": 2, "no_cache": True}
    entry = get_metric("s_image_generation")
    results, signatures = [], []
    for workers in (0, 2):
        metric = entry.build({**options, "workers": workers})
        metric.update(names, ["a", "b", "c", "d", "e"])
        results.append({k: float(v) for k, v in metric.compute().items()})
        signatures.append(metric.signature())
    assert results[0] == results[1] and signatures[0] == signatures[1]
    fast = entry.build({**options, "fid_speed_mode": "bf16+channels_last", "clip_speed_mode": "bf16"})
    assert "speed:bf16+channels_last" in fast.signature().split("|clip:")[0]
    assert "bf16" in fast.signature().split("|clip:")[1]
    for option, value in (("workers", -2), ("decode", "jpeg"), ("fid_speed_mode", "int8"),
                          ("clip_speed_mode", "channels_last")):
        with pytest.raises(ValueError, match=f"`{option}`"):
            entry.check_options(**{**options, option: value})


def test_missing_image_zero_scores_a_record_without_prediction_as_one_naming_no_file(tmp_path, inception_file):
    """Records of ``s_image_generation`` under ``missing_image: zero``: an id without a prediction was a DataError
    (no empty answer); it now scores as a prediction naming an absent file does (CLIP 0, out of FID, counted in
    ``clip_failed``). Under ``"error"`` it stays the DataError."""
    from gpumetrics.harness.config import load_config
    from gpumetrics.harness.records import DataError
    from gpumetrics.harness.runner import check_data, evaluate

    generator = torch.Generator().manual_seed(5)
    _save(tmp_path / "real", torch.randint(0, 256, (4, 3, 30, 40), dtype=torch.uint8, generator=generator))
    names = _save(tmp_path / "gen", torch.randint(0, 256, (3, 3, 30, 40), dtype=torch.uint8, generator=generator))
    (tmp_path / "r.jsonl").write_text("".join(json.dumps({"id": i, "references": [f"caption {i}"]}) + "\n"
                                              for i in range(4)))
    options = {**_tiny_task_options(tmp_path, inception_file), "real": "real", "missing_image": "zero"}
    config = tmp_path / "gen.yaml"

    def run(predictions: dict, **extra):
        (tmp_path / "p.jsonl").write_text("".join(json.dumps({"id": i, "prediction": n}) + "\n"
                                                  for i, n in predictions.items()))
        config.write_text(json.dumps({"tasks": [{"name": "G", "metric": "s_image_generation", "predictions": "p.jsonl",
                                                 "references": "r.jsonl", "options": {**options, **extra}}]}))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # FID of 3 images: rank-deficient
            return evaluate(load_config(config)).tasks[0]

    named = run({0: names[0], 1: "gen/none.png", 2: names[1], 3: names[2]})
    absent = run({0: names[0], 2: names[1], 3: names[2]})
    assert (absent.score, absent.details) == (named.score, named.details) and absent.details["clip_failed"] == 1
    assert (named.missing, absent.missing, absent.missing_ids) == (0, 1, ["1"])
    (check,) = check_data(load_config(config))
    assert (check.n, check.missing, check.missing_ids) == (4, 1, ["1"])
    with pytest.raises(DataError, match="1 of 4 references have no prediction"):
        run({0: names[0], 2: names[1], 3: names[2]}, missing_image="error")
