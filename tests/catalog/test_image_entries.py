"""The image-file catalog entries (fid, kid, clip_score) through the harness, with random-weight models on a few
small images: the task's score equals the image metric fed the same images directly."""

from __future__ import annotations

import json
import re
import warnings

import pytest
import torch
from PIL import Image

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


def _with_bad_files(tmp_path, captions=False):
    """5 good generated images, then a truncated JPEG, garbage bytes, an empty file and an absent file; references:
    real images (``captions``: a caption each). The good images, the real ones, the references."""
    fake = save_random_images(tmp_path / "fake", seed=1, n=5, size=(32, 32))
    real = save_random_images(tmp_path / "real", seed=2, n=5, size=(32, 32))
    Image.open(tmp_path / "fake" / "0.png").save(tmp_path / "whole.jpg", quality=90)
    (tmp_path / "fake" / "cut.jpg").write_bytes((tmp_path / "whole.jpg").read_bytes()[:300])
    (tmp_path / "fake" / "junk.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 9)
    (tmp_path / "fake" / "empty.png").write_bytes(b"")
    names = [f"fake/{i}.png" for i in range(5)] + ["fake/cut.jpg", "fake/junk.png", "fake/empty.png", "fake/no.png"]
    texts = ["a red dog", "two cats", "a house", "a tree", "the sea", "a car", "a boat", "a cup", "a hat"]
    references = {i: [texts[i] if captions else f"real/{i % 5}.png"] for i in range(9)}
    _records(tmp_path, dict(enumerate(names)), references)
    return fake, real, [r[0] for r in references.values()]


def _run_warning(tmp_path, metric, options):
    with pytest.warns(UserWarning, match="cannot be decoded") as caught:
        result = _run(tmp_path, metric, options)
    (message,) = [str(w.message) for w in caught if "cannot be decoded" in str(w.message)]
    return result, message


@pytest.mark.parametrize("metric", ["fid", "kid"])
def test_missing_image_zero_leaves_missing_and_undecodable_generated_images_out(tmp_path, metric):
    from gpumetrics.image.fid import FrechetInceptionDistance
    from gpumetrics.image.kid import KernelInceptionDistance

    fake, real, _ = _with_bad_files(tmp_path)
    options = {"feature": 64, "weights": "random", **({"subsets": 3, "subset_size": 4} if metric == "kid" else {})}
    result, message = _run_warning(tmp_path, metric, {**options, "missing_image": "zero"})
    direct = (FrechetInceptionDistance if metric == "fid" else KernelInceptionDistance)(**options)
    direct.update(fake, real=False)
    direct.update(real[[i % 5 for i in range(9)]], real=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the rank-deficiency warning of so few images
        value = direct.compute()
    assert result.score == pytest.approx(float(value if metric == "fid" else value[0]), rel=1e-6, abs=1e-9)
    assert result.details["images_failed"] == 4 and result.details["images_undecodable"] == 3
    assert re.fullmatch(rf"{metric}: 3 image file\(s\) cannot be decoded, each left out of the generated set \('\S+/"
                        r"fake/cut\.jpg': [^;]+; '\S+/fake/junk\.png': [^;]+; '\S+/fake/empty\.png': [^;]+\)", message)
    assert "|missing_image:left-out|" in result.signature


def test_missing_image_zero_scores_clip_0_for_missing_and_undecodable_images(tmp_path):
    from gpumetrics.image.clip_score import CLIPScore

    (tmp_path / "clip").mkdir()
    model = save_random_hf_clip(tmp_path / "clip", TINY_CLIP)
    fake, _, captions = _with_bad_files(tmp_path, captions=True)
    result, message = _run_warning(tmp_path, "clip_score", {"model_name": model, "missing_image": "zero"})
    direct = CLIPScore("hf", model)
    direct.update(fake, captions[:5])
    assert result.score == pytest.approx(float(direct.compute()) * 5 / 9, rel=1e-5)
    assert result.details["clip_failed"] == 4 and result.details["clip_undecodable"] == 3
    assert message.startswith("clip_score: 3 image file(s) cannot be decoded, each scored CLIP 0 (")
    assert "|missing_image:clip0|" in result.signature


@pytest.mark.parametrize("metric", ["fid", "kid", "clip_score"])
def test_missing_image_error_names_the_file_and_the_option_is_checked(tmp_path, metric):
    _with_bad_files(tmp_path, captions=metric == "clip_score")
    options = {"weights": "random", "feature": 64} if metric != "clip_score" else {"model_name": "x"}
    with pytest.raises(ConfigError, match="`missing_image` must be one of 'error', 'zero'; got 'skip'"):
        _run(tmp_path, metric, {**options, "missing_image": "skip"})
    if metric == "clip_score":
        return  # the model is not built here: the reading errors are the same code as fid's and kid's
    with pytest.raises(Exception, match=r"samples 4\.\.5 .*fake/cut\.jpg' cannot be decoded"):
        _run(tmp_path, metric, options)
    _records(tmp_path, {0: "fake/0.png", 1: "fake/1.png", 2: "fake/no.png"}, {i: ["real/0.png"] for i in range(3)})
    with pytest.raises(Exception, match=r"prediction 0: image file not found: \S+/fake/no\.png"):
        _run(tmp_path, metric, options)  # the batch of sample 2 alone


def _evaluate_warned(tmp_path, capsys, task: dict, warning: str) -> str:
    """``gpumetrics evaluate`` of a config holding ``task``, which must warn ``warning`` and succeed: its stderr."""
    from gpumetrics import cli

    (tmp_path / "c.yaml").write_text(json.dumps({"tasks": [task]}), encoding="utf-8")
    with pytest.warns(UserWarning, match=warning):
        code = cli.main(["evaluate", str(tmp_path / "c.yaml"), "-o", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code == 0, err
    return err


def test_evaluate_prints_the_count_of_generated_images_left_out(tmp_path, capsys):
    _with_bad_files(tmp_path)
    task = {"name": "t", "metric": "fid", "predictions": "p.jsonl", "references": "r.jsonl",
            "options": {"feature": 64, "weights": "random", "missing_image": "zero"}}
    err = _evaluate_warned(tmp_path, capsys, task, r"fid: 3 image file\(s\) cannot be decoded")
    assert ("WARNING: task 't': 4 of 9 generated images are missing or cannot be decoded, 3 of them a file that "
            "cannot be decoded: left out of the generated set (missing_image: zero)") in err


def test_evaluate_prints_the_count_of_clip_images_scored_0(tmp_path, capsys):
    """The clip_score task's line says what its option did (it quoted the AIJ scripts' captioning rules)."""
    (tmp_path / "clip").mkdir()
    model = save_random_hf_clip(tmp_path / "clip", TINY_CLIP)
    _with_bad_files(tmp_path, captions=True)
    task = {"name": "t", "metric": "clip_score", "predictions": "p.jsonl", "references": "r.jsonl",
            "options": {"model_name": model, "missing_image": "zero"}}
    err = _evaluate_warned(tmp_path, capsys, task, r"clip_score: 3 image file\(s\) cannot be decoded")
    assert ("WARNING: task 't': 4 of 9 images are missing or cannot be decoded, 3 of them a file that cannot be "
            "decoded: CLIP 0 for each (missing_image: zero)") in err


def test_too_few_generated_images_left_names_the_ones_left_out(tmp_path):
    _with_bad_files(tmp_path)
    references = {i: [f"real/{i}.png"] for i in range(3)}
    _records(tmp_path, {0: "fake/0.png", 1: "fake/junk.png", 2: "fake/no.png"}, references)
    with pytest.raises(Exception, match=r"at least 2 fake samples, got 1.* \(2 generated images are missing or cannot "
                                        r"be decoded: `missing_image: zero` left them out\)"):
        _run(tmp_path, "fid", {"feature": 64, "weights": "random", "missing_image": "zero"})


def _cli(tmp_path, capsys, metric, options, *flags):
    from gpumetrics import cli

    task = {"name": "t", "metric": metric, "predictions": "p.jsonl", "references": "r.jsonl", "options": options}
    (tmp_path / "c.yaml").write_text(json.dumps({"tasks": [task]}), encoding="utf-8")
    output = [] if "--check" in flags else ["-o", str(tmp_path / "r.json")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the undecodable files' warning (tested above)
        code = cli.main(["evaluate", str(tmp_path / "c.yaml"), *output, *flags])
    err = capsys.readouterr()
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8")) if code == 0 and output else None
    return code, err.out, err.err, report


def _without_prediction(tmp_path, sample):
    """The predictions file without the record of ``sample``."""
    lines = (tmp_path / "p.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "p.jsonl").write_text("".join(line for line in lines if json.loads(line)["id"] != sample),
                                      encoding="utf-8")


@pytest.mark.parametrize("metric", ["fid", "kid", "clip_score"])
def test_missing_image_zero_scores_a_record_without_prediction_as_one_naming_a_missing_file(tmp_path, capsys,
                                                                                           metric):
    """An id of the references without a prediction was a DataError (no empty answer) even under ``missing_image:
    zero``; it is now scored exactly as a prediction naming an absent file (sample 8, ``fake/no.png``): the same
    score and counts, and the report counts it as a missing prediction."""
    if metric == "clip_score":
        (tmp_path / "clip").mkdir()
        options = {"model_name": save_random_hf_clip(tmp_path / "clip", TINY_CLIP)}
    else:
        options = {"feature": 64, "weights": "random", **({"subsets": 3, "subset_size": 4} if metric == "kid" else {})}
    options["missing_image"] = "zero"
    _with_bad_files(tmp_path, captions=metric == "clip_score")
    code, _, err, named = _cli(tmp_path, capsys, metric, options)
    assert code == 0, err
    _without_prediction(tmp_path, 8)
    code, _, err, absent = _cli(tmp_path, capsys, metric, options)
    assert code == 0, err
    (named,), (absent,) = named["tasks"], absent["tasks"]
    assert absent["score"] == named["score"] and absent["details"] == named["details"]
    assert absent["signature"] == named["signature"]
    prefix = "clip" if metric == "clip_score" else "images"
    assert absent["details"][f"{prefix}_failed"] == 4 and absent["details"][f"{prefix}_undecodable"] == 3
    assert named["counts"]["missing_predictions"] == 0
    assert absent["counts"]["missing_predictions"] == 1 and absent["counts"]["missing_ids"] == ["8"]
    assert ("missing or cannot be decoded, 3 of them a file that cannot be decoded, 1 of them a record without "
            "prediction: ") in err, err
    assert err.count("WARNING") == 1, err
    # --check: not an error under zero, the missing prediction counted; under "error" the DataError of before
    code, out, err, _ = _cli(tmp_path, capsys, metric, options, "--check")
    assert code == 0 and re.search(r"│ t\s+│ \S+\s+│\s+9 │\s+1 │ '8'", out), out + err
    for flags in [(), ("--check",)]:
        code, _, err, _ = _cli(tmp_path, capsys, metric, {**options, "missing_image": "error"}, *flags)
        assert code == 2 and (f"task 't': 1 of 9 references have no prediction (ids '8'); metric '{metric}' has no "
                              "empty answer to score them with, so every id needs a prediction") in err, err
