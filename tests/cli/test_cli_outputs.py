"""Output paths are checked before anything is read or scored (issue 28 item 8); ``-o -`` writes the JSON report
to stdout."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gpumetrics import cli


def _run(args, capsys):
    code = cli.main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _config(tmp_path: Path, *, data_exists: bool = True) -> Path:
    """A token_f1 task; with ``data_exists=False`` its files are missing, so that an error naming an output option
    proves the outputs were checked before any data was read."""
    preds, refs = tmp_path / "preds.jsonl", tmp_path / "refs.jsonl"
    if data_exists:
        preds.write_text('{"id": "1", "prediction": "a b"}\n{"id": "2", "prediction": "c"}\n', encoding="utf-8")
        refs.write_text('{"id": "1", "references": ["a b"]}\n{"id": "2", "references": ["d"]}\n', encoding="utf-8")
    config = tmp_path / "config.yaml"
    config.write_text(f"name: t\ntasks:\n  - name: QA\n    metric: token_f1\n    predictions: {preds.name}\n"
                      f"    references: {refs.name}\n", encoding="utf-8")
    return config


def _one_line_error(code, err, *words):
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpumetrics evaluate: error: "), err
    for word in words:
        assert word in lines[0], (word, lines[0])


def test_output_that_is_a_directory_fails_before_reading_data(tmp_path, capsys):
    folder = tmp_path / "out"
    folder.mkdir()
    code, _, err = _run(["evaluate", _config(tmp_path, data_exists=False), "-o", folder], capsys)
    _one_line_error(code, err, "--output", "is a directory")


def test_output_colliding_with_its_checkpoint_folder(tmp_path, capsys):
    target = tmp_path / "x.checkpoint"
    code, _, err = _run(["evaluate", _config(tmp_path, data_exists=False), "-o", target], capsys)
    _one_line_error(code, err, "--output", "checkpoint folder")
    # --no-checkpoint or another --checkpoint-dir lift the collision
    code, _, err = _run(["evaluate", _config(tmp_path), "-o", target, "--no-checkpoint"], capsys)
    assert code == 0, err
    assert json.loads(target.read_text())["tasks"][0]["counts"]["n"] == 2


def test_checkpoint_dir_equal_to_output(tmp_path, capsys):
    target = tmp_path / "r.json"
    code, _, err = _run(["evaluate", _config(tmp_path, data_exists=False), "-o", target, "--checkpoint-dir", target],
                        capsys)
    _one_line_error(code, err, "--output", "checkpoint folder")


def test_output_whose_parent_is_a_file(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    code, _, err = _run(["evaluate", _config(tmp_path, data_exists=False), "-o", tmp_path / "file" / "r.json"], capsys)
    _one_line_error(code, err, "--output", "is not a directory")


def test_output_in_a_folder_that_refuses_files(tmp_path, capsys):
    # /proc refuses new files even for root; a read-only folder does for other users
    code, _, err = _run(["evaluate", _config(tmp_path, data_exists=False), "-o", "/proc/r.json"], capsys)
    _one_line_error(code, err, "--output", "/proc")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_output_in_a_read_only_folder(tmp_path, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        code, _, err = _run(["evaluate", _config(tmp_path, data_exists=False), "-o", folder / "r.json"], capsys)
    finally:
        folder.chmod(0o700)
    _one_line_error(code, err, "--output", "cannot write")


def test_missing_parent_is_created(tmp_path, capsys):
    target = tmp_path / "new" / "deeper" / "r.json"
    code, _, err = _run(["evaluate", _config(tmp_path), "-o", target, "--html", tmp_path / "new2" / "r.html"], capsys)
    assert code == 0, err
    assert target.is_file() and (tmp_path / "new2" / "r.html").is_file()


def test_html_that_is_a_directory(tmp_path, capsys):
    code, _, err = _run(["evaluate", _config(tmp_path, data_exists=False), "--html", tmp_path], capsys)
    _one_line_error(code, err, "--html", "is a directory")


def test_report_html_that_is_a_directory(tmp_path, capsys):
    report = tmp_path / "r.json"
    report.write_text('{"tasks": []}')
    code, _, err = _run(["report", report, "--html", tmp_path], capsys)
    assert code == 2 and "--html" in err and "is a directory" in err


def test_output_dash_writes_the_json_report_to_stdout(tmp_path, capsys):
    code, out, err = _run(["evaluate", _config(tmp_path), "-o", "-", "--progress", "off"], capsys)
    assert code == 0, err
    report = json.loads(out)  # stdout holds the JSON report alone
    assert report["tasks"][0]["name"] == "QA" and report["tasks"][0]["counts"]["n"] == 2
    assert "QA" in err and "token_f1" in err  # the table went to stderr
    assert not list(tmp_path.glob("*.checkpoint")) and not (tmp_path / "-").exists()


# ------------------------------------------------------------------------------- outputs that are the inputs (fuzz)
@pytest.mark.parametrize("option", ["-o", "--html"])
@pytest.mark.parametrize("which", ["config.yaml", "preds.jsonl", "refs.jsonl", "link"])
def test_an_output_naming_an_input_is_refused_and_the_input_kept(tmp_path, capsys, option, which):
    # `-o preds.jsonl` used to replace the predictions (or the config) with the report after the run
    config = _config(tmp_path)
    (tmp_path / "link").symlink_to(tmp_path / "preds.jsonl")  # a link to an input is the input
    before = {name: (tmp_path / name).read_bytes() for name in ("config.yaml", "preds.jsonl", "refs.jsonl")}
    code, _, err = _run(["evaluate", config, option, tmp_path / which, "--no-checkpoint"], capsys)
    _one_line_error(code, err, "--output" if option == "-o" else "--html", "replace an input")
    assert {name: (tmp_path / name).read_bytes() for name in before} == before


def test_report_html_over_its_own_json_report_is_refused(tmp_path, capsys):
    report = tmp_path / "r.json"
    report.write_text('{"tasks": []}')
    code, _, err = _run(["report", report, "--html", report], capsys)
    assert code == 2 and "--html" in err and "replace an input" in err and err.count("\n") == 1
    assert report.read_text() == '{"tasks": []}'
    report.write_bytes(b"\xff\xfe{}")  # a UTF-16 / binary file: named, no traceback
    code, _, err = _run(["report", report, "--html", tmp_path / "x.html"], capsys)
    assert code == 2 and str(report) in err and "not UTF-8" in err


@pytest.mark.parametrize("option", ["--output", "--html"])
def test_output_that_is_a_loop_of_symbolic_links_fails_before_reading_data(tmp_path, capsys, option):
    # is_dir() and exists() are False for a loop: the checks passed and the write failed after the whole run
    os.symlink(tmp_path / "b.json", tmp_path / "a.json")
    os.symlink(tmp_path / "a.json", tmp_path / "b.json")
    code, _, err = _run(["evaluate", _config(tmp_path, data_exists=False), option, tmp_path / "a.json",
                         "--no-checkpoint"], capsys)
    _one_line_error(code, err, option, "a loop of symbolic links")


@pytest.mark.parametrize("option", ["--output", "--html"])
def test_an_output_naming_a_file_of_a_task_option_is_refused_and_the_file_kept(tmp_path, capsys, option):
    # only the config and the data files were inputs: `-o syn.tsv` replaced METEOR's synonyms file with the report
    synonyms = tmp_path / "syn.tsv"
    synonyms.write_text("кот\tкошк\n", encoding="utf-8")
    config = _config(tmp_path)
    config.write_text(config.read_text(encoding="utf-8").replace("metric: token_f1", "metric: meteor\n"
                      "    options: {mode: nltk, synonyms: syn.tsv}"), encoding="utf-8")
    code, _, err = _run(["evaluate", config, option, synonyms, "--no-checkpoint"], capsys)
    _one_line_error(code, err, option, "is option `synonyms` of task 'QA'", "would replace an input")
    assert synonyms.read_text(encoding="utf-8") == "кот\tкошк\n"
