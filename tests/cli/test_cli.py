"""The ``gpumetrics`` command: demo config end to end, joins by id, error messages naming file and line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gpumetrics import functional as F
from gpumetrics import cli
from gpumetrics.harness import registry
from gpumetrics.harness.config import ConfigError, load_config, parse_config
from gpumetrics.harness.records import DataError, read_records
from gpumetrics.harness.records import join_by_id

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "configs" / "demo.yaml"


def _read_any(path: Path, key: str) -> dict:
    """Independent plain-json reader of the shipped example files (all three layouts)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return {str(r["id"]): r[key] for r in map(json.loads, text.splitlines()) if r}
    data = json.loads(text)
    return dict(data) if isinstance(data, dict) else {str(r["id"]): r[key] for r in data}


def _expected_demo_scores() -> dict:
    functions = {
        "token_f1": F.token_f1, "exact_match": F.exact_match, "string_accuracy": F.string_accuracy,
        "cer": F.char_error_rate,
        "ned_aij2022": lambda p, r: F.normalized_edit_similarity(p, r, preset="aij2022"),
        "bleu": F.bleu_score, "cider": F.cider_score,
        "rouge": lambda p, r, **kw: F.rouge_score(p, r, **kw)["rougeL_fmeasure"],
    }
    expected = {}
    config = load_config(DEMO)
    for task in config.tasks:
        preds = _read_any(task.predictions, "prediction")
        refs = _read_any(task.references, "references")
        ids = list(refs)
        score = functions[task.metric.name]([preds.get(i, "") for i in ids], [refs[i] for i in ids], **task.options)
        expected[task.name] = (float(score), len(ids), sum(i not in preds for i in ids))
    return expected


def _run(args, capsys):
    code = cli.main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _write(path: Path, lines) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _config(tmp_path: Path, preds: Path, refs: Path, metric="token_f1", options=None, **top) -> Path:
    config = {"tasks": [{"name": "T", "metric": metric, "options": options or {}, "predictions": preds.name,
                         "references": refs.name}], **top}
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")  # JSON is valid YAML
    return path


def test_demo_config_prints_table_and_writes_report(tmp_path, capsys):
    out_path = tmp_path / "reports" / "demo.json"
    code, out, err = _run(["evaluate", DEMO, "--output", out_path], capsys)
    assert code == 0, err
    for name in ("TextQA", "TextQA-EM", "MathQA", "HTR", "token_f1|preset:squad"):
        assert name in out
    report = json.loads(out_path.read_text(encoding="utf-8"))
    expected = _expected_demo_scores()
    assert [t["name"] for t in report["tasks"]] == list(expected)
    for task in report["tasks"]:
        score, n, missing = expected[task["name"]]
        assert task["score"] == pytest.approx(score, abs=1e-12)
        assert task["counts"]["n"] == n and task["counts"]["missing_predictions"] == missing
        assert len(task["counts"]["missing_ids"]) == missing
        assert "|version:" in task["signature"]
        assert set(task["timing"]) == {"load_seconds", "eval_seconds"}
        assert f"{score:.4f}" in out
    assert sum(t["counts"]["missing_predictions"] for t in report["tasks"]) == 12  # shipped with missing answers
    assert report["device"] == "cpu" and report["suite"] is None


def test_batch_size_does_not_change_scores(tmp_path, capsys):
    scores = []
    for size in (1, 7, 100000):
        out_path = tmp_path / f"r{size}.json"
        code, _, err = _run(["evaluate", DEMO, "--batch-size", size, "--output", out_path, "--progress", "on"], capsys)
        assert code == 0, err
        report = json.loads(out_path.read_text(encoding="utf-8"))
        assert report["batch_size"] == size
        scores.append([t["score"] for t in report["tasks"]])
    assert scores[0] == pytest.approx(scores[1], abs=1e-12) == scores[2]


