"""The organisers' file formats (gpumetrics/suites/formats.py): what each reader accepts, the quirks it keeps, and the
DataError — naming file, line and id — for a wrong file; plus the suite's config rules (user options, hidden slots)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpumetrics.harness.config import ConfigError, parse_config
from gpumetrics.harness.records import DataError
from gpumetrics.suites.formats import FORMATS, get_format
from gpumetrics.harness.runner import evaluate


def _write(path: Path, value) -> Path:
    # one record per line, so that errors can name the line
    items = [f"{json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}" for k, v in value.items()]
    path.write_text("{\n" + ",\n".join(items) + "\n}\n", encoding="utf-8")
    return path


def _text(answer):
    return [{"type": "text", "content": answer}]


def _run(tmp_path, suite, task, true, pred, **options):
    item = {"name": task, "references": str(_write(tmp_path / "true.json", true)),
            "predictions": str(_write(tmp_path / "pred.json", pred))}
    if options:
        item["options"] = options
    return evaluate(parse_config({"suite": suite, "tasks": [item]}, tmp_path / "c.yaml"), device="cpu").tasks[0]


# ---------------------------------------------------------------------------------------------------- quirks kept
def test_aij2022_first_text_element_answers_and_missing_prediction_scores_zero(tmp_path):
    true = {"a": _text(["три кошки"]), "b": _text([""]), "c": _text(["Москва"])}
    pred = {"a": [{"type": "image", "content": "x.png"}, {"type": "text", "content": "3 кошки"},
                  {"type": "text", "content": "нет"}],
            "c": _text("Москва")}
    result = _run(tmp_path, "aij2022", "TextQA", true, pred)
    # "b" is missing: 0 in the mean even though "" against the gold "" would score 1
    assert result.score == pytest.approx(2 / 3, abs=1e-15)
    assert (result.n, result.missing, result.missing_ids) == (3, 1, ["b"])
    assert result.details["mean_over_predicted"] == 1.0


def test_aij2022_choice_letter_is_searched_in_the_raw_prediction(tmp_path):
    true = {"a": _text(["b"]), "b": _text(["b"])}
    pred = {"a": _text("Ответ: b"), "b": _text("Ответ: B")}  # "B" is no choice letter for the script
    result = _run(tmp_path, "aij2022", "MathQA", true, pred)
    assert result.score == 0.5


def test_aij2021_htr_missing_prediction_is_the_empty_string(tmp_path):
    result = _run(tmp_path, "aij2021", "HTR", {"0.png": "", "1.png": "a", "2.png": "b"}, {"1.png": "a"})
    assert result.score == pytest.approx(2 / 3) and result.missing_ids == ["0.png", "2.png"]


def test_aij2021_zsod_queries_the_ground_truth_labels_and_reads_empty_box_lists(tmp_path):
    box = [0, 0, 10, 10]
    true = {"1.jpg": {"cat": [box], "dog": []}}
    pred = {"1.jpg": {"cat": [box, box], "dog": [[]], "bird": [box]}}  # duplicate once, [[]] = none, bird ignored
    result = _run(tmp_path, "aij2021", "ZeroShotDetection", true, pred)
    assert result.score == 1.0 and (result.details["tp"], result.details["fp"], result.details["fn"]) == (1, 0, 0)


def test_aij2021_vqa_normalises_the_prediction_only(tmp_path):
    true = {"0": {"answer": "2", "question_id": 1, "lang": "en"}, "1": {"answer": "3", "question_id": 2, "lang": "ru"},
            "2": {"answer": "the dog", "question_id": 3, "lang": "en"}}
    pred = {"0": "Two.", "1": "Трёх!", "2": "the dog"}  # the gold "the dog" is raw: the normalised "dog" misses
    assert _run(tmp_path, "aij2021", "VQA", true, pred).score == pytest.approx(2 / 3)


def test_aij2022_visual_qa_is_the_official_meteor(tmp_path):
    from gpumetrics.functional import meteor_score

    synonyms = tmp_path / "syn.tsv"
    synonyms.write_text("кот\tкошк\n", encoding="utf-8")
    golds = {"a": ["2"], "b": ["кот", "кошка"], "c": ["красный"]}
    answers = {"a": "две", "b": "кошки", "c": "синий"}
    true = {k: _text(v) for k, v in golds.items()}
    pred = {k: [{"type": "image", "content": "q.png"}, *_text(v)] for k, v in answers.items()}
    result = _run(tmp_path, "aij2022", "VisualQA", true, pred, synonyms=str(synonyms))
    expected = meteor_score(list(answers.values()), list(golds.values()), mode="aij2022-vqa", synonyms=str(synonyms))
    assert result.score == pytest.approx(float(expected), abs=1e-15) and result.metric == "meteor"


# ---------------------------------------------------------------------------------------------------- wrong files
WRONG = [
    # (suite, task, true, pred, message regex) — the message names the file, the line and the id
    ("aij2022", "TextQA", {"a": _text(["x"]), "b": _text(["y"])},
     {"a": _text("x"), "b": [{"type": "image", "content": "1.png"}]},
     r"pred\.json:3: id 'b': no element of type 'text'"),
    ("aij2022", "TRitW", {"a": _text(["x"])}, {"a": []}, r"pred\.json:2: id 'a': no element of type 'text'"),
    ("aij2022", "MathQA", {"a": _text("x")}, {"a": _text("x")}, r"true\.json:2: id 'a': the gold content must be"),
    ("aij2022", "TextQA", {"a": _text(["x"])}, {"a": _text("x"), "z": _text("x")}, r"pred\.json:3: id 'z' is not in"),
    ("aij2022", "VisualQA", {"a": _text(["x"]), "b": _text(["y"])}, {"a": _text("x")},
     r"pred\.json: 1 of 2 ids .* have no prediction: 'b' \(line 3\)"),
    ("aij2021", "ZeroShotDetection", {"1.jpg": {"cat": []}}, {"1.jpg": {}},
     r"pred\.json:2: id '1\.jpg': no prediction for the queried label 'cat'"),
    ("aij2021", "ZeroShotDetection", {"1.jpg": {"cat": []}}, {"1.jpg": {"cat": [[1, 2, 3]]}},
     r"pred\.json:2: id '1\.jpg', label 'cat': expected a list of \[x, y, w, h\]"),
    ("aij2021", "ZeroShotDetection", {"1.jpg": {"cat": []}, "2.jpg": {}}, {"1.jpg": {"cat": []}},
     r"ids .* have no prediction: '2\.jpg' \(line 3\)"),
    ("aij2021", "VQA", {"0": {"answer": "x", "lang": "de"}}, {"0": "x"}, r"true\.json:2: id '0': \"lang\" must be"),
    ("aij2021", "VQA", {"0": {"answer": "x", "lang": "en"}}, {"0": ["x"]},
     r"pred\.json:2: id '0': the prediction must"),
    ("aij2021", "HTR", {"0": "x"}, {"0": 5}, r"pred\.json:2: id '0': the prediction must be a string"),
    ("aij2021", "Code2code", {"0": "x", "1": "y"}, {"0": "x"}, r"have no prediction: '1' \(line 3\)"),
]


@pytest.mark.parametrize("suite,task,true,pred,message", WRONG)
def test_wrong_file_is_a_data_error_naming_file_line_and_id(tmp_path, suite, task, true, pred, message):
    with pytest.raises(DataError, match=message):
        _run(tmp_path, suite, task, true, pred)


def test_a_prediction_without_text_names_a_few_element_types_cut_short(tmp_path):
    # every element's type went into the one-line error whole: 20000 elements, or one type of 100 KB, made a line of
    # hundreds of kilobytes
    many = [{"type": f"image{i}", "content": "x"} for i in range(20000)]
    huge = [{"type": "b" * 100_000, "content": "x"}, {"type": {"a": ["c" * 100_000]}, "content": "x"}]
    for elements, shown in ((many, "image0, image1, image2, image3, image4, … (20000 elements)"),
                            (huge, "b" * 40 + ", {'a': [")):
        with pytest.raises(DataError, match=r"pred\.json:2: id 'a': no element of type 'text'") as error:
            _run(tmp_path, "aij2022", "TextQA", {"a": _text(["x"])}, {"a": elements})
        assert shown in str(error.value) and len(str(error.value)) < 400, str(error.value)[:500]


def test_an_array_of_records_is_not_the_official_layout(tmp_path):
    (tmp_path / "pred.json").write_text('[{"id": "0", "prediction": "x"}]')
    _write(tmp_path / "true.json", {"0": "x"})
    with pytest.raises(DataError, match=r"pred\.json:1: the official format is one JSON object"):
        get_format("aij2021-htr").read(tmp_path / "pred.json", tmp_path / "true.json", {})


def test_every_format_is_documented():
    assert set(FORMATS) == {"coco", "aij2021-htr", "aij2021-c2c", "aij2021-zsod", "aij2021-vqa", "aij2022-text",
                            "aij2022-vqa", "aij2022-captioning", "aij2022-generation"}
    with pytest.raises(ValueError, match="unknown format 'x'; known: aij2021-c2c"):
        get_format("x")


# ---------------------------------------------------------------------------------------------------- config rules
def test_suite_config_takes_the_files_hidden_scores_and_only_the_user_options(tmp_path):
    _write(tmp_path / "t.json", {"a": _text(["x"])})
    _write(tmp_path / "p.json", {"a": _text("x")})
    files = {"references": "t.json", "predictions": "p.json"}

    def parse(*tasks):
        return parse_config({"suite": "aij2022", "tasks": list(tasks)}, tmp_path / "c.yaml")

    config = parse({"name": "TextQA", **files}, {"name": "Hidden3", "score": 1})
    assert [t.score for t in config.tasks] == [None, 1.0] and config.tasks[0].format == "aij2022-text"
    report = evaluate(config, device="cpu")
    assert report.suite["score"] == 2.0
    with pytest.raises(ConfigError, match=r"Hidden3\).*number in \[0, 1\]"):
        parse({"name": "Hidden3", "score": 1.5})
    with pytest.raises(ConfigError, match="takes only `score`"):
        parse({"name": "Hidden3", "score": 0.5, **files})
    with pytest.raises(ConfigError, match="`score` is for the hidden-task slots"):
        parse({"name": "TextQA", "score": 0.5, **files})
    with pytest.raises(ConfigError, match="options of suite 'aij2022' are fixed"):
        parse({"name": "TextQA", "options": {"preset": "squad"}, **files})
    with pytest.raises(ConfigError, match="a config may set only inputs, synonyms, clip_backend"):
        parse({"name": "ImageCaptioning", "options": {"image_root": "."}, **files})
    # what the refusal of a path leaving the folder advises (allow_outside_root), and the decoding processes: settable
    (tmp_path / "real").mkdir()
    # (a CLIP model whose files are found: a config naming missing model files fails when it loads)
    clip = {"clip_backend": "open_clip", "clip_model": "ViT-B-32", "clip_pretrained": "random"}
    for name, needed in (("ImageCaptioning", {}), ("ImageGeneration", {"real": "real"})):
        options = {"allow_outside_root": True, "workers": 2, **clip, **needed}
        task = parse({"name": name, "options": options, **files}).tasks[0]
        assert task.options["allow_outside_root"] is True and task.options["workers"] == 2
    with pytest.raises(ConfigError, match="has no task 'Hidden7'; its tasks: .*Hidden6"):
        parse({"name": "Hidden7", "score": 0.5})
    with pytest.raises(ConfigError, match="reads 'TextQA' in format 'aij2022-text', not 'records'"):
        parse({"name": "TextQA", "format": "records", **files})


def test_captioning_input_with_an_empty_image_path_has_no_image(tmp_path):
    """Their script opens the image folder itself (image_folder + ""), fails and scores CLIP 0: no image here too,
    where the metric refused the empty path naming only "references 0" (found by fuzzing)."""
    ask = {"type": "text", "content": "Опиши"}
    inputs = _write(tmp_path / "input.json", {"a": [ask, {"type": "image", "content": ""}],
                                              "b": [ask, {"type": "image", "content": "images/b.png"}]})
    gold, pred = _write(tmp_path / "gt.json", {"a": _text(["x"]), "b": _text(["y"])}), \
        _write(tmp_path / "pred.json", {"a": _text("x"), "b": _text("y")})
    data, _ = get_format("aij2022-captioning").read(pred, gold, {"inputs": str(inputs)})
    assert [r["image"] for r in data.references] == [None, "images/b.png"]
