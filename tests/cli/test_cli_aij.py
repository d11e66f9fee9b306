"""The AIJ suites from the command line: the shipped configs, a wrong official file, `gpumetrics list`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpumetrics import cli

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT.parent / "shared" / "aij" / "2021"
GOLDEN = json.loads((ROOT / "tests" / "data" / "aij" / "golden.json").read_text(encoding="utf-8"))


def _run(args, capsys):
    code = cli.main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_aij2022_config_prints_the_task_table_and_writes_the_report(tmp_path, capsys):
    code, out, err = _run(["evaluate", ROOT / "configs" / "aij2022.yaml", "-o", tmp_path / "r.json"], capsys)
    assert code == 0, err
    for task in ("TextQA", "MathQA", "TRitW", "Hidden1", "suite aij2022"):
        assert task in out
    assert f"{GOLDEN['examples/textqa']['official']:.4f}" in out
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    tasks = {task["name"]: task for task in report["tasks"]}
    assert tasks["TextQA"]["counts"]["missing_predictions"] == 2
    assert report["suite"]["score"] == pytest.approx(sum(t["score"] for t in report["tasks"]), abs=1e-12)
    assert report["suite"]["missing_tasks"] == ["ImageGeneration", "ImageCaptioning", "VisualQA"]


def test_aij2021_config_prints_the_official_numbers(capsys):
    if not (SAMPLES / "true_HTR.json").exists():
        pytest.skip(f"the organisers' AIJ-2021 sample files are not at {SAMPLES}")
    code, out, err = _run(["evaluate", ROOT / "configs" / "aij2021.yaml"], capsys)
    assert code == 0, err
    for row in ("HTR", "0.5000", "ZeroShotDetection", "0.0952", "VQA", "0.1667", "Code2code", "suite aij2021"):
        assert row in out


def test_a_wrong_official_file_is_one_line_naming_file_line_and_id(tmp_path, capsys):
    (tmp_path / "gt.json").write_text('{\n"a": [{"type": "text", "content": ["x"]}]\n}', encoding="utf-8")
    (tmp_path / "pred.json").write_text('{\n"a": [{"type": "image", "content": "a.png"}]\n}', encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({"suite": "aij2022", "tasks": [
        {"name": "TextQA", "references": "gt.json", "predictions": "pred.json"}]}), encoding="utf-8")
    code, _, err = _run(["evaluate", config], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"{tmp_path / 'pred.json'}:2: id 'a': no element of type 'text'" in err


def test_list_shows_formats_and_hidden_slots(capsys):
    code, out, _ = _run(["list"], capsys)
    assert code == 0 and "format aij2021-vqa" in out and "Hidden1…Hidden6" in out and "aij2022-generation" in out
    code, out, _ = _run(["list", "--json"], capsys)
    listing = json.loads(out)
    assert listing["suites"]["aij2022"]["hidden"][0] == "Hidden1"
    assert {t["format"] for t in listing["suites"]["aij2021"]["tasks"]} == {
        "aij2021-c2c", "aij2021-htr", "aij2021-zsod", "aij2021-vqa"}
    assert "aij2022-text" in listing["formats"]


def test_images_scored_clip_0_are_counted_and_warned(tmp_path, capsys):
    """A sample whose image file is absent scores CLIP 0 (the organisers' try/except): the report counts it and the
    command says so, else an `inputs` file beside the wrong image folder halves the score without a trace."""
    from PIL import Image

    from tests.image.test_clip_score import TINY_OPEN_CLIP

    (tmp_path / "images").mkdir()
    Image.new("RGB", (40, 30), (200, 10, 10)).save(tmp_path / "images" / "0.png")
    (tmp_path / "clip.json").write_text(json.dumps(TINY_OPEN_CLIP), encoding="utf-8")
    (tmp_path / "syn.tsv").write_text("кот\tкошк\n", encoding="utf-8")
    ask = {"type": "text", "content": "Опиши картинку"}
    files = {"inp.json": {str(i): [ask, {"type": "image", "content": f"images/{i}.png"}] for i in range(3)},
             "gt.json": {str(i): [{"type": "text", "content": ["кот"]}] for i in range(3)},
             "pred.json": {str(i): [{"type": "text", "content": "кошка"}] for i in range(3)}}
    for name, value in files.items():
        (tmp_path / name).write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({"suite": "aij2022", "tasks": [
        {"name": "ImageCaptioning", "references": "gt.json", "predictions": "pred.json",
         "options": {"inputs": "inp.json", "synonyms": "syn.tsv", "clip_backend": "open_clip",
                     "clip_model": str(tmp_path / "clip.json"), "clip_pretrained": "random"}}]}), encoding="utf-8")
    code, _, err = _run(["evaluate", config, "-o", tmp_path / "r.json", "--no-checkpoint"], capsys)
    assert code == 0, err
    assert "WARNING: task 'ImageCaptioning': 2 of 3 samples have no image to score" in err
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["tasks"][0]["details"]["clip_failed"] == 2


def test_an_image_leaving_its_folder_is_named_by_its_sample_id(tmp_path, capsys):
    """The metric numbers the images it checks: once samples without an image were set aside (CLIP 0), that number
    was a position among the others and named neither the sample nor its id; now the batch position and the id."""
    from PIL import Image

    from tests.image.test_clip_score import TINY_OPEN_CLIP

    (tmp_path / "images").mkdir()
    Image.new("RGB", (40, 30), (200, 10, 10)).save(tmp_path / "outside.png")
    (tmp_path / "clip.json").write_text(json.dumps(TINY_OPEN_CLIP), encoding="utf-8")
    (tmp_path / "syn.tsv").write_text("кот\tкошк\n", encoding="utf-8")
    ask = {"type": "text", "content": "Опиши картинку"}
    images = {"a": "images/none.png", "b": "images/none.png", "c": "../outside.png"}
    files = {"images/inp.json": {i: [ask, {"type": "image", "content": path}] for i, path in images.items()},
             "gt.json": {i: [{"type": "text", "content": ["кот"]}] for i in images},
             "pred.json": {i: [{"type": "text", "content": "кошка"}] for i in images}}
    for name, value in files.items():
        (tmp_path / name).write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    config = tmp_path / "c.yaml"
    options = {"inputs": "images/inp.json", "synonyms": "syn.tsv", "clip_backend": "open_clip",
               "clip_model": str(tmp_path / "clip.json"), "clip_pretrained": "random"}
    config.write_text(json.dumps({"suite": "aij2022", "tasks": [
        {"name": "ImageCaptioning", "references": "gt.json", "predictions": "pred.json", "options": options}]}),
        encoding="utf-8")
    code, _, err = _run(["evaluate", config, "-o", tmp_path / "r.json", "--no-checkpoint"], capsys)
    assert code != 0 and "`images[2]`" in err and "leaves image_root" in err, err
    assert "(position 2 of the batch is id 'c')" in err, err