def test_missing_prediction_is_scored_as_empty_and_counted(tmp_path, capsys):
    refs = _write(tmp_path / "refs.jsonl", [
        '{"id": 1, "references": ["Москва"]}',
        '{"id": 2, "references": ["the cat", "a dog"]}',
        '{"id": 3, "references": [""]}',
        '{"id": 4, "references": "Paris"}',
    ])
    preds = _write(tmp_path / "preds.jsonl",
                   ['{"id": "2", "prediction": "cat"}', '', '{"id": 4, "prediction": "paris"}'])
    out_path = tmp_path / "r.json"
    code, out, err = _run(["evaluate", _config(tmp_path, preds, refs), "-o", out_path], capsys)
    assert code == 0, err
    task = json.loads(out_path.read_text(encoding="utf-8"))["tasks"][0]
    expected = F.token_f1(["", "cat", "", "paris"], [["Москва"], ["the cat", "a dog"], [""], ["Paris"]])
    assert task["score"] == pytest.approx(float(expected), abs=1e-12)
    assert task["score"] == pytest.approx((0 + 1 + 1 + 1) / 4)  # empty vs empty scores 1 (SQuAD v2 convention)
    assert task["counts"]["missing_predictions"] == 2 and task["counts"]["missing_ids"] == ["1", "3"]


@pytest.mark.parametrize(
    "pred_lines, ref_lines, bad_file, line, words",
    [
        (['{"id": 1, "prediction": "a"}', '{"id": 2, "prediction": "b"}', '{"id": 1, "prediction": "c"}'],
         ['{"id": 1, "references": ["a"]}', '{"id": 2, "references": ["b"]}'], "preds", 3,
         ["duplicate id '1'", "line 1"]),
        (['{"id": 1, "prediction": "a"}'],
         ['{"id": 1, "references": ["a"]}', '', '{"id": 1, "references": ["b"]}'], "refs", 3, ["duplicate id"]),
        (['{"id": 1, "prediction": "a"}', '{"id": 9, "prediction": "b"}'],
         ['{"id": 1, "references": ["a"]}'], "preds", 2, ["unknown id '9'"]),
        (['{"id": 1, "prediction": "a"}', '{"id": 2, "prediction": "b"'],
         ['{"id": 1, "references": ["a"]}', '{"id": 2, "references": ["b"]}'], "preds", 2, ["malformed JSON"]),
        (['{"id": 1, "prediction": "a"}'],
         ['{"id": 1, "references": ["a"]}', '{"id": 2, "reference": ["b"]}'], "refs", 2, ["no 'references' key"]),
        (['{"id": 1, "prediction": "a"}', '{"prediction": "b"}'],
         ['{"id": 1, "references": ["a"]}'], "preds", 2, ["no 'id' key"]),
        (['{"id": 1, "prediction": 5}'], ['{"id": 1, "references": ["a"]}'], "preds", 1, ["must be a string"]),
        (['["id", 1]'], ['{"id": 1, "references": ["a"]}'], "preds", 1, ["must be a JSON object"]),
        (['{"id": 1, "prediction": "a"}'], ['{"id": 1, "references": []}'], "refs", 1, ["empty"]),
        (['{"id": 1.5, "prediction": "a"}'], ['{"id": 1, "references": ["a"]}'], "preds", 1, ["`id` must be"]),
    ],
    ids=["dup-pred", "dup-ref", "unknown-id", "malformed", "missing-references-key", "missing-id", "non-string",
         "not-object", "empty-references", "float-id"],
)
def test_bad_jsonl_files_name_file_and_line(tmp_path, capsys, pred_lines, ref_lines, bad_file, line, words):
    preds = _write(tmp_path / "preds.jsonl", pred_lines)
    refs = _write(tmp_path / "refs.jsonl", ref_lines)
    code, out, err = _run(["evaluate", _config(tmp_path, preds, refs)], capsys)
    assert code == 2 and out == ""
    bad = preds if bad_file == "preds" else refs
    assert f"{bad}:{line}:" in err, err
    for word in words:
        assert word in err, err


def test_unicode_line_separators_inside_jsonl_strings(tmp_path):
    text = "a\u2028b\x85c\u2029 д"
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"id": 1, "prediction": text}, ensure_ascii=False) + "\r\n\n" +
                     json.dumps({"id": 2, "prediction": "x"}) + "\n", encoding="utf-8")
    records = read_records(preds, "prediction")
    assert [(r.id, r.value, r.line) for r in records] == [("1", text, 1), ("2", "x", 3)]


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_leading_utf8_bom_is_not_data(tmp_path, suffix):
    path = tmp_path / f"p{suffix}"
    body = '{"id": "a", "prediction": "Paris"}\r\n' if suffix == ".jsonl" else '{"a": "Paris"}'
    path.write_bytes(b"\xef\xbb\xbf" + body.encode())
    assert [(r.id, r.value) for r in read_records(path, "prediction")] == [("a", "Paris")]


