"""The AIJ suites from the command line: the shipped configs, a wrong official file, `gpumetrics list`."""

from __future__ import annotations

import json
import re
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


def _bomb_png() -> bytes:
    """A valid PNG header claiming 30,000 × 30,000 pixels (PIL's decompression-bomb check refuses it at open)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 30000, 30000, 8, 2, 0, 0, 0)) + chunk(
        b"IEND", b"")


def _aij_image_tasks(folder: Path, corrupt: bool, batch_size: int, workers: int) -> Path:
    """An aij2022 config of ImageCaptioning and ImageGeneration over 8 samples each: 3 good images, 1 missing file,
    and 4 image files that cannot be decoded (``corrupt``) or are missing too (not ``corrupt``)."""
    import torch
    from PIL import Image

    from gpumetrics.image.inception import random_fid_inception_state_dict
    from tests.image.test_clip_score import TINY_OPEN_CLIP

    images, real = folder / "gen" / "images", folder / "real"
    images.mkdir(parents=True)
    real.mkdir()
    generator = torch.Generator().manual_seed(5)
    for i in range(7):
        pixels = torch.randint(0, 256, (30, 40, 3), dtype=torch.uint8, generator=generator)
        Image.fromarray(pixels.numpy()).save((images / f"{i}.png") if i < 3 else (real / f"{i}.png"))
    Image.open(images / "0.png").save(folder / "whole.jpg", quality=90)
    bad = {"3.jpg": (folder / "whole.jpg").read_bytes()[:300], "4.png": b"\x89PNG\r\n\x1a\n" + b"garbage" * 9,
           "5.png": b"", "6.png": b"a text file named .png\n", "7.png": _bomb_png()}
    names = ["0.png", "1.png", "2.png", "3.jpg", "4.png", "5.png", "6.png", "7.png", "missing.png"]
    if corrupt:
        for name, data in bad.items():
            (images / name).write_bytes(data)
    torch.save(random_fid_inception_state_dict(seed=0), folder / "inception.pth")
    (folder / "clip.json").write_text(json.dumps(TINY_OPEN_CLIP), encoding="utf-8")
    (folder / "syn.tsv").write_text("кот\tкошк\n", encoding="utf-8")
    ask = {"type": "text", "content": "Опиши картинку"}
    captions = [f"кошка номер {i}" for i in range(len(names))]
    files = {
        "gen/inp.json": {str(i): [ask, {"type": "image", "content": f"images/{n}"}] for i, n in enumerate(names)},
        "gt.json": {str(i): [{"type": "text", "content": ["кот"]}] for i in range(len(names))},
        "pred.json": {str(i): [{"type": "text", "content": c}] for i, c in enumerate(captions)},
        "gen_input.json": {str(i): [{"type": "text", "content": f"Нарисуй. {c}"}] for i, c in enumerate(captions)},
        "gen/gen_pred.json": {str(i): [{"type": "text", "content": ""}, {"type": "image", "content": f"x/images/{n}"}]
                              for i, n in enumerate(names)},
    }
    for name, value in files.items():
        (folder / name).write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    reading = {"batch_size": batch_size, "workers": workers, "clip_backend": "open_clip",
               "clip_model": str(folder / "clip.json"), "clip_pretrained": "random"}
    config = folder / "c.yaml"
    config.write_text(json.dumps({"suite": "aij2022", "tasks": [
        {"name": "ImageCaptioning", "references": "gt.json", "predictions": "pred.json",
         "options": {"inputs": "gen/inp.json", "synonyms": "syn.tsv", **reading}},
        {"name": "ImageGeneration", "references": "gen_input.json", "predictions": "gen/gen_pred.json",
         "options": {"real": str(real), "inception_weights": str(folder / "inception.pth"), "fid_feature": 64,
                     **reading}}]}), encoding="utf-8")
    return config


@pytest.mark.parametrize("batch_size, workers", [(1, 0), (4, 0), (1, 2), (4, 2)])
def test_undecodable_images_score_clip_0_as_missing_ones(tmp_path, capsys, batch_size, workers):
    """The organisers' try/except scores 0 for any failure of a sample's image — a missing file, but also a
    truncated JPEG, garbage bytes, an empty file, a text file named .png, a decompression bomb — and goes on;
    gpumetrics stopped the run at the first such file. Now they score as missing images do (CLIP 0, out of FID),
    counted, with one warning naming the first few and why, at every batch size and with worker processes."""
    reports = {}
    for corrupt in (False, True):
        config = _aij_image_tasks(tmp_path / f"corrupt-{corrupt}", corrupt, batch_size, workers)
        out = tmp_path / f"r-{corrupt}.json"
        args = ["evaluate", config, "-o", out, "--no-checkpoint", "--batch-size", batch_size]
        if corrupt:
            with pytest.warns(UserWarning, match=r"5 image file\(s\) cannot be decoded") as caught:
                code, _, err = _run(args, capsys)
        else:
            code, _, err = _run(args, capsys)
        assert code == 0, err
        reports[corrupt] = {t["name"]: t for t in json.loads(out.read_text(encoding="utf-8"))["tasks"]}
        for task in ("ImageCaptioning", "ImageGeneration"):
            undecodable = ", 5 of them a file that cannot be decoded" if corrupt else ""
            assert (f"WARNING: task '{task}': 6 of 9 samples have no image to score (none named, no such file, a file "
                    f"that cannot be decoded, or a caption that is not the first element{undecodable})") in err
    messages = [str(w.message) for w in caught if "cannot be decoded" in str(w.message)]
    assert len(messages) == 2  # one per task, not one per image
    images = re.escape(str(tmp_path / "corrupt-True" / "gen" / "images"))
    for message, task in zip(messages, ("s_image_captioning", "s_image_generation")):
        # the first three files, each with the decoder's reason (Pillow's words: not pinned here), then "…"
        assert re.fullmatch(rf"{task}: 5 image file\(s\) cannot be decoded, each scored CLIP 0 as the AIJ-2022 "
                            rf"scripts' try/except does \('{images}/3\.jpg': [^;']+; '{images}/4\.png': [^;']+; "
                            rf"'{images}/5\.png': cannot identify image file, …\)", message), message
    for task in ("ImageCaptioning", "ImageGeneration"):
        missing, corrupt = reports[False][task], reports[True][task]
        assert corrupt["details"]["clip_failed"] == missing["details"]["clip_failed"] == 6
        assert corrupt["details"]["clip_undecodable"] == 5 and missing["details"]["clip_undecodable"] == 0
        assert corrupt["score"] == pytest.approx(missing["score"], abs=1e-12)
        for key in ("clip", "meteor", "fid"):
            if key in missing["details"]:
                assert corrupt["details"][key] == pytest.approx(missing["details"][key], rel=1e-9, abs=1e-12)
