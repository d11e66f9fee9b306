"""``gpumetrics fid`` / ``gpumetrics clip-score`` end to end on tiny files and random-weight models."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gpumetrics.cli import main
from gpumetrics.image.clip_score import clip_score
from gpumetrics.image.fid import FrechetInceptionDistance
from tests.helpers.image_files import save_random_images
from tests.image.test_clip_score import TINY_OPEN_CLIP


def _images(folder, seed, n=4):
    return save_random_images(folder, seed, n, (24, 30), "png")


def test_fid_command_folders_stats_and_npz(tmp_path, capsys, inception_file):
    real, fake = _images(tmp_path / "real", 0), _images(tmp_path / "fake", 1)
    common = ["--weights", str(inception_file), "--dims", "64", "--batch-size", "3", "--json"]
    assert main(["fid", str(tmp_path / "real"), str(tmp_path / "fake"), *common]) == 0
    result = json.loads(capsys.readouterr().out)
    metric = FrechetInceptionDistance(feature=64, weights=str(inception_file))
    metric.update(real, real=True)
    metric.update(fake, real=False)
    with pytest.warns(UserWarning):
        assert result["fid"] == pytest.approx(float(metric.compute()), rel=1e-9)
    assert result["signature"].startswith("fid|feature:64|weights:file@") and result["warnings"]

    for name in ("real", "fake"):
        assert main(["fid", str(tmp_path / name), str(tmp_path / f"{name}.npz"), "--save-stats", *common]) == 0
    capsys.readouterr()
    assert main(["fid", str(tmp_path / "real.npz"), str(tmp_path / "fake.npz"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fid"] == pytest.approx(result["fid"], rel=1e-9)
    assert main(["fid", str(tmp_path / "real.npz"), str(tmp_path / "fake"), *common]) == 0
    assert json.loads(capsys.readouterr().out)["fid"] == pytest.approx(result["fid"], rel=1e-9)

    assert main(["fid", str(tmp_path / "nope"), str(tmp_path / "fake"), *common]) == 2
    assert "does not exist" in capsys.readouterr().err
    np.savez(tmp_path / "small.npz", mu=np.zeros(3), sigma=np.eye(3))
    assert main(["fid", str(tmp_path / "small.npz"), str(tmp_path / "real.npz")]) == 2
    assert "different sizes" in capsys.readouterr().err


def test_clip_score_command(tmp_path, capsys):
    images = _images(tmp_path / "images", 2, n=3)
    captions = ["a cat", "Кот", "🙂 猫"]
    (tmp_path / "captions.jsonl").write_text(
        "\n".join(json.dumps({"image": f"{i}.png", "caption": c}, ensure_ascii=False) for i, c in enumerate(captions))
    )
    config = tmp_path / "tiny-clip.json"
    config.write_text(json.dumps(TINY_OPEN_CLIP))
    args = ["clip-score", "--images", str(tmp_path / "images"), "--captions", str(tmp_path / "captions.jsonl"),
            "--backend", "open_clip", "--model", str(config), "--pretrained", "random", "--scale", "2.5", "--json"]
    assert main(args) == 0
    result = json.loads(capsys.readouterr().out)
    expected = clip_score(images, captions, "open_clip", str(config), "random", scale=2.5)
    assert result["clip_score"] == pytest.approx(float(expected), abs=1e-6) and result["n"] == 3
    (tmp_path / "bad.jsonl").write_text('{"image": "9.png", "caption": "x"}\n')
    assert main([*args[:3], "--captions", str(tmp_path / "bad.jsonl"), *args[5:]]) == 2
    assert "missing" in capsys.readouterr().err


def test_fid_save_stats_beside_a_score_as_readme_shows(tmp_path, capsys, inception_file):
    _images(tmp_path / "real", 0), _images(tmp_path / "fake", 1)
    common = ["--weights", str(inception_file), "--dims", "64", "--json"]
    stats = tmp_path / "real2.npz"
    assert main(["fid", str(tmp_path / "real"), str(tmp_path / "fake"), "--save-stats", str(stats), *common]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["saved"] == str(stats) and stats.is_file()
    assert main(["fid", str(stats), str(tmp_path / "fake"), *common]) == 0
    assert json.loads(capsys.readouterr().out)["fid"] == pytest.approx(first["fid"], rel=1e-9)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake", "real", "real2.npz"]  # no temporary left


def test_corrupt_image_is_one_line_exit_2(tmp_path, capsys, inception_file):
    _images(tmp_path / "real", 0), _images(tmp_path / "fake", 1)
    (tmp_path / "fake" / "9.png").write_bytes(b"not a png at all")
    code = main(["fid", str(tmp_path / "real"), str(tmp_path / "fake"), "--weights", str(inception_file),
                 "--dims", "64"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and err.startswith("gpumetrics fid: error: ")
    assert "9.png" in err and "Traceback" not in err


def test_clip_score_pretrained_dir_for_hf_must_be_a_directory(tmp_path, capsys):
    _images(tmp_path / "images", 2, n=1)
    (tmp_path / "captions.jsonl").write_text('{"image": "0.png", "caption": "x"}\n')
    code = main(["clip-score", "--images", str(tmp_path / "images"), "--captions", str(tmp_path / "captions.jsonl"),
                 "--pretrained", str(tmp_path / "no-model")])
    assert code == 2 and "model directory" in capsys.readouterr().err


def test_fid_save_stats_only_and_pytorch_fid_form_agree(tmp_path, capsys, inception_file):
    _images(tmp_path / "real", 0), _images(tmp_path / "fake", 1)
    common = ["--weights", str(inception_file), "--dims", "64", "--json"]
    assert main(["fid", str(tmp_path / "real"), "--save-stats", str(tmp_path / "only.npz"), *common]) == 0
    assert json.loads(capsys.readouterr().out)["saved"] == str(tmp_path / "only.npz")
    assert main(["fid", str(tmp_path / "real"), str(tmp_path / "pf.npz"), "--save-stats", *common]) == 0
    capsys.readouterr()
    import numpy as np

    with np.load(tmp_path / "only.npz") as a, np.load(tmp_path / "pf.npz") as b:
        assert np.array_equal(a["mu"], b["mu"]) and np.array_equal(a["sigma"], b["sigma"])
    assert main(["fid", str(tmp_path / "real"), *common]) == 2
    assert "PATH_B is required" in capsys.readouterr().err


def test_fid_command_caches_the_real_folder_only(tmp_path, capsys, inception_file, extracted):
    _images(tmp_path / "real", 0), _images(tmp_path / "fake", 1)
    common = ["--weights", str(inception_file), "--dims", "64", "--batch-size", "3", "--json"]
    folders = [str(tmp_path / "real"), str(tmp_path / "fake")]
    runs = []
    for cache in (["--cache-dir", str(tmp_path / "cache")],) * 2 + (["--no-cache"],):
        extracted.clear()
        assert main(["fid", *folders, *common, *cache]) == 0
        captured = capsys.readouterr()
        assert captured.err == ""  # not a terminal: no bar
        runs.append((json.loads(captured.out)["fid"], list(extracted)))
    assert runs[0][1] == [3, 1, 3, 1] and runs[1][1] == [3, 1] and runs[2][1] == [3, 1, 3, 1]  # real, then fake
    assert runs[0][0] == runs[1][0] == runs[2][0]
    assert len(list((tmp_path / "cache").iterdir())) == 1
    extracted.clear()
    assert main(["fid", folders[0], "--save-stats", str(tmp_path / "real.npz"), *common,
                 "--cache-dir", str(tmp_path / "cache")]) == 0
    assert extracted == [] and json.loads(capsys.readouterr().out)["saved"] == str(tmp_path / "real.npz")
    with pytest.raises(SystemExit):
        main(["fid", *folders, "--cache-dir", str(tmp_path / "cache"), "--no-cache"])


def test_progress_bars_show_on_a_terminal_only_for_long_phases():
    import io

    from rich.console import Console

    from gpumetrics.cli.progress import progress_bars

    def drawn(mode, terminal, steps):
        stream = io.StringIO()
        with progress_bars(mode, Console(file=stream, force_terminal=terminal, width=100)) as progress:
            for done in steps:
                progress("real images", done, 4)
        return "real images" in stream.getvalue()

    assert drawn("auto", True, [0, 2, 4]) and drawn("on", True, [0, 4])
    assert not drawn("auto", True, [0, 4])  # one batch: no bar
    assert not drawn("auto", False, [0, 2, 4]) and not drawn("off", True, [0, 2, 4])
