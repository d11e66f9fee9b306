"""``gpumetrics fid`` / ``kid`` / ``clip-score``: speed modes, decoding workers, nvjpeg, the default device
(issue 25 item 3). Random-weight Inception at 64 features: the numbers' parity with pytorch-fid is tested in
tests/image/; here the command's options reach the metric and the pipeline."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from PIL import Image

from gpumetrics import cli

RANDOM = ["--weights", "random", "--dims", "64", "--no-cache", "--progress", "off"]


def _run(args, capsys):
    code = cli.main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(0)
    for name, count in (("real", 7), ("gen", 6)):
        (root / name).mkdir()
        for i in range(count):
            size = (40, 40) if i != 3 else (36, 44)  # one odd size: batches split by size
            Image.fromarray(rng.integers(0, 256, (*size, 3), dtype=np.uint8)).save(root / name / f"{i}.png")
    return root / "real", root / "gen"


def test_fid_workers_give_the_same_bits(folders, capsys):
    real, gen = folders
    values = []
    for workers in ("0", "2"):
        code, out, err = _run(["fid", real, gen, *RANDOM, "--device", "cpu", "--batch-size", "3", "--workers", workers,
                               "--json"], capsys)
        assert code == 0, err
        values.append(json.loads(out)["fid"])
    assert values[0] == values[1]


def _pil_notes(tmp_path, workers: str, capsys) -> list[str]:
    """The "PIL warned …" entries of ``fid real gen --json`` with ``workers`` decoding processes."""
    code, out, err = _run(["fid", tmp_path / "real", tmp_path / "gen", *RANDOM, "--device", "cpu", "--batch-size", "2",
                           "--workers", workers, "--json"], capsys)
    assert code == 0, err
    return [note for note in json.loads(out)["warnings"] if note.startswith("PIL warned")]


def test_fid_pil_warnings_are_the_same_with_workers(tmp_path, monkeypatch, capsys):
    """PIL warns twice about a TIFF over ``MAX_IMAGE_PIXELS`` (at open and at load). ``fid`` records its run's
    warnings with the ``"always"`` filter, turned on after the reader's processes started: ``--workers 0`` named the
    TIFF twice in the result's PIL warning, ``--workers 2`` (the processes' filter dedupes the repeat) once."""
    from PIL import Image as PILImage

    rng = np.random.default_rng(1)
    for name in ("real", "gen"):
        (tmp_path / name).mkdir()
        for i in range(4):
            image = Image.fromarray(rng.integers(0, 256, (40, 40, 3), dtype=np.uint8))
            image.save(tmp_path / name / f"{i}.{'tif' if i == 1 else 'png'}")
    monkeypatch.setattr(PILImage, "MAX_IMAGE_PIXELS", 1000)  # 40×40 = 1600: over the limit, under twice it
    notes = [_pil_notes(tmp_path, workers, capsys) for workers in ("0", "2")]
    assert len(notes[0]) == 2 and notes[0] == notes[1]
    assert all(note.count("1.tif'") == 1 for note in notes[0])


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Python's default filters (pytest shows them)
def test_fid_notes_a_pil_deprecation_warning_whatever_the_workers(tmp_path, capsys):
    """PIL warns that the IM format is deprecated when it opens one (here named ``.png``). The decoding processes
    kept the filters they started with (Python's default: DeprecationWarning ignored), while ``fid`` records under
    ``"always"`` turned on after: ``--workers 0`` listed the PIL warning in the result, ``--workers 2`` did not."""
    import io

    rng = np.random.default_rng(2)
    for name in ("real", "gen"):
        (tmp_path / name).mkdir()
        for i in range(4):
            image = Image.fromarray(rng.integers(0, 256, (40, 40, 3), dtype=np.uint8))
            if i == 1:
                data = io.BytesIO()
                image.save(data, "IM")
                (tmp_path / name / "1.png").write_bytes(data.getvalue())
            else:
                image.save(tmp_path / name / f"{i}.png")
    notes = [_pil_notes(tmp_path, workers, capsys) for workers in ("0", "2")]
    assert len(notes[0]) == 2 and notes[0] == notes[1]
    assert all("1.png': DeprecationWarning: IM image format is deprecated" in note for note in notes[0])


def test_fid_speed_mode_is_in_the_signature(folders, capsys):
    real, gen = folders
    code, out, err = _run(["fid", real, gen, *RANDOM, "--device", "cpu", "--workers", "0", "--speed-mode", "bf16",
                           "--json"], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert "speed:bf16" in result["signature"]
    code, out, _ = _run(["fid", real, gen, *RANDOM, "--device", "cpu", "--workers", "0", "--json"], capsys)
    assert "speed:" not in json.loads(out)["signature"]
    assert abs(json.loads(out)["fid"] - result["fid"]) <= 0.05 * abs(json.loads(out)["fid"]) + 1e-3


@pytest.mark.parametrize("command", ["fid", "kid"])
def test_bad_speed_mode_and_nvjpeg_on_cpu_fail_before_reading(tmp_path, command, capsys):
    missing_a, missing_b = tmp_path / "nope_a", tmp_path / "nope_b"
    code, _, err = _run([command, missing_a, missing_b, *RANDOM, "--device", "cpu", "--speed-mode", "int8"], capsys)
    assert code == 2 and "--speed-mode" in err and "int8" in err and err.count("\n") == 1
    code, _, err = _run([command, missing_a, missing_b, *RANDOM, "--device", "cpu", "--decode", "nvjpeg"], capsys)
    assert code == 2 and "--decode nvjpeg" in err and "cpu" in err


def test_clip_score_speed_mode_takes_precisions_only(tmp_path, capsys):
    code, _, err = _run(["clip-score", "--images", tmp_path, "--captions", tmp_path / "c.jsonl", "--device", "cpu",
                         "--speed-mode", "channels_last"], capsys)
    assert code == 2 and "--speed-mode" in err and err.count("\n") == 1
    code, _, err = _run(["clip-score", "--images", tmp_path, "--captions", tmp_path / "c.jsonl", "--device", "cpu",
                         "--decode", "nvjpeg"], capsys)
    assert code == 2 and "--decode nvjpeg" in err


def test_device_defaults_to_cuda_when_there_is_one(monkeypatch, capsys):
    from gpumetrics.cli import image

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert image._device(None).type == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr("gpumetrics.core.check_device", lambda name, option: torch.device(name))
    assert image._device(None).type == "cuda"
    with pytest.raises(SystemExit):
        cli.main(["fid", "--help"])
    assert "pytorch-fid's convention" in " ".join(capsys.readouterr().out.split())


def test_kid_equals_the_python_api(folders, capsys):
    from gpumetrics.image.io import list_images, read_image
    from gpumetrics.image.kid import KernelInceptionDistance

    real, gen = folders
    code, out, err = _run(["kid", real, gen, *RANDOM, "--device", "cpu", "--workers", "0", "--subsets", "5",
                           "--subset-size", "4", "--degree", "2", "--json"], capsys)
    assert code == 0, err
    result = json.loads(out)
    metric = KernelInceptionDistance(feature=64, weights="random", subsets=5, subset_size=4, degree=2)
    for folder, is_real in ((real, True), (gen, False)):
        for path in list_images(folder):
            metric.update(read_image(path).unsqueeze(0) if read_image(path).dim() == 3 else read_image(path),
                          real=is_real)
    mean, std = metric.compute()
    assert result["kid_mean"] == pytest.approx(float(mean), rel=1e-6, abs=1e-9)
    assert result["kid_std"] == pytest.approx(float(std), rel=1e-6, abs=1e-9)
    assert result["signature"] == metric.signature()


def test_kid_refuses_npz_and_too_large_subsets(folders, tmp_path, capsys):
    real, gen = folders
    stats = tmp_path / "s.npz"
    np.savez(stats, mu=np.zeros(64), sigma=np.eye(64))
    code, _, err = _run(["kid", stats, gen, *RANDOM, "--device", "cpu"], capsys)
    assert code == 2 and "not a folder" in err
    code, _, err = _run(["kid", real, gen, *RANDOM, "--device", "cpu", "--workers", "0", "--subset-size", "50"], capsys)
    assert code == 2 and err.count("\n") == 1


def test_save_stats_path_is_checked_before_reading(folders, tmp_path, capsys):
    real, _ = folders
    code, _, err = _run(["fid", real, *RANDOM, "--device", "cpu", "--save-stats", tmp_path], capsys)
    assert code == 2 and "--save-stats" in err and "is a directory" in err


def test_save_stats_over_path_b_is_refused(folders, tmp_path, capsys):
    # `fid A B.npz --save-stats B.npz` wrote A's statistics over B before reading it: FID(A, A) = 0, B lost
    real, _ = folders
    stats = tmp_path / "b.npz"
    np.savez(stats, mu=np.zeros(64), sigma=np.eye(64))
    before = stats.read_bytes()
    code, _, err = _run(["fid", real, stats, "--save-stats", stats, *RANDOM, "--device", "cpu", "--workers", "0"],
                        capsys)
    assert code == 2 and "--save-stats" in err and "PATH_B" in err and err.count("\n") == 1
    assert stats.read_bytes() == before


@pytest.mark.parametrize("content", ["truncated", "empty", "text", "strings", "object", "1-d sigma", "directory"])
def test_a_broken_statistics_file_is_one_line_naming_it(folders, tmp_path, capsys, content):
    # a truncated or empty .npz raised zipfile.BadZipFile / EOFError with a traceback; others lacked the file name
    good, bad = tmp_path / "good.npz", tmp_path / "bad.npz"
    np.savez(good, mu=np.zeros(64), sigma=np.eye(64))
    data = good.read_bytes()
    if content == "directory":
        bad.mkdir()
    elif content in ("truncated", "empty", "text"):
        bad.write_bytes({"truncated": data[: len(data) // 2], "empty": b"", "text": b"mu sigma"}[content])
    else:
        mu = {"strings": np.array(["a"] * 64), "object": np.array([None] * 64, dtype=object)}.get(content, np.zeros(64))
        np.savez(bad, mu=mu, sigma=np.zeros(64) if content == "1-d sigma" else np.eye(64), allow_pickle=True)
    real, _ = folders
    for args in ([good, bad], [bad, real, *RANDOM, "--device", "cpu", "--workers", "0"]):  # npz pair; npz + folder
        code, _, err = _run(["fid", *args], capsys)
        assert code == 2 and err.count("\n") == 1 and str(bad) in err, err


def test_a_decompression_bomb_and_a_file_as_folder_are_one_line(folders, tmp_path, capsys):
    real, _ = folders
    bombs = tmp_path / "bombs"
    bombs.mkdir()
    Image.new("1", (20000, 10000)).save(bombs / "big.png")  # 200 M pixels in a few kB: PIL's DecompressionBombError
    Image.new("RGB", (8, 8)).save(bombs / "small.png")
    code, _, err = _run(["fid", real, bombs, *RANDOM, "--device", "cpu", "--workers", "0"], capsys)
    assert code == 2 and err.count("\n") == 1 and "big.png" in err and "cannot be decoded" in err
    code, _, err = _run(["fid", real, bombs / "small.png", *RANDOM, "--device", "cpu", "--workers", "0"], capsys)
    assert code == 2 and err.count("\n") == 1 and "is not a folder" in err


@pytest.mark.parametrize("command", ["fid", "kid"])
def test_decoding_processes_start_once_per_run_before_the_network(folders, capsys, monkeypatch, command):
    """``fid`` / ``kid`` of two folders start their decoding processes once (a loader per folder started them twice
    and drained the first folder's pipeline before filling the second's), before the network is built, which the
    first batches' decoding overlaps; the numbers are those of decoding in this process."""
    import multiprocessing.process

    from gpumetrics.cli import image

    starts = []
    start = multiprocessing.process.BaseProcess.start
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start",
                        lambda self: (starts.append(self), start(self))[1])
    build = image._inception_metric
    started_before_build = []
    monkeypatch.setattr(image, "_inception_metric",
                        lambda *args, **kwargs: (started_before_build.append(len(starts)), build(*args, **kwargs))[1])
    real, gen = folders
    options = ["--subsets", "2", "--subset-size", "5"] if command == "kid" else []
    outputs = []
    for workers in ("0", "2"):
        code, out, err = _run([command, real, gen, *RANDOM, *options, "--device", "cpu", "--batch-size", "3",
                               "--workers", workers, "--json"], capsys)
        assert code == 0, err
        outputs.append({k: v for k, v in json.loads(out).items() if k != "warnings"})
    assert len(starts) == 2 and started_before_build == [0, 2]
    assert outputs[0] == outputs[1]