def test_bad_json_files_name_file_and_line(tmp_path):
    refs = tmp_path / "refs.json"
    refs.write_text('[\n {"id": "a", "references": ["x"]},\n {"id": "b", "references": ["y"]}\n]\n', encoding="utf-8")
    preds = tmp_path / "preds.json"
    preds.write_text('{\n "a": "x",\n "b": "y",\n "a": "z"\n}\n', encoding="utf-8")  # json.loads would keep the last
    with pytest.raises(DataError, match=rf"{preds}:4: duplicate id 'a' \(first seen on line 2\)"):
        join_by_id(preds, refs)
    preds.write_text('{\n "a": "x",\n "b": \n}\n', encoding="utf-8")
    with pytest.raises(DataError, match=rf"{preds}:4: malformed JSON"):
        read_records(preds, "prediction")
    preds.write_text('[{"id": "a", "prediction": "x"}]\n[]', encoding="utf-8")
    with pytest.raises(DataError, match=rf"{preds}:2: malformed JSON: extra data"):
        read_records(preds, "prediction")
    preds.write_text('"text"', encoding="utf-8")
    with pytest.raises(DataError, match=rf"{preds}:1: .*array of records"):
        read_records(preds, "prediction")
    preds.write_text('{"a": "x", "c": "z"}', encoding="utf-8")
    with pytest.raises(DataError, match=rf"{preds}:1: unknown id 'c'"):
        join_by_id(preds, refs)
    preds.write_text('[]', encoding="utf-8")
    data = join_by_id(preds, refs)
    assert data.missing == ["a", "b"] and data.predictions == ["", ""]
    (tmp_path / "preds.csv").write_text("id,prediction\n", encoding="utf-8")
    with pytest.raises(DataError, match="unknown data file type"):
        read_records(tmp_path / "preds.csv", "prediction")
    with pytest.raises(DataError, match="file not found"):
        read_records(tmp_path / "nope.jsonl", "prediction")


