"""Hostile and careless input (issue 28 items 13, 14, 16): lone surrogates, YAML alias bombs, non-UTF-8 configs, the
config's device, directories as data files, empty predictions files and ``--strict``, whole signatures."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest
import torch

from gpumetrics import cli
from gpumetrics.harness.config import ConfigError, load_config
from gpumetrics.harness.records import DataError, IndexedJoin, read_records


def _run(args, capsys):
    code = cli.main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _task(tmp_path: Path, preds: str, refs: str, *, suffix=".jsonl", options: str = "", extra: str = "") -> Path:
    (tmp_path / f"preds{suffix}").write_text(preds, encoding="utf-8")
    (tmp_path / "refs.jsonl").write_text(refs, encoding="utf-8")
    config = tmp_path / "config.yaml"
    config.write_text(f"name: t\n{extra}tasks:\n  - name: QA\n    metric: token_f1\n{options}"
                      f"    predictions: preds{suffix}\n    references: refs.jsonl\n", encoding="utf-8")
    return config


REFS = '{"id": "1", "references": ["a b"]}\n{"id": "2", "references": ["c"]}\n'


# ---------------------------------------------------------------------------------------------------- item 13
@pytest.mark.parametrize("preds, suffix, line", [
    ('{"id": "1", "prediction": "a b"}\n{"id": "2", "prediction": "x \\ud800 y"}\n', ".jsonl", 2),
    ('{"id": "1", "prediction": "a b"}\n{"id": "\\udc00", "prediction": "c"}\n', ".jsonl", 2),
    ('[{"id": "1", "prediction": "a b"},\n {"id": "2", "prediction": "\\ud800"}]', ".json", 2),
    ('{"1": "a b",\n "2": "\\udfff"}', ".json", 2),
])
def test_lone_surrogate_is_refused_at_read_time_with_file_and_line(tmp_path, capsys, preds, suffix, line):
    config = _task(tmp_path, preds, REFS, suffix=suffix)
    code, _, err = _run(["evaluate", config, "-o", tmp_path / "r.json"], capsys)
    assert code == 2
    assert f"preds{suffix}:{line}" in err and "lone surrogate" in err and err.count("\n") == 1
    assert not (tmp_path / "r.json").exists()


def test_surrogate_pairs_are_text(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "1", "prediction": "\\ud83d\\ude00"}\n', encoding="utf-8")
    assert read_records(path, "prediction")[0].value == "\U0001F600"
    refs = tmp_path / "r.jsonl"
    refs.write_text('{"id": "1", "references": ["\\ud83d\\ude00"]}\n', encoding="utf-8")
    assert IndexedJoin(path, refs).total == 1


def test_lone_surrogate_in_references_through_the_indexed_join(tmp_path):
    preds, refs = tmp_path / "p.jsonl", tmp_path / "r.jsonl"
    preds.write_text('{"id": "1", "prediction": "a"}\n', encoding="utf-8")
    refs.write_text('{"id": "1", "references": ["ok", "\\ud800"]}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"r\.jsonl:1: .*lone surrogate"):
        IndexedJoin(preds, refs)


def test_a_config_string_with_a_lone_surrogate_is_refused_naming_the_config(tmp_path, capsys):
    # YAML's "\ud800" escape gave a task name no report could write: exit 2 at the run's end naming no file
    _task(tmp_path, '{"id": "1", "prediction": "a b"}\n', REFS)
    config = tmp_path / "lone.yaml"
    config.write_text('tasks:\n  - {name: "Q\\ud800A", metric: bleu, predictions: preds.jsonl, '
                      'references: refs.jsonl}\n', encoding="utf-8")
    code, _, err = _run(["evaluate", config, "-o", tmp_path / "r.json"], capsys)
    assert code == 2 and err.count("\n") == 1 and f"{config}: the string" in err and "lone surrogate" in err
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "r.checkpoint").exists()


def test_a_json_config_s_surrogate_pair_is_one_character_as_in_json(tmp_path, capsys):
    _task(tmp_path, '{"id": "1", "prediction": "a b"}\n{"id": "2", "prediction": "c"}\n', REFS)
    config = tmp_path / "pair.json"
    config.write_text(json.dumps({"tasks": [{"name": "QA \U0001F600", "metric": "bleu",
                                             "predictions": "preds.jsonl", "references": "refs.jsonl"}]}),
                      encoding="utf-8")  # json.dumps writes the emoji as the escaped pair "\ud83d\ude00"
    assert "\\ud83d\\ude00" in config.read_text(encoding="utf-8")
    assert _run(["evaluate", config, "-o", tmp_path / "r.json"], capsys)[0] == 0
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["tasks"][0]["name"] == "QA \U0001F600"


# ---------------------------------------------------------------------------------------------------- item 14
def _alias_bomb(levels: int = 9) -> str:
    """``options`` whose aliases expand to 9**levels strings (387 million at 9 levels) but parse in microseconds."""
    lines = ['      l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        lines.append(f"      l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 9) + "]")
    return "    options:\n" + "\n".join(lines) + "\n"


def test_yaml_alias_bomb_is_not_expanded(tmp_path, capsys):
    config = _task(tmp_path, '{"id": "1", "prediction": "a"}\n', REFS, options=_alias_bomb())
    start = time.perf_counter()
    code, _, err = _run(["evaluate", config], capsys)
    assert time.perf_counter() - start < 60  # expanding it would take minutes and gigabytes
    assert code == 2 and err.count("\n") == 1 and len(err) < 1000
    assert "alias" in err and "config.yaml" in err


def test_error_messages_bound_the_options_repr(tmp_path):
    from gpumetrics.harness.config import parse_config

    shared = ["x" * 50] * 1000  # 50,000 characters if printed whole
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"id": "1", "prediction": "a"}\n', encoding="utf-8")
    (tmp_path / "r.jsonl").write_text(REFS, encoding="utf-8")
    raw = {"tasks": [{"name": "T", "metric": "token_f1", "options": {"nope": shared},
                      "predictions": "p.jsonl", "references": "r.jsonl"}]}
    with pytest.raises(ConfigError) as caught:
        parse_config(raw, tmp_path / "c.yaml")
    assert "nope" in str(caught.value) and len(str(caught.value)) < 1000


def test_non_utf8_config_names_the_file_and_line(tmp_path, capsys):
    config = tmp_path / "latin1.yaml"
    config.write_bytes("name: t\n# café\ntasks: []\n".encode("latin-1"))
    code, _, err = _run(["evaluate", config], capsys)
    assert code == 2 and f"{config}:2" in err and "not UTF-8" in err


def test_config_device_is_named_as_the_config_s(tmp_path, capsys):
    if torch.cuda.is_available():
        pytest.skip("CUDA is here: device: cuda is valid")
    config = _task(tmp_path, '{"id": "1", "prediction": "a b"}\n', REFS, extra="device: cuda\n")
    code, _, err = _run(["evaluate", config], capsys)
    assert code == 2 and "config.yaml" in err and "device" in err
    assert "--device" not in err
    code, _, err = _run(["evaluate", config, "--device", "cuda"], capsys)  # the flag, named as the flag
    assert code == 2 and "--device" in err


def test_directory_as_data_file_says_so(tmp_path, capsys):
    config = _task(tmp_path, "", REFS)
    (tmp_path / "preds.jsonl").unlink()
    (tmp_path / "preds.jsonl").mkdir()
    code, _, err = _run(["evaluate", config], capsys)
    assert code == 2 and "is a directory" in err and "not found" not in err
    (tmp_path / "folder.jsonl").mkdir()
    with pytest.raises(DataError, match="is a directory"):
        read_records(tmp_path / "folder.jsonl", "prediction")
    (tmp_path / "refs2.jsonl").write_text(REFS, encoding="utf-8")
    with pytest.raises(DataError, match="is a directory"):
        IndexedJoin(tmp_path / "folder.jsonl", tmp_path / "refs2.jsonl")
    code, _, err = _run(["evaluate", tmp_path], capsys)  # the config itself
    assert code == 2 and "is a directory" in err


# ---------------------------------------------------------------------------------------------------- item 16
@pytest.mark.parametrize("preds, suffix", [("", ".jsonl"), ("\n\n", ".jsonl"), ("[]", ".json"), ("{}", ".json")])
def test_empty_predictions_file_warns_loudly(tmp_path, capsys, preds, suffix):
    config = _task(tmp_path, preds, REFS, suffix=suffix)
    code, out, err = _run(["evaluate", config], capsys)
    assert code == 0
    assert f"WARNING: predictions file {tmp_path / ('preds' + suffix)} holds no record" in err
    code, _, err = _run(["evaluate", config, "--strict", "-o", tmp_path / "r.json"], capsys)
    assert code == 3 and "--strict: 2 prediction(s) missing (QA: 2)" in err
    assert json.loads((tmp_path / "r.json").read_text())["tasks"][0]["counts"]["missing_predictions"] == 2


def test_predictions_of_another_set_warn_and_strict_counts_partial_misses(tmp_path, capsys):
    config = _task(tmp_path, '{"id": "9", "prediction": "a b"}\n', REFS)
    code, _, err = _run(["evaluate", config], capsys)
    assert code == 2 and "unknown" in err.lower() and err.count("\n") == 1  # ids of another set: an error already
    config = _task(tmp_path, '{"id": "1", "prediction": "a b"}\n', REFS)
    code, _, err = _run(["evaluate", config], capsys)
    assert code == 0 and "WARNING" not in err
    code, _, err = _run(["evaluate", config, "--strict"], capsys)
    assert code == 3 and "QA: 1" in err


def test_results_table_prints_whole_signatures(tmp_path, capsys):
    from rich.console import Console

    from gpumetrics.harness.report import results_table
    from gpumetrics.harness.runner import evaluate

    (tmp_path / "preds.jsonl").write_text('{"id": "1", "prediction": "a b"}\n{"id": "2", "prediction": "c"}\n')
    (tmp_path / "refs.jsonl").write_text(REFS)
    config = tmp_path / "c.yaml"
    config.write_text("tasks:\n  - {name: B, metric: bleu, options: {tokenize: intl, smooth: floor, smooth_value: 0.1},"
                      " predictions: preds.jsonl, references: refs.jsonl}\n")
    report = evaluate(load_config(config))
    signature = report.tasks[0].signature
    assert len(signature) > 60
    for width in (400, 80):
        console = Console(file=io.StringIO(), width=width, record=True)
        console.print(results_table(report))
        text = console.export_text()
        assert "…" not in text
        if width == 400:
            assert signature in text


@pytest.mark.parametrize("name, text", [
    ("gold.jsonl", '{"id": 1, "references": ["a"]}\n'),
    ("gold.json", '[{"id": 1, "references": ["a"]}]'),
])
def test_a_suite_given_generic_records_says_it_reads_the_organisers_format(tmp_path, capsys, name, text):
    (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "pred.json").write_text('{"1": [{"type": "text", "content": "a"}]}', encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text(f"suite: aij2022\ntasks:\n  - {{name: TextQA, references: {name}, predictions: pred.json}}\n",
                      encoding="utf-8")
    code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)
    assert code == 2 and f"{name}:1: the official format is one JSON object" in err
    assert "`metric:` task" in err and "'value'" not in err


# ---------------------------------------------------------------------------------------------------- fuzz: configs
@pytest.mark.parametrize("extra, key, line", [
    ("    metric: bleu\n", "'metric'", 7),                      # a pasted task line: PyYAML kept the last silently
    ("    predictions: refs.jsonl\n", "'predictions'", 7),
    ("    options: {preset: squad, preset: raw}\n", "'preset'", 7),
])
def test_a_config_repeating_a_key_is_refused_naming_key_and_lines(tmp_path, capsys, extra, key, line):
    config = _task(tmp_path, '{"id": "1", "prediction": "a b"}\n', REFS)
    config.write_text(config.read_text(encoding="utf-8") + extra, encoding="utf-8")
    code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"config.yaml:{line}:" in err and f"duplicate key {key}" in err


def test_yaml_merge_keys_may_still_be_overridden(tmp_path):
    _task(tmp_path, '{"id": "1", "prediction": "a b"}\n', REFS)
    config = tmp_path / "merge.yaml"
    config.write_text("tasks:\n  - &t\n    name: QA\n    metric: token_f1\n    predictions: preds.jsonl\n"
                      "    references: refs.jsonl\n  - <<: *t\n    name: QA2\n", encoding="utf-8")
    assert [task.name for task in load_config(config).tasks] == ["QA", "QA2"]


@pytest.mark.parametrize("name, expected", [("null", "config"), ("", "config"), ("2024", "2024"), ("[1, 2]", None),
                                            ("{a: b}", None), ("true", None)])
def test_a_config_name_that_is_no_text_is_refused_and_an_empty_one_is_the_stem(tmp_path, name, expected):
    # `name: null` titled the report "None", `name: {a: b}` "{'a': 'b'}"; the task names were checked, not this one
    config = _task(tmp_path, '{"id": "1", "prediction": "a b"}\n', REFS)
    config.write_text(config.read_text(encoding="utf-8").replace("name: t\n", f"name: {name}\n", 1), encoding="utf-8")
    if expected is None:
        with pytest.raises(ConfigError, match=r"config\.yaml: `name` must be a string, got "):
            load_config(config)
    else:
        assert load_config(config).name == expected


# ---------------------------------------------------------------------------------------------------- fuzz: data files
@pytest.mark.parametrize("preds, suffix, line", [
    ('{"id": "1", "prediction": "a b"}\n{"id": ' + "7" * 5000 + ', "prediction": "c"}\n', ".jsonl", 2),
    ('[{"id": "1", "prediction": "a b"},\n {"id": ' + "7" * 5000 + ', "prediction": "c"}]', ".json", 2),
])
def test_an_integer_over_python_s_digit_limit_names_file_and_line(tmp_path, capsys, preds, suffix, line):
    # int() refuses over 4300 digits with a ValueError that used to reach the user without file or line
    config = _task(tmp_path, preds, REFS, suffix=suffix)
    code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)
    assert code == 2 and err.count("\n") == 1 and f"preds{suffix}:{line}: unreadable JSON value" in err


def test_lone_cr_line_endings_are_named(tmp_path, capsys):
    config = _task(tmp_path, '{"id": "1", "prediction": "a b"}\r{"id": "2", "prediction": "c"}\r', REFS)
    code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)
    assert (code == 2 and err.count("\n") == 1 and "preds.jsonl:1: malformed JSON line" in err
            and "carriage return" in err)


def test_a_device_or_fifo_as_data_file_is_named_not_found_or_read(tmp_path, capsys):
    import os

    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # opening it would block until a writer comes
    for data in ("/dev/null", fifo):
        config = tmp_path / "c.yaml"
        config.write_text(f"tasks:\n  - name: QA\n    metric: token_f1\n    predictions: {data}\n"
                          f"    references: {data}\n", encoding="utf-8")
        code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)
        assert code == 2 and err.count("\n") == 1 and "`predictions` is not a regular file" in err and str(data) in err


def test_clip_score_records_read_like_the_other_json_lines(tmp_path):
    # a BOM was "not a JSON object: Unexpected UTF-8 BOM"; invalid UTF-8 a bare UnicodeDecodeError without the file
    from gpumetrics.harness.records import read_field_records

    path = tmp_path / "captions.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"image": "a.png", "caption": "x"}\r\n{"image": "b.png", "caption": "y"}')
    assert read_field_records(path, ("image", "caption"), "E") == [("a.png", "x"), ("b.png", "y")]
    path.write_bytes(b'{"image": "a.png", "caption": "x"}\n{"image": "b.png", "caption": "\xff"}\n')
    with pytest.raises(DataError, match=r"captions.jsonl:2: not valid UTF-8"):
        read_field_records(path, ("image", "caption"), "E")


@pytest.mark.parametrize("preds, suffix, refs, where, key", [
    ('{"id": "1", "prediction": "draft", "prediction": "a b"}\n', ".jsonl", REFS, "preds.jsonl:1", "prediction"),
    ('{"id": "2", "prediction": "c"}\n{"id": "9", "id": "1", "prediction": "a b"}\n', ".jsonl", REFS,
     "preds.jsonl:2", "id"),
    ('[{"id": "1", "prediction": "a b"},\n {"id": "2", "prediction": "x", "prediction": "c"}]', ".json", REFS,
     "preds.json:2", "prediction"),
    ('{"id": "1", "prediction": "a b"}\n', ".jsonl", '{"id": "1", "references": ["x"], "references": ["a b"]}\n',
     "refs.jsonl:1", "references"),
])
def test_a_record_naming_a_key_twice_is_refused(tmp_path, capsys, preds, suffix, refs, where, key):
    # json.loads keeps the last of two equal keys: the record was scored with one of two values, silently
    config = _task(tmp_path, preds, refs, suffix=suffix)
    code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)
    assert code == 2 and err.count("\n") == 1 and f"{where}: the record names {key!r} twice" in err, err


def test_a_clip_score_record_naming_a_field_twice_is_refused(tmp_path):
    from gpumetrics.harness.records import read_field_records

    path = tmp_path / "captions.jsonl"
    path.write_text('{"image": "a.png", "caption": "x"}\n{"image": "b.png", "caption": "y", "caption": "z"}\n',
                    encoding="utf-8")
    with pytest.raises(DataError, match=r"captions.jsonl:2: the record names 'caption' twice"):
        read_field_records(path, ("image", "caption"), "E")


def test_a_key_s_name_as_a_value_or_nested_is_no_repeated_key(tmp_path, capsys):
    # the cheap test (a quoted key twice in the line) sends these to a second decoding, which finds no repeated key
    preds = '{"id": "id", "prediction": "prediction"}\n{"id": "2", "prediction": "c"}\n'
    refs = '{"id": "id", "references": ["prediction"]}\n{"id": "2", "references": ["c"]}\n'
    code, out, err = _run(["evaluate", _task(tmp_path, preds, refs), "--no-checkpoint"], capsys)
    assert code == 0 and "1.0000" in out, err


# ------------------------------------------------------------------------------------------------- fuzz: record values
BIG = "1" + "0" * 400  # valid JSON, an int in Python, past float64's range: float() raises OverflowError


@pytest.mark.parametrize("metric, options, prediction, reference", [
    ("ranking", "", '{"d1": ' + BIG + '}', '{"d1": 1}'),
    ("ranking", "", '{"d1": 0.5}', '{"d1": ' + BIG + '}'),
    ("zero_shot_detection_f1", "", '{"cat": [[0, 0, ' + BIG + ', 10]]}', '{"cat": [[0, 0, 10, 10]]}'),
    ("ocr_e2e", "", '[{"points": [0, 0, 10, 0, 10, 10, 0, ' + BIG + '], "text": "A"}]',
     '[{"points": [0, 0, 10, 0, 10, 10, 0, 10], "text": "A"}]'),
])
def test_a_number_past_float64_in_a_record_is_a_user_error(tmp_path, capsys, metric, options, prediction, reference):
    # OverflowError (not a ValueError) escaped main with a traceback from the catalog's record adapters
    (tmp_path / "p.jsonl").write_text(f'{{"id": 1, "prediction": {prediction}}}\n', encoding="utf-8")
    (tmp_path / "r.jsonl").write_text(f'{{"id": 1, "references": {reference}}}\n', encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text(f"tasks:\n  - {{name: T, metric: {metric}, predictions: p.jsonl, references: r.jsonl}}\n",
                      encoding="utf-8")
    code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)
    assert code == 2 and err.count("\n") == 1 and "r.jsonl" in err and "(first id '1')" in err


def test_a_box_coordinate_past_float64_in_the_aij2021_detection_format_names_the_file(tmp_path, capsys):
    # math.isfinite(10**400) raises OverflowError: it escaped main from the format's box check
    (tmp_path / "pred.json").write_text('{"1.png": {"cat": [[0, 0, ' + BIG + ', 10]]}}', encoding="utf-8")
    (tmp_path / "gt.json").write_text('{"1.png": {"cat": [[0, 0, 10, 10]]}}', encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text("suite: aij2021\ntasks:\n  - {name: ZeroShotDetection, predictions: pred.json, "
                      "references: gt.json}\n", encoding="utf-8")
    code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)
    assert code == 2 and err.count("\n") == 1 and "pred.json:1: id '1.png', label 'cat'" in err


# ---------------------------------------------------------------------------------------------------- fuzz: options
def test_an_empty_device_flag_is_refused_not_taken_for_no_flag(tmp_path, capsys):
    config = _task(tmp_path, '{"id": "1", "prediction": "a b"}\n', REFS)
    code, _, err = _run(["evaluate", config, "--no-checkpoint", "--device", ""], capsys)
    assert code == 2 and err.count("\n") == 1 and "`--device`" in err  # scored on the CPU before


@pytest.mark.parametrize("value", ["false", "0", '""', "[]"])
def test_task_options_that_are_a_falsy_non_mapping_are_refused(tmp_path, capsys, value):
    config = _task(tmp_path, '{"id": "1", "prediction": "a b"}\n', REFS, options=f"    options: {value}\n")
    code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)  # `or {}` made them no options
    assert code == 2 and err.count("\n") == 1 and "config.yaml: tasks[0] (QA): `options` must be a mapping" in err


_TEXT = ('{"id": 1, "prediction": "the cat"}\n', '{"id": 1, "references": ["the cat"]}\n')
_LABELS = ('{"id": 1, "prediction": 1}\n', '{"id": 1, "references": 2}\n')
_RUN = ('{"id": 1, "prediction": {"d1": 0.5}}\n', '{"id": 1, "references": {"d1": 1}}\n')


@pytest.mark.parametrize("metric, options, data", [
    ("cider", f"sigma: {BIG}", _TEXT),
    ("bleu", f"mode: nltk, weights: [{BIG}, 0.5]", _TEXT),
    ("bleu", f"smooth: floor, smooth_value: {BIG}", _TEXT),
    ("rouge", f"rouge_w_weight: {BIG}", _TEXT),
    ("rouge", "rouge_w_weight: .inf", _TEXT),
    ("codebleu", f"language: python, weights: [{BIG}, 1, 1, 1]", _TEXT),
    ("meteor", f"mode: nltk, alpha: {BIG}", _TEXT),
    ("wmd", f"embeddings: emb.txt, reg: {BIG}", _TEXT),
    ("ranking", f"relevance_level: {BIG}", _RUN),
    ("ranking", "relevance_level: .nan", _RUN),  # scored every query 0 silently
    ("f1", "num_classes: -1", _LABELS),  # RuntimeError from torch.zeros: F1 made its states before its checks
    ("f1", f"num_classes: 3, ignore_index: {BIG}", _LABELS),
])
def test_an_option_past_float64_or_int64_is_a_user_error(tmp_path, capsys, metric, options, data):
    # OverflowError (math.isfinite / float() / a tensor comparison of a 400-digit int) escaped main with a traceback
    (tmp_path / "p.jsonl").write_text(data[0], encoding="utf-8")
    (tmp_path / "r.jsonl").write_text(data[1], encoding="utf-8")
    (tmp_path / "emb.txt").write_text("2 2\nthe 0.1 0.2\ncat 0.3 0.1\n", encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text(f"tasks:\n  - {{name: T, metric: {metric}, predictions: p.jsonl, references: r.jsonl, "
                      f"options: {{{options}}}}}\n", encoding="utf-8")
    code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)
    assert code == 2 and err.count("\n") == 1 and ("c.yaml: tasks[0] (T)" in err or "task 'T'" in err)


@pytest.mark.parametrize("metric, options, expected", [
    ("clip_score", "pretrained: 3", "`pretrained` must be a tag"),  # a TypeError escaped main once the data were read
    ("clip_score", "scale: -1", "`scale` must be a finite number > 0"),
    ("kid", "gamma: -1", "`gamma` must be a finite number > 0"),
    ("fid", "feature: 7", "`feature` must be one of"),
    ("fid", "reset_real_features: 1", "`reset_real_features` must be a bool"),
    ("kid", "canonical_order: 'yes'", "`canonical_order` must be a bool"),
    ("clip_score", "clamp: 0", "`clamp` must be a bool"),
    ("clip_score", "reduction: max", "`reduction` must be one of"),
])
def test_image_options_are_checked_when_the_config_loads(tmp_path, capsys, metric, options, expected):
    # the image entries' check looked at image_root, batch_size, workers and decode only: the metric's own options
    # failed when the model was built, after the data were read, naming neither the config nor the task
    (tmp_path / "p.jsonl").write_text('{"id": 1, "prediction": "a.png"}\n', encoding="utf-8")
    (tmp_path / "r.jsonl").write_text('{"id": 1, "references": ["b.png"]}\n', encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text(f"tasks:\n  - {{name: T, metric: {metric}, predictions: p.jsonl, references: r.jsonl, "
                      f"options: {{{options}}}}}\n", encoding="utf-8")
    code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)
    assert code == 2 and err.count("\n") == 1 and "c.yaml: tasks[0] (T): invalid options" in err and expected in err


@pytest.mark.parametrize("metric, options", [
    ("f1", "num_classes: 3, average: none"),
    ("precision", "num_classes: 3, average: null"),
    ("recall", "num_classes: 3, multidim_average: samplewise"),
])
def test_label_options_without_one_task_score_are_refused_when_the_config_loads(tmp_path, capsys, metric, options):
    # they scored every sample, then failed with "metric 'f1' returned list", naming neither the config nor the task
    (tmp_path / "p.jsonl").write_text(_LABELS[0], encoding="utf-8")
    (tmp_path / "r.jsonl").write_text(_LABELS[1], encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text(f"tasks:\n  - {{name: T, metric: {metric}, predictions: p.jsonl, references: r.jsonl, "
                      f"options: {{{options}}}}}\n", encoding="utf-8")
    code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)
    assert code == 2 and err.count("\n") == 1 and "c.yaml: tasks[0] (T): invalid options" in err
    assert "not a task score" in err


@pytest.mark.parametrize("options", ["average: micro", "validate_args: false"])
def test_precision_without_num_classes_is_refused_when_the_config_loads(tmp_path, capsys, options):
    # micro: a TypeError (`target >= None`) once the data were read; validate_args: false: RuntimeError from reshape
    (tmp_path / "p.jsonl").write_text(_LABELS[0], encoding="utf-8")
    (tmp_path / "r.jsonl").write_text(_LABELS[1], encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text("tasks:\n  - {name: T, metric: precision, predictions: p.jsonl, references: r.jsonl, "
                      f"options: {{{options}}}}}\n", encoding="utf-8")
    code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)
    # the constructor's check ("Expected argument `num_classes` to be an integer larger than 1") or the entry's
    assert code == 2 and err.count("\n") == 1 and "c.yaml: tasks[0] (T)" in err and "`num_classes`" in err


# ------------------------------------------------------------------------------------------------- fuzz: report files
_HISTOGRAM = {"edges": [0.0, 0.5, 1.0], "counts": [1, 2]}


@pytest.mark.parametrize("task, suite", [
    ({"name": "T", "counts": 3, "details": 0.5, "files": "p.jsonl"}, None),  # AttributeError: no .get / .items
    ({"name": "T", "metric": ["bleu"], "higher_is_better": []}, None),  # unhashable registry / mark lookups
    ({"name": "T", "counts": {"missing_ids": 7}}, {"name": "s", "missing_tasks": 3}),  # not iterable
    ({"name": "T", "samples": {"histogram": {**_HISTOGRAM, "counts": [1, "x"]}, "worst": 5}}, None),
    ({"name": "T", "samples": {"histogram": {**_HISTOGRAM, "counts": 2}}}, None),
])
def test_report_of_a_malformed_json_report_is_a_user_error_or_renders(tmp_path, capsys, task, suite):
    # a report file of the right outline but wrong field types escaped main from the HTML renderer
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"tasks": [task], **({"suite": suite} if suite else {})}), encoding="utf-8")
    code, _, err = _run(["report", report, "--html", tmp_path / "r.html"], capsys)
    assert code == 0 or (code == 2 and err.count("\n") == 1 and f"{report}: not a gpumetrics JSON report" in err)
    assert (tmp_path / "r.html").exists() == (code == 0)


def test_report_of_a_json_report_saved_with_a_byte_order_mark_renders(tmp_path, capsys):
    # "Unexpected UTF-8 BOM": every other JSON reader of gpumetrics drops a leading BOM (a Windows editor's UTF-8-BOM)
    report = tmp_path / "r.json"
    report.write_bytes(b"\xef\xbb\xbf" + json.dumps({"name": "bom", "tasks": [{"name": "T", "score": 0.5}]}).encode())
    code, _, err = _run(["report", report, "--html", tmp_path / "r.html"], capsys)
    assert code == 0, err
    assert "<title>gpumetrics · bom</title>" in (tmp_path / "r.html").read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------------------- fuzz: checkpoints
def _lone_surrogate_in_the_name(saved):
    return {"finished": [{**saved["finished"][0], "name": "Q\ud800A"}]}  # the report's UTF-8 write failed


@pytest.mark.parametrize("changes", [
    {"finished": [{"name": "QA"}]},  # TaskResult(**result): TypeError
    {"finished": 5},  # not iterable
    {"task": "1"},  # range("1", …): TypeError
    {"metric": [1]},  # load_state_dict: TypeError
    {"seconds": None},
    {"done": 3, "metric": {}},  # past the 2 samples of task QA2's shard: resumed into an empty remainder
    _lone_surrogate_in_the_name,
])
def test_a_checkpoint_with_the_run_s_fingerprint_but_other_types_is_refused(tmp_path, capsys, monkeypatch, changes):
    from gpumetrics.harness import runner

    preds = '{"id": "1", "prediction": "a b"}\n{"id": "2", "prediction": "c"}\n'
    config = _task(tmp_path, preds, REFS)
    config.write_text(config.read_text(encoding="utf-8") + "  - {name: QA2, metric: bleu, predictions: preds.jsonl, "
                      "references: refs.jsonl}\n", encoding="utf-8")
    evaluate_task = runner._Run.evaluate_task

    def interrupted(self, index, task, resume=None, opened=None):
        if index == 1:
            raise KeyboardInterrupt
        return evaluate_task(self, index, task, resume, opened)

    monkeypatch.setattr(runner._Run, "evaluate_task", interrupted)
    argv = ["evaluate", config, "--checkpoint-dir", tmp_path / "ck", "-o", tmp_path / "r.json"]
    assert _run(argv, capsys)[0] == 130
    monkeypatch.setattr(runner._Run, "evaluate_task", evaluate_task)
    (checkpoint,) = (tmp_path / "ck").glob("*.pt")
    saved = torch.load(checkpoint, weights_only=True)
    changes = changes(saved) if callable(changes) else changes
    torch.save({**saved, **changes}, checkpoint)  # the fingerprint still matches the run
    code, _, err = _run([*argv, "--resume"], capsys)
    assert code == 2 and err.count("\n") == 1 and "not a gpumetrics checkpoint" in err and str(checkpoint) in err
    assert not (tmp_path / "r.json").exists()


def test_score_checks_options_as_a_config_task_is_checked(tmp_path, capsys):
    # `score` built the metric without the catalog's check: precision without num_classes and validate_args=false
    # escaped main as a RuntimeError from torchmetrics' reshape
    (tmp_path / "a.txt").write_text("1\n2\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("0\n2\n", encoding="utf-8")
    code, _, err = _run(["score", "-m", "precision", "--opt", "validate_args=false", "-r", tmp_path / "a.txt",
                         tmp_path / "b.txt"], capsys)
    assert code == 2 and err.count("\n") == 1 and "`num_classes` is required" in err


# ---------------------------------------------------------------------------------------------------- fuzz: images
@pytest.mark.parametrize("command", ["fid", "kid"])
def test_an_undecodable_image_in_a_worker_process_is_one_line_naming_the_file(tmp_path, capsys, command):
    # the DataLoader re-raised the worker's ValueError with the worker's whole traceback pasted into its message
    from PIL import Image

    for folder, count in (("real", 2), ("gen", 3)):
        (tmp_path / folder).mkdir()
        for i in range(count):
            Image.new("RGB", (8, 8), (40 * i, 0, 0)).save(tmp_path / folder / f"{i}.png")
    (tmp_path / "gen" / "9.png").write_bytes(b"")
    kid = ["--subsets", "2", "--subset-size", "2"] if command == "kid" else []
    code, _, err = _run([command, tmp_path / "real", tmp_path / "gen", "--weights", "random", "--dims", "64",
                         "--no-cache", "--progress", "off", "--device", "cpu", "--workers", "2", "--batch-size", "1",
                         *kid], capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err and "worker" not in err
    assert err.startswith(f"gpumetrics {command}: error: image file '{tmp_path / 'gen' / '9.png'}' cannot be decoded")


_NO_USER = "~no_such_user_here"


@pytest.mark.parametrize("where", ["predictions", "references", "fid weights", "fid --weights", "fid --cache-dir",
                                   "image path"])
def test_a_path_under_an_unknown_user_s_home_is_a_file_not_found(tmp_path, capsys, monkeypatch, where):
    # Path.expanduser raised RuntimeError("Could not determine home directory.") past main for `~nobody/x`
    from PIL import Image

    monkeypatch.chdir(tmp_path)  # `--cache-dir ~nobody` is a folder of that name here, as the shell would make it

    (tmp_path / "img").mkdir()
    for i in range(2):
        Image.new("RGB", (8, 8), (90 * i, 0, 0)).save(tmp_path / "img" / f"{i}.png")
    if where.startswith("fid -"):
        option = ["--weights", f"{_NO_USER}/w.pth"] if where == "fid --weights" else ["--weights", "random", "--dims",
                                                                                       "64", "--cache-dir", _NO_USER]
        code, _, err = _run(["fid", tmp_path / "img", tmp_path / "img", "--device", "cpu", "--progress", "off",
                             "--workers", "0", *option], capsys)
        assert code == (2 if where == "fid --weights" else 0), err
        assert where != "fid --weights" or f"'{_NO_USER}/w.pth' does not exist" in err
        return
    image = where in ("fid weights", "image path")
    prediction = f"{_NO_USER}/0.png" if where == "image path" else "0.png"
    value = prediction if image else "a"
    (tmp_path / "p.jsonl").write_text(f'{{"id": 1, "prediction": "{value}"}}\n', encoding="utf-8")
    (tmp_path / "r.jsonl").write_text(f'{{"id": 1, "references": ["{"1.png" if image else "a"}"]}}\n', encoding="utf-8")
    data = {"predictions": f"{_NO_USER}/p.jsonl", "references": "r.jsonl"} if where == "predictions" else (
        {"predictions": "p.jsonl", "references": f"{_NO_USER}/r.jsonl"} if where == "references" else
        {"predictions": "p.jsonl", "references": "r.jsonl"})
    options = {"fid weights": f"{{weights: '{_NO_USER}/w.pth'}}",
               "image path": "{weights: random, feature: 64, workers: 0, image_root: img}"}.get(where, "{}")
    config = tmp_path / "c.yaml"
    metric = "fid" if image else "bleu"
    config.write_text(f"tasks:\n  - {{name: T, metric: {metric}, predictions: '{data['predictions']}', "
                      f"references: '{data['references']}', options: {options}}}\n", encoding="utf-8")
    code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)
    assert code == 2 and err.count("\n") == 1 and _NO_USER in err, err
    assert "not found" in err or "does not exist" in err


def test_an_image_path_too_long_for_the_file_system_names_the_sample(tmp_path, capsys):
    # is_file() raised ENAMETOOLONG: "[Errno 36] File name too long" reached the user naming neither task nor sample
    from PIL import Image

    Image.new("RGB", (8, 8)).save(tmp_path / "0.png")
    (tmp_path / "p.jsonl").write_text(f'{{"id": 1, "prediction": "{"a" * 5000}.png"}}\n', encoding="utf-8")
    (tmp_path / "r.jsonl").write_text('{"id": 1, "references": ["0.png"]}\n', encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text("tasks:\n  - {name: T, metric: fid, predictions: p.jsonl, references: r.jsonl, "
                      "options: {weights: random, feature: 64, workers: 0}}\n", encoding="utf-8")
    code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)
    assert code == 2 and err.count("\n") == 1 and "task 'T'" in err and "prediction 0: unusable image path" in err


def test_a_clip_score_record_with_an_empty_reference_list_is_named(tmp_path, capsys):
    # `refs[0]` of [] raised IndexError past main
    from PIL import Image

    from tests.image.test_clip_score import TINY_OPEN_CLIP

    (tmp_path / "tiny.json").write_text(json.dumps(TINY_OPEN_CLIP), encoding="utf-8")
    for i in range(2):
        Image.new("RGB", (8, 8), (90 * i, 0, 0)).save(tmp_path / f"{i}.png")
    (tmp_path / "p.jsonl").write_text('{"id": 1, "prediction": "0.png"}\n{"id": 2, "prediction": "1.png"}\n',
                                      encoding="utf-8")
    (tmp_path / "r.jsonl").write_text('{"id": 1, "references": ["a cat"]}\n{"id": 2, "references": []}\n',
                                      encoding="utf-8")
    config = tmp_path / "c.yaml"
    model = tmp_path / "tiny.json"
    config.write_text("tasks:\n  - {name: T, metric: clip_score, predictions: p.jsonl, references: r.jsonl, options: "
                      f"{{backend: open_clip, model_name: '{model}', pretrained: random, workers: 0}}}}\n",
                      encoding="utf-8")
    code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)
    assert code == 2 and err.count("\n") == 1 and "task 'T'" in err and "references 1 hold no caption" in err


@pytest.mark.parametrize("field", ["image", "caption"])
def test_a_lone_surrogate_in_a_clip_score_record_is_refused_with_file_and_line(tmp_path, field):
    # read_field_records skipped the check every other reader makes: the caption was scored, the image "missing"
    from gpumetrics.harness.records import read_field_records

    path = tmp_path / "captions.jsonl"
    record = {"image": "a.png", "caption": "x"}
    path.write_text(json.dumps(record) + "\n" + json.dumps({**record, field: "b \ud800"}) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"captions.jsonl:2: .*lone surrogate"):
        read_field_records(path, ("image", "caption"), "E")


@pytest.mark.parametrize("content", [b"", b"not a checkpoint\n", "list"])
def test_an_open_clip_pretrained_file_that_is_no_checkpoint_is_a_user_error(tmp_path, capsys, content):
    # torch.load's UnpicklingError / EOFError and load_state_dict's RuntimeError escaped main from open_clip
    from PIL import Image

    from tests.image.test_clip_score import TINY_OPEN_CLIP

    (tmp_path / "tiny.json").write_text(json.dumps(TINY_OPEN_CLIP), encoding="utf-8")
    (tmp_path / "img").mkdir()
    Image.new("RGB", (8, 8)).save(tmp_path / "img" / "0.png")
    (tmp_path / "c.jsonl").write_text('{"image": "0.png", "caption": "a"}\n', encoding="utf-8")
    weights = tmp_path / "w.pt"
    if content == "list":
        torch.save([1, 2], weights)
    else:
        weights.write_bytes(content)
    code, _, err = _run(["clip-score", "--images", tmp_path / "img", "--captions", tmp_path / "c.jsonl", "--device",
                         "cpu", "--workers", "0", "--backend", "open_clip", "--model", tmp_path / "tiny.json",
                         "--pretrained", weights], capsys)
    assert code == 2 and err.count("\n") == 1 and f"`pretrained`: '{weights}' is not an open_clip checkpoint" in err


# ---------------------------------------------------------------------------------------------------- fuzz: stdin
@pytest.mark.parametrize("hypotheses", [[], ["-"]])
def test_score_with_stdin_closed_is_a_user_error(tmp_path, capsys, monkeypatch, hypotheses):
    # `gpumetrics score -m bleu -r refs.txt <&-`: sys.stdin is None, and `.isatty()` raised AttributeError past main
    refs = tmp_path / "refs.txt"
    refs.write_text("a b\n", encoding="utf-8")
    monkeypatch.setattr("sys.stdin", None)
    code, _, err = _run(["score", "-m", "bleu", "-r", refs, *hypotheses], capsys)
    assert code == 2 and err.count("\n") == 1 and "stdin is closed" in err


def test_evaluate_to_a_closed_stdout_is_refused_before_any_data_is_read(tmp_path, capsys, monkeypatch):
    # `gpumetrics evaluate c.yaml -o - >&-`: print() to a None sys.stdout dropped the report and the run exited 0
    config = _task(tmp_path, '{"id": "1", "prediction": "a b"}\n', REFS)
    monkeypatch.setattr("sys.stdout", None)
    code = cli.main(["evaluate", str(config), "-o", "-"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--output - writes to standard output, which is closed" in err


@pytest.mark.parametrize("argv", [
    ["score", "-m", "bleu", "-r", "{refs}", "{refs}"], ["list"], ["list", "--json"],
    ["fid", "{missing}", "{missing}"], ["kid", "{missing}", "{missing}"],
    ["clip-score", "--images", "{missing}", "--captions", "{missing}"],
])
def test_a_command_that_prints_its_result_refuses_a_closed_stdout(tmp_path, capsys, monkeypatch, argv):
    # `gpumetrics score … >&-`: the score went to a None sys.stdout and the command exited 0 (found by fuzzing);
    # refused before any work (the missing image folders are never read)
    refs = tmp_path / "refs.txt"
    refs.write_text("a b\n", encoding="utf-8")
    monkeypatch.setattr("sys.stdout", None)
    code = cli.main([a.format(refs=refs, missing=tmp_path / "missing") for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "standard output is closed" in err


# ---------------------------------------------------------------------------------------------------- fuzz: suites
def test_aij2022_visual_qa_without_ruwordnet_is_one_line_naming_synonyms(tmp_path, capsys, monkeypatch):
    # the suite's VisualQA (METEOR mode aij2022-vqa) let RuWordNetSynonyms' ImportError escape main; the s_visual_qa
    # entry already said it as a FileNotFoundError naming `synonyms`
    from tests.helpers.imports import refuse_import

    refuse_import(monkeypatch, "ruwordnet")
    (tmp_path / "gt.json").write_text('{"v1": [{"type": "text", "content": ["2"]}]}', encoding="utf-8")
    (tmp_path / "pr.json").write_text('{"v1": [{"type": "text", "content": "2"}]}', encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text("suite: aij2022\ntasks:\n  - {name: VisualQA, references: gt.json, predictions: pr.json}\n",
                      encoding="utf-8")
    code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)
    assert code == 2 and err.count("\n") == 1 and "`synonyms` is null, i.e. the RuWordNet database" in err


def test_an_image_name_too_long_for_the_file_system_in_a_suite_image_task(tmp_path):
    # is_file() raised "[Errno 36] File name too long" through ImageGeneration / ImageCaptioning, naming no sample;
    # with missing_image="zero" (the suite's) such a sample is a failed one, as a missing file is
    from gpumetrics.suites.image import image_paths_under_root, split_missing_images

    (tmp_path / "0.png").write_bytes(b"")
    names = ["0.png", "a" * 3000 + ".png"]
    assert split_missing_images(names, tmp_path, "zero") == ([0], ["0.png"])
    with pytest.raises(ValueError, match=r"`images\[1\]`: file '.*' does not exist"):
        image_paths_under_root(names, tmp_path)


def test_clip_score_record_naming_an_image_too_long_for_the_file_system_is_a_missing_image(tmp_path, capsys):
    # is_file() raised "[Errno 36] File name too long", naming neither the captions file nor the count missing
    (tmp_path / "img").mkdir()
    (tmp_path / "c.jsonl").write_text(json.dumps({"image": "a" * 3000 + ".png", "caption": "x"}) + "\n",
                                      encoding="utf-8")
    code, _, err = _run(["clip-score", "--images", tmp_path / "img", "--captions", tmp_path / "c.jsonl", "--device",
                         "cpu"], capsys)
    assert code == 2 and err.count("\n") == 1 and f"1 image file(s) of {tmp_path / 'c.jsonl'} are missing" in err


# ------------------------------------------------------------------------------------------------- fuzz: endless inputs
_ENDLESS_INPUTS = r'''
import contextlib, io, json, resource, sys
from pathlib import Path
from gpumetrics import cli
import gpumetrics.harness.config, gpumetrics.harness.records, gpumetrics.harness.html  # imported before the limit
import torch  # noqa: F401
tmp = Path(sys.argv[1])
# a reader that reads /dev/zero to its end fails with MemoryError within 1 GiB instead of taking the machine's memory
used = int(Path("/proc/self/statm").read_text().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (used + (1 << 30), resource.getrlimit(resource.RLIMIT_AS)[1]))
results = {}
for name, argv, stdin in [
    ("score hypotheses", ["score", "-m", "bleu", "-r", f"{tmp}/refs.txt", "/dev/zero"], None),
    ("score references", ["score", "-m", "bleu", "-r", "/dev/urandom", f"{tmp}/refs.txt"], None),
    ("score stdin", ["score", "-m", "bleu", "-r", f"{tmp}/refs.txt"], "/dev/zero"),
    ("evaluate config", ["evaluate", "/dev/zero", "--no-checkpoint"], None),
    ("report", ["report", "/dev/zero", "--html", f"{tmp}/r.html"], None),
    ("clip-score captions", ["clip-score", "--images", str(tmp), "--captions", "/dev/zero", "--device", "cpu"], None),
]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        if stdin is not None:
            sys.stdin = open(stdin)
        try:
            code = cli.main(argv)
        except BaseException as exc:  # MemoryError: the run fails, the test names the case
            code = type(exc).__name__
    results[name] = [code, err.getvalue()]
print(json.dumps(results))
'''


def test_a_device_that_never_ends_is_refused_not_read_into_memory(tmp_path):
    # `score -r refs.txt /dev/zero`, `< /dev/zero`, `evaluate /dev/zero`, `report /dev/zero`, `clip-score --captions
    # /dev/zero` read until MemoryError (a traceback, after taking all memory); /dev/urandom likewise. Run in a child
    # whose address space is bounded, so that a regression fails fast instead of exhausting the machine.
    import subprocess
    import sys

    (tmp_path / "refs.txt").write_text("a b\n", encoding="utf-8")
    child = subprocess.run([sys.executable, "-c", _ENDLESS_INPUTS, str(tmp_path)], capture_output=True, text=True,
                           timeout=120)
    assert child.returncode == 0, child.stderr[-2000:]
    for name, (code, err) in json.loads(child.stdout).items():
        device = "/dev/urandom" if name == "score references" else "stdin" if name == "score stdin" else "/dev/zero"
        assert code == 2 and err.count("\n") == 1 and f"{device} is a device (character device)" in err.replace(
            f"{device}: is", f"{device} is"), (name, code, err)


def test_a_socket_as_input_is_said_to_be_one(tmp_path, capsys):
    # "[Errno 6] No such device or address" named the path but not what is wrong with it
    import socket

    refs = tmp_path / "refs.txt"
    refs.write_text("a b\n", encoding="utf-8")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "s"))
    try:
        for argv in (["score", "-m", "bleu", "-r", refs, tmp_path / "s"], ["report", tmp_path / "s", "--html",
                                                                             tmp_path / "r.html"]):
            code, _, err = _run(argv, capsys)
            assert code == 2 and err.count("\n") == 1 and f"{tmp_path / 's'} is a socket, not a file" in err
    finally:
        server.close()


@pytest.mark.parametrize("preds, refs, start, end", [
    ('{"id": "%s", "prediction": "a"}\n{"id": "%s", "prediction": "b"}\n', REFS, "preds.jsonl:2: duplicate id 'xxx",
     "xxx' (first seen on line 1)"),
    ('{"id": "%s", "prediction": "a"}\n', REFS, "preds.jsonl:1: unknown id 'xxx", "refs.jsonl"),
    ('{"id": ["%s"], "prediction": "a"}\n', REFS, "preds.jsonl:1: `id` must be a string or an integer, got list",
     "xxx']"),
    ('{"id": "1", "%s": "a"}\n', REFS, "preds.jsonl:1: record has no 'prediction' key (keys: 'id', 'xxx", "xxx')"),
])
def test_a_megabyte_id_or_key_in_an_error_is_cut_in_the_middle(tmp_path, capsys, preds, refs, start, end):
    # the one-line error quoted the hostile id or key whole: a line of a megabyte on the terminal
    big = "x" * 1_000_000
    config = _task(tmp_path, preds.replace("%s", big), refs)
    code, _, err = _run(["evaluate", config, "--no-checkpoint"], capsys)
    assert code == 2 and err.count("\n") == 1 and len(err) < 2100, len(err)
    assert start in err and err.rstrip("\n").endswith(end) and "characters left out" in err, err[:300]
