"""``gpumetrics evaluate configs/coco_caption.yaml``: COCO results / annotations files read directly, the COCOEvalCap
table in the report, data errors naming file and image id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpumetrics import cli
from gpumetrics.functional import coco_caption_scores
from gpumetrics.harness.config import ConfigError, load_config, parse_config
from gpumetrics.harness.records import DataError, read_coco
from gpumetrics.text.coco import COCO_KEYS

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "coco_caption.yaml"
EXAMPLE = ROOT / "examples" / "coco"

# pycocoevalcap 1.2 COCOEvalCap.evaluate() (Java PTB tokenizer, METEOR 1.5 jar; SPICE left out) on the shipped
# example files, with params['image_id'] = cocoRes.getImgIds() — tests/text/test_coco_caption.py's run_cocoevalcap
COCOEVALCAP_EXAMPLE = {
    "Bleu_1": 0.8799333561330728, "Bleu_2": 0.64319427746429, "Bleu_3": 0.427244416371055,
    "Bleu_4": 0.19598019207820022, "METEOR": 0.3366177256542998, "ROUGE_L": 0.6089170396785444,
    "CIDEr": 1.437155280496155,
}


def test_config_prints_the_cocoevalcap_table(tmp_path, capsys):
    report = tmp_path / "coco.json"
    assert cli.main(["evaluate", str(CONFIG), "--output", str(report), "--batch-size", "4"]) == 0
    out = capsys.readouterr().out
    for key in COCO_KEYS:
        assert key in out and f"{COCOEVALCAP_EXAMPLE[key]:.4f}" in out
    task = json.loads(report.read_text(encoding="utf-8"))["tasks"][0]
    assert task["metric"] == "coco_caption" and task["counts"]["n"] == 11  # image 112 has no result: not evaluated
    assert task["counts"]["not_evaluated"] == 1 and task["counts"]["missing_predictions"] == 0
    assert task["score"] == pytest.approx(COCOEVALCAP_EXAMPLE["CIDEr"], abs=1e-9)
    assert list(task["details"]) == list(COCO_KEYS)
    for key, value in COCOEVALCAP_EXAMPLE.items():
        assert abs(task["details"][key] - value) <= 1e-9, key


def test_reader_follows_cocoevalcap_image_order():
    data = read_coco(EXAMPLE / "results_example.json", EXAMPLE / "captions_example.json")
    annotations = json.loads((EXAMPLE / "captions_example.json").read_text(encoding="utf-8"))
    assert data.ids == [str(image["id"]) for image in annotations["images"]][:11] and data.missing == []
    assert data.not_evaluated == ["112"]
    assert data.references[0] == [a["caption"] for a in annotations["annotations"] if a["image_id"] == 101]
    values = coco_caption_scores(data.predictions, data.references)
    assert all(abs(values[key].item() - COCOEVALCAP_EXAMPLE[key]) <= 1e-9 for key in COCO_KEYS)


def _files(tmp_path: Path, results, annotations) -> tuple[Path, Path]:
    res, ann = tmp_path / "results.json", tmp_path / "captions_val.json"
    res.write_text(results if isinstance(results, str) else json.dumps(results, indent=1), encoding="utf-8")
    ann.write_text(annotations if isinstance(annotations, str) else json.dumps(annotations), encoding="utf-8")
    return res, ann


_ANNOTATIONS = {"images": [{"id": 1}, {"id": 2}, {"id": 3}],
                "annotations": [{"image_id": 1, "caption": "a dog"}, {"image_id": 2, "caption": "a cat"}]}


@pytest.mark.parametrize("results, annotations, bad, words", [
    ([{"image_id": 1, "caption": "a"}, {"image_id": 9, "caption": "b"}], _ANNOTATIONS, "results",
     ["unknown image_id 9", ":6"]),
    ([{"image_id": 3, "caption": "a"}], _ANNOTATIONS, "results", ["image_id 3 has no reference caption"]),
    ([{"image_id": 1, "caption": 5}], _ANNOTATIONS, "results", ["image_id 1", "`caption` must be a string"]),
    ([{"image_id": 1, "caption": "a"}, {"image_id": 1, "caption": "b"}], _ANNOTATIONS, "results",
     ["second result for image_id 1"]),
    ([{"image_id": 1.5, "caption": "a"}], _ANNOTATIONS, "results", ["`image_id` must be an integer or a string"]),
    ([{"image_id": 1}], _ANNOTATIONS, "results", ["`image_id` and `caption`"]),
    ([], _ANNOTATIONS, "results", ["no result"]),
    ({"image_id": 1, "caption": "a"}, _ANNOTATIONS, "results", ["JSON array"]),
    ([{"image_id": 1, "caption": "a"}], {"images": []}, "captions_val", ["no `annotations` list"]),
    ([{"image_id": 1, "caption": "a"}], {"annotations": [{"image_id": 1, "caption": None}]}, "captions_val",
     ["annotations[0] (image_id 1)", "`caption` must be a string"]),
    ([{"image_id": 2, "caption": "a"}], {"annotations": [{"image_id": 1, "caption": "x"}]}, "captions_val",
     ["unknown image_id 2"]),
    # json.load keeps the last of two keys: the first list of captions would be dropped silently
    ([{"image_id": 2, "caption": "y"}], '{"annotations": [{"image_id": 1, "caption": "x"}],\n'
     ' "annotations": [{"image_id": 2, "caption": "y"}]}', "captions_val", ["a second `annotations` key", ":2"]),
    ([{"image_id": 2, "caption": "y"}], '{"images": [{"id": 1}], "images": [{"id": 2}], "annotations": '
     '[{"image_id": 2, "caption": "y"}]}', "captions_val", ["a second `images` key"]),
    # 1 and "1" are two images to COCOEvalCap; keyed by text here, their captions would be merged
    ([{"image_id": 1, "caption": "a dog"}], {"annotations": [{"image_id": 1, "caption": "a dog"},
                                                             {"image_id": "1", "caption": "a cat"}]},
     "captions_val", ["annotations[1]: image_id '1'", "annotations[0]'s image_id 1", "one type"]),
    ([{"image_id": 1, "caption": "a dog"}], {"images": [{"id": "1"}], "annotations": [{"image_id": 1, "caption": "a"}]},
     "captions_val", ["images[0]: image_id '1'", "annotations[0]'s image_id 1"]),
])
def test_data_errors_name_file_and_image(tmp_path, results, annotations, bad, words):
    res, ann = _files(tmp_path, results, annotations)
    with pytest.raises(DataError) as error:
        read_coco(res, ann)
    message = str(error.value)
    named = res if "unknown" in " ".join(words) or bad == "results" else ann
    assert str(named) in message, message
    for word in words:
        assert word in message, message


def test_cli_data_error_is_one_line_exit_2(tmp_path, capsys):
    res, ann = _files(tmp_path, [{"image_id": 7, "caption": "a"}], _ANNOTATIONS)
    config = tmp_path / "coco.yaml"
    config.write_text(json.dumps({"tasks": [{"name": "C", "metric": "coco_caption", "format": "coco",
                                             "predictions": res.name, "references": ann.name}]}), encoding="utf-8")
    assert cli.main(["evaluate", str(config)]) == 2
    err = capsys.readouterr().err
    assert "unknown image_id 7" in err and str(res) in err and len(err.strip().splitlines()) == 1


def test_config_format_is_checked(tmp_path):
    res, ann = _files(tmp_path, [{"image_id": 1, "caption": "a"}], _ANNOTATIONS)
    task = {"name": "C", "metric": "coco_caption", "predictions": res.name, "references": ann.name}
    with pytest.raises(ConfigError, match="`format` must be one of records, coco"):
        parse_config({"tasks": [{**task, "format": "cocoeval"}]}, tmp_path / "c.yaml")
    with pytest.raises(ConfigError, match="reduction"):
        parse_config({"tasks": [{**task, "format": "coco", "options": {"reduction": "none"}}]}, tmp_path / "c.yaml")
    assert load_config(CONFIG).tasks[0].format == "coco"