def test_config_errors_name_the_task(tmp_path, capsys):
    preds = _write(tmp_path / "p.jsonl", ['{"id": 1, "prediction": "a"}'])
    refs = _write(tmp_path / "r.jsonl", ['{"id": 1, "references": ["a"]}'])
    cases = [
        (dict(metric="no_such_metric"), "unknown metric 'no_such_metric'; known:"),
        (dict(options={"preset": "nope"}), "tasks[0] (T): invalid options"),
        (dict(options={"bogus": 1}), "invalid options"),
        (dict(options={"reduction": "none"}), "tasks[0] (T): a task reports one score; `reduction: none`"),
        (dict(device="tpu"), "must be a torch device such as 'cpu', 'cuda', 'cuda:1' or 'mps', got 'tpu'"),
        (dict(batch_size=0), "`batch_size` must be a positive integer"),
        (dict(suite="no_such_suite"), "unknown suite 'no_such_suite'"),
        (dict(extra_key=1), "unknown key(s) extra_key"),
    ]
    for kwargs, message in cases:
        path = _config(tmp_path, preds, refs, **kwargs)
        code, _, err = _run(["evaluate", path], capsys)
        assert code == 2 and message in err and str(path) in err, (kwargs, err)
    with pytest.raises(ConfigError, match="file not found"):
        parse_config({"tasks": [{"name": "T", "metric": "token_f1", "predictions": "x.jsonl",
                                 "references": "r.jsonl"}]},
                     tmp_path / "c.yaml")
    with pytest.raises(ConfigError, match="duplicate task name"):
        task = {"name": "T", "metric": "token_f1", "predictions": "p.jsonl", "references": "r.jsonl"}
        parse_config({"tasks": [task, task]}, tmp_path / "c.yaml")
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("tasks:\n  - name: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"{bad_yaml}:\d+: invalid YAML"):
        load_config(bad_yaml)
    code, _, err = _run(["evaluate", tmp_path / "missing.yaml"], capsys)
    assert code == 2 and "config file not found" in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA error")
def test_cuda_device_without_cuda_is_a_clear_error(capsys):
    code, _, err = _run(["evaluate", DEMO, "--device", "cuda"], capsys)
    assert code == 2 and "CUDA is not available" in err


def test_suite_takes_metric_and_options_and_sums(tmp_path, capsys, monkeypatch):
    suite = registry.Suite(
        name="toy_suite",
        description="two tasks, summed",
        tasks=[registry.SuiteTask("QA", "token_f1", {"preset": "squad"}),
               registry.SuiteTask("EM", "exact_match", {"preset": "raw"}),
               registry.SuiteTask("Hidden", "string_accuracy")],
    )
    monkeypatch.setitem(registry.SUITES, suite.name, suite)
    _write(tmp_path / "p.jsonl", ['{"id": 1, "prediction": "the Cat"}', '{"id": 2, "prediction": "dog"}'])
    _write(tmp_path / "r.jsonl", ['{"id": 1, "references": ["cat"]}', '{"id": 2, "references": ["a dog"]}'])
    config = {"suite": "toy_suite", "tasks": [
        {"name": "QA", "predictions": "p.jsonl", "references": "r.jsonl"},
        {"name": "EM", "metric": "exact_match", "options": {"preset": "raw"}, "predictions": "p.jsonl",
         "references": "r.jsonl"},
    ]}
    path = tmp_path / "suite.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")
    out_path = tmp_path / "r.json"
    code, out, err = _run(["evaluate", path, "-o", out_path], capsys)
    assert code == 0, err
    report = json.loads(out_path.read_text(encoding="utf-8"))
    f1 = float(F.token_f1(["the Cat", "dog"], ["cat", "a dog"], preset="squad"))
    em = float(F.exact_match(["the Cat", "dog"], ["cat", "a dog"], preset="raw"))
    assert report["suite"] == {"name": "toy_suite", "score": pytest.approx(f1 + em), "tasks": {"QA": f1, "EM": em},
                               "missing_tasks": ["Hidden"], "hidden_not_supplied": []}
    assert "suite toy_suite" in out and "Hidden" in out
    config["tasks"][1]["options"] = {"preset": "squad"}
    path.write_text(json.dumps(config), encoding="utf-8")
    code, _, err = _run(["evaluate", path], capsys)
    assert code == 2 and "are fixed to" in err
    config["tasks"][1] = {"name": "Other", "predictions": "p.jsonl", "references": "r.jsonl"}
    path.write_text(json.dumps(config), encoding="utf-8")
    code, _, err = _run(["evaluate", path], capsys)
    assert code == 2 and "has no task 'Other'" in err
    code, out, _ = _run(["list"], capsys)
    assert code == 0 and "toy_suite" in out and "QA (token_f1)" in out


def test_list_prints_metrics_and_suites(capsys):
    code, out, _ = _run(["list"], capsys)
    assert code == 0
    for name in ("token_f1", "exact_match", "string_accuracy", "suites"):
        assert name in out
    code, out, _ = _run(["list", "--json"], capsys)
    listing = json.loads(out)
    assert set(registry.METRICS) == set(listing["metrics"]) and "token_f1" in listing["metrics"]
    assert listing["metrics"]["token_f1"]["empty_prediction"] == ""


def test_every_subcommand_comes_from_a_module_of_the_cli_package(capsys):
    from gpumetrics.cli.main import COMMANDS

    assert all(module.__name__.startswith("gpumetrics.cli.") for module in COMMANDS)
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert all(command in out for command in ("evaluate", "list", "fid", "clip-score"))


def test_usage_errors_exit_2(capsys):
    for argv in ([], ["evaluate"], ["evaluate", str(DEMO), "--batch-size", "0"], ["nope"]):
        with pytest.raises(SystemExit) as info:
            cli.main(argv)
        assert info.value.code == 2
    capsys.readouterr()


def test_python_dash_m_gpumetrics_runs_the_demo(tmp_path):
    out_path = tmp_path / "demo.json"
    result = subprocess.run(
        [sys.executable, "-m", "gpumetrics", "evaluate", str(DEMO), "--output", str(out_path)],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "TextQA" in result.stdout and "report written to" in result.stdout
    report = json.loads(out_path.read_text(encoding="utf-8"))
    expected = _expected_demo_scores()
    assert {t["name"]: t["score"] for t in report["tasks"]} == pytest.approx({k: v[0] for k, v in expected.items()})


class _AbsError(torch.nn.Module):
    """Stand-in numeric metric (registered only inside a test): mean absolute error, dict output."""

    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros((), dtype=torch.float64))
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))

    def update(self, preds, target):
        if not all(isinstance(p, (int, float)) for p in preds):
            raise TypeError("`preds` must hold numbers")
        p = torch.tensor(preds, dtype=torch.float64)
        t = torch.tensor([refs[0] for refs in target], dtype=torch.float64)
        self.total += (p - t).abs().sum()
        self.count += len(preds)

    def compute(self):
        return {"count": self.count, "mae": self.total / self.count}

    def signature(self):
        return "mae|version:test"


