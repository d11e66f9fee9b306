"""Every task's files are read and checked before the first task is scored, and ``gpumetrics evaluate --check``
does only that: a malformed or unjoinable file of the last task stopped the run only after every task before it had
been scored."""

from __future__ import annotations

import json

import pytest

from gpumetrics import cli
from gpumetrics.harness.config import load_config
from gpumetrics.harness.records import DataError
from gpumetrics.harness.runner import check_data, evaluate


def _write(path, records):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path.name


def _config(tmp_path, last_predictions: str) -> str:
    refs = _write(tmp_path / "refs.jsonl", [{"id": f"s{i}", "references": [f"a cat sat {i}"]} for i in range(40)])
    preds = _write(tmp_path / "preds.jsonl", [{"id": f"s{i}", "prediction": f"a cat {i}"} for i in range(38)])
    (tmp_path / "last.jsonl").write_text(last_predictions, encoding="utf-8")
    tasks = [{"name": "First", "metric": "cer", "predictions": preds, "references": refs},
             {"name": "Second", "metric": "bleu", "predictions": preds, "references": refs},
             {"name": "Last", "metric": "wer", "predictions": "last.jsonl", "references": refs}]
    path = tmp_path / "c.yaml"
    path.write_text(json.dumps({"name": "check", "batch_size": 8, "tasks": tasks}), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("last, words", [
    ('{"id": "s1", "prediction": "x"}\n{"id": "s2", "prediction": \n', "last.jsonl:2"),  # malformed JSON
    ('{"id": "s1", "prediction": "x"}\n{"id": "zz", "prediction": "y"}\n', "unknown id 'zz'"),
    ('{"id": "s1", "prediction": "x"}\n{"id": "s1", "prediction": "y"}\n', "s1"),  # a duplicate id
    ('{"id": "s1", "prediction": 5}\n', "last.jsonl:1"),  # not a string
])
def test_a_bad_file_of_the_last_task_stops_the_run_before_any_task_is_scored(tmp_path, last, words):
    config = load_config(_config(tmp_path, last))
    scored = []

    def progress(label, done, total):
        if "reading" not in label:  # a task being scored (the files' indexing reports "…: reading …")
            scored.append(label)

    with pytest.raises(DataError, match=words):
        evaluate(config, progress=progress)
    assert scored == []
    with pytest.raises(DataError, match=words):
        check_data(config)


def test_check_reads_every_file_scores_nothing_and_reports_the_missing(tmp_path, capsys, monkeypatch):
    path = _config(tmp_path, '{"id": "s1", "prediction": "x"}\n')
    from gpumetrics.harness import runner

    monkeypatch.setattr(runner._Run, "evaluate_task", lambda *a, **k: pytest.fail("--check scored a task"))
    assert cli.main(["evaluate", path, "--check"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("│")[1].strip(): [cell.strip() for cell in line.split("│")[2:-1]]
            for line in out.splitlines() if line.startswith("│")}
    assert rows == {"First": ["cer", "40", "2", "'s38', 's39'"], "Second": ["bleu", "40", "2", "'s38', 's39'"],
                    "Last": ["wer", "40", "39", "'s0', 's2', 's3', 's4', 's5', …"]}
    assert cli.main(["evaluate", path, "--check", "--strict"]) == 3
    assert "--strict: 43 prediction(s) missing (First: 2, Second: 2, Last: 39)" in capsys.readouterr().err
    assert cli.main(["evaluate", path, "--check", "-o", str(tmp_path / "r.json")]) == 2
    assert "--check scores nothing and writes nothing: leave out --output" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_check_cuts_long_missing_ids(tmp_path, capsys):
    # the table printed up to five missing ids whole: a megabyte id made a megabyte of cells
    long_id = "x" * 100_000
    refs = _write(tmp_path / "refs.jsonl", [{"id": long_id, "references": ["a cat"]}, {"id": "s", "references": ["a"]}])
    preds = _write(tmp_path / "preds.jsonl", [{"id": "s", "prediction": "a"}])
    path = tmp_path / "c.yaml"
    path.write_text(json.dumps({"name": "check", "tasks": [{"name": "T", "metric": "cer", "predictions": preds,
                                                             "references": refs}]}), encoding="utf-8")
    assert cli.main(["evaluate", str(path), "--check"]) == 0
    out = capsys.readouterr().out
    assert "xxx" in out and len(out) < 2_000