def test_non_text_metric_uses_its_empty_prediction_and_primary_key(tmp_path, capsys, monkeypatch):
    entry = registry.TaskMetric("toy_mae", _AbsError, "toy", empty_prediction=0.0, primary="mae")
    monkeypatch.setitem(registry.METRICS, entry.name, entry)
    refs = _write(tmp_path / "r.jsonl", ['{"id": "a", "references": [1.5]}', '{"id": "b", "references": 4}'])
    preds = _write(tmp_path / "p.jsonl", ['{"id": "a", "prediction": 2.0}'])
    out_path = tmp_path / "out.json"
    code, out, err = _run(["evaluate", _config(tmp_path, preds, refs, metric="toy_mae"), "-o", out_path], capsys)
    assert code == 0, err
    task = json.loads(out_path.read_text(encoding="utf-8"))["tasks"][0]
    assert task["score"] == pytest.approx((0.5 + 4.0) / 2) and task["details"]["count"] == 2
    assert task["counts"]["missing_ids"] == ["b"] and task["signature"] == "mae|version:test"
    # a value the metric rejects: the error names the task, the metric and the first id of the batch
    _write(preds, ['{"id": "a", "prediction": 2.0}', '{"id": "b", "prediction": "four"}'])
    code, _, err = _run(["evaluate", _config(tmp_path, preds, refs, metric="toy_mae", batch_size=1)], capsys)
    assert code == 2 and "task 'T': metric 'toy_mae' rejected" in err and "first id 'b'" in err, err


def test_metric_without_an_empty_answer_names_the_missing_ids(tmp_path, capsys, monkeypatch):
    entry = registry.TaskMetric("toy_mae_strict", _AbsError, "toy", empty_prediction=None, primary="mae")
    monkeypatch.setitem(registry.METRICS, entry.name, entry)
    refs = _write(tmp_path / "r.jsonl", ['{"id": "a", "references": [1.5]}', '{"id": 7, "references": 4}'])
    preds = _write(tmp_path / "p.jsonl", ['{"id": "a", "prediction": 2.0}'])
    code, _, err = _run(["evaluate", _config(tmp_path, preds, refs, metric="toy_mae_strict")], capsys)
    assert code == 2 and "1 of 2 references have no prediction (ids '7')" in err and "p.jsonl" in err, err


def _tritw_reference(prediction, golds):
    """AIJ-2022 1 − NED of one sample from the spec: 0 when either string is empty, max over gold strings."""
    from rapidfuzz.distance import Levenshtein

    return max(0.0 if not prediction or not g
               else 1 - Levenshtein.distance(prediction, g) / max(len(prediction), len(g))
               for g in golds)


def test_wide_random_suites_join_and_sum_like_the_spec(tmp_path, capsys):
    """Seeded files in the organisers' layouts (one JSON object per file, shuffled order, missing and empty
    predictions, an image element before the text answer, one or several golds, Unicode); every task score against
    the spec's per-sample formula on an independent id join (AIJ-2022: a missing prediction scores 0; AIJ-2021 HTR:
    it is ""), the suite score = their sum."""
    import random

    rng = random.Random(11)
    pool = ["Москва", "москва!", "Paris", "", " ", "1961", "в 1961 году", "B) 42", "c", "猫", "🐶 dog", "e\u0301te\u0301",
            "a\u00a0b", "x\u2028y", "tab\there", "-5", "the Cat", "ответ: d", "\u200b", "три кошки", "3 кошки"]

    def per_sample(name, p, g):
        if name == "TextQA":
            return F.token_f1(p, g, preset="aij2022", reduction="none").tolist()
        if name == "MathQA":
            return F.exact_match(p, g, preset="aij2022", reduction="none").tolist()
        return [_tritw_reference(x, y) for x, y in zip(p, g)]

    def dump(path, value):
        items = list(value.items())
        rng.shuffle(items)
        path.write_text(json.dumps(dict(items), ensure_ascii=rng.random() < 0.5), encoding="utf-8")

    for round_ in range(4):
        suite = ("aij2022", "aij2021")[round_ % 2]
        names = ["TextQA", "MathQA", "TRitW"] if suite == "aij2022" else ["HTR", "VQA"]
        tasks, expected = [], {}
        for name in names:
            ids = [str(i) for i in range(rng.choice([1, 4, 13]))]
            present = {i for i in ids if name == "VQA" or rng.random() > 0.15}
            preds = {i: rng.choice(pool) for i in present}
            if suite == "aij2022":
                golds = {i: [rng.choice(pool) for _ in range(rng.choice([1, 1, 2, 3]))] for i in ids}
                refs = {i: [{"type": "text", "content": golds[i]}] for i in ids}
                pred_file = {i: ([{"type": "image", "content": "x.png"}] if rng.random() < 0.3 else [])
                             + [{"type": "text", "content": p}] for i, p in preds.items()}
                scored = [i for i in ids if i in present]
                scores = per_sample(name, [preds[i] for i in scored], [golds[i] for i in scored]) if scored else []
                expected[name] = sum(scores) / len(ids)
            elif name == "HTR":
                refs = {i: rng.choice(pool) for i in ids}
                pred_file = preds
                expected[name] = sum(preds.get(i, "") == refs[i] for i in ids) / len(ids)
            else:
                refs = {i: {"answer": rng.choice(pool), "lang": rng.choice(["en", "ru"]), "question_id": n}
                        for n, i in enumerate(ids)}
                pred_file = preds
                expected[name] = float(F.vqa_accuracy([preds[i] for i in ids], [refs[i]["answer"] for i in ids],
                                                      [refs[i]["lang"] for i in ids]))
            p_path, r_path = tmp_path / f"{round_}_{name}_p.json", tmp_path / f"{round_}_{name}_r.json"
            dump(p_path, pred_file)
            dump(r_path, refs)
            tasks.append({"name": name, "predictions": p_path.name, "references": r_path.name})
        config = tmp_path / f"suite{round_}.yaml"
        config.write_text(json.dumps({"suite": suite, "batch_size": rng.choice([1, 3, 64]), "tasks": tasks}),
                          encoding="utf-8")
        out_path = tmp_path / f"out{round_}.json"
        code, _, err = _run(["evaluate", config, "-o", out_path], capsys)
        assert code == 0, err
        report = json.loads(out_path.read_text(encoding="utf-8"))
        assert {t["name"]: t["score"] for t in report["tasks"]} == pytest.approx(expected, abs=1e-12)
        assert report["suite"]["score"] == pytest.approx(sum(expected.values()), abs=1e-12)


@pytest.mark.parametrize("metric", ["cer", "wer"])
def test_cer_wer_tasks_use_every_reference_whatever_their_order(tmp_path, metric):
    from gpumetrics.harness.runner import evaluate

    preds = _write(tmp_path / "p.jsonl", [json.dumps({"id": i, "prediction": p})
                                          for i, p in enumerate(["the cat sat", "a dog", "кот"])])
    refs = [["a cat sat down", "the cat sat"], ["dogs", "a big dog", "a dog."], ["кит", "кот"]]
    scores = []
    for order in (1, -1):
        path = _write(tmp_path / f"r{order}.jsonl", [json.dumps({"id": i, "references": r[::order]})
                                                    for i, r in enumerate(refs)])
        (task,) = evaluate(load_config(_config(tmp_path, preds, path, metric=metric))).tasks
        scores.append(task.score)
    from gpumetrics.harness.report import registry_listing

    assert "several references" in registry_listing()["metrics"][metric]["description"]  # `gpumetrics list`
    fn = F.char_error_rate if metric == "cer" else F.word_error_rate
    assert scores[0] == scores[1] == pytest.approx(float(fn(["the cat sat", "a dog", "кот"], refs)))
    assert 0 < scores[0] < 0.5


# ------------------------------------------------------------------ a report is never broken, errors are one line
def _demo_like(tmp_path):
    preds = _write(tmp_path / "p.jsonl", [json.dumps({"id": 1, "prediction": "a b"})])
    refs = _write(tmp_path / "r.jsonl", [json.dumps({"id": 1, "references": ["a c"]})])
    return _config(tmp_path, preds, refs)


def test_failed_report_write_keeps_the_previous_report(tmp_path, capsys, monkeypatch):
    import errno
    import os as os_module

    config, report = _demo_like(tmp_path), tmp_path / "out" / "report.json"
    assert _run(["evaluate", config, "--output", report], capsys)[0] == 0
    previous = report.read_bytes()
    real_fsync = os_module.fsync

    def disk_full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os_module, "fsync", disk_full)
    code, _, err = _run(["evaluate", config, "--output", report], capsys)
    monkeypatch.setattr(os_module, "fsync", real_fsync)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("gpumetrics evaluate: error: ") and "No space left on device" in err
    assert report.read_bytes() == previous
    assert not [p for p in report.parent.rglob("*.tmp")]  # no temp file left behind
    # what a failed run leaves: the report of the previous run and the checkpoints of this one, for --resume
    assert sorted(p.name for p in report.parent.iterdir()) in (["report.checkpoint", "report.json"], ["report.json"])


def test_interrupt_is_one_line_exit_130_and_keeps_the_report(tmp_path, capsys, monkeypatch):
    from gpumetrics.harness import runner

    config, report = _demo_like(tmp_path), tmp_path / "report.json"
    assert _run(["evaluate", config, "--output", report], capsys)[0] == 0
    previous = report.read_bytes()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner._Run, "evaluate_task", interrupted)
    code, _, err = _run(["evaluate", config, "--output", report], capsys)
    assert code == 130 and err == "gpumetrics evaluate: interrupted\n"
    assert report.read_bytes() == previous


def test_deeply_nested_json_is_a_one_line_data_error(tmp_path, capsys):
    deep = '{"id": 1, "prediction": ' + "[" * 100_000 + "]" * 100_000 + "}"
    for name, text in (("p.jsonl", deep + "\n"), ("p.json", "[" + deep + "]")):
        preds = tmp_path / name
        preds.write_text(text)
        refs = _write(tmp_path / "r.jsonl", [json.dumps({"id": 1, "references": ["a"]})])
        code, _, err = _run(["evaluate", _config(tmp_path, preds, refs)], capsys)
        assert code == 2 and err.count("\n") == 1 and "nested too deeply" in err and name in err


def test_unreadable_inputs_are_one_line_errors(tmp_path, capsys):
    (tmp_path / "real").mkdir()
    (tmp_path / "gen").mkdir()
    for folder in ("real", "gen"):
        for i in range(2):
            (tmp_path / folder / f"{i}.png").write_bytes(b"\x89PNG\r\n\x1a\n not really a png")
    code, _, err = _run(["fid", tmp_path / "real", tmp_path / "gen", "--weights", "random", "--dims", "64"], capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("gpumetrics fid: error: ")
    config = tmp_path / "unreadable.yaml"
    config.mkdir()  # a folder where a file is expected: IsADirectoryError / OSError
    code, _, err = _run(["evaluate", config], capsys)
    assert code == 2 and err.count("\n") == 1
    code, _, err = _run(["evaluate", _demo_like(tmp_path), "--output", tmp_path / "p.jsonl" / "x.json"], capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("gpumetrics evaluate: error: ")


def test_yaml_syntax_error_and_missing_file_are_one_line(tmp_path, capsys):
    config = tmp_path / "bad.yaml"
    config.write_text("tasks: [\n  - {name: x\n", encoding="utf-8")
    code, _, err = _run(["evaluate", config], capsys)
    assert code == 2 and err.count("\n") == 1 and "bad.yaml" in err
    good = _demo_like(tmp_path)
    (tmp_path / "p.jsonl").unlink()
    code, _, err = _run(["evaluate", good], capsys)
    assert code == 2 and err.count("\n") == 1 and "p.jsonl" in err


def test_bugs_keep_their_traceback(monkeypatch):
    from gpumetrics.harness import runner

    def bug(*args, **kwargs):
        raise AttributeError("a genuine bug")

    monkeypatch.setattr(runner, "evaluate", bug)
    with pytest.raises(AttributeError, match="genuine bug"):
        cli.main(["evaluate", str(DEMO)])
