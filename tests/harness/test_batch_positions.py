"""A metric's error about one sample of a batch names that sample's id: the error carries its batch position as data
(:mod:`gpumetrics.core.positions`), which the runner reads — it no longer searches the message for ``name[k]``, so a
bracketed number that is not a position (a file ``img[3].png``) cannot name a wrong sample.

Each raise site a record can reach is fed through the runner with the bad sample at a position other than 0; the
sites that the record reader guards (text tasks: every prediction and reference is a string, no lone surrogate)
are checked for their tag directly."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch
from PIL import Image

from gpumetrics.core.checks import as_reference_lists, as_text_list
from gpumetrics.core.positions import at_position, batch_position
from gpumetrics.harness.config import parse_config
from gpumetrics.harness.runner import TaskError, evaluate
from tests.helpers.image_files import save_random_images

IDS = ["a", "b", "c", "d", "e"]


def _records(folder: Path, predictions: dict, references: dict) -> None:
    with open(folder / "p.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps({"id": i, "prediction": p}) + "\n" for i, p in predictions.items())
    with open(folder / "r.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps({"id": i, "references": r}) + "\n" for i, r in references.items())


def _rejected(folder: Path, metric: str, predictions: dict, references: dict, options: dict = None,
              batch_size: int = 2) -> str:
    """The runner's message for the task; with ``batch_size`` 2 the sample of id ``d`` is position 1 of the second
    batch."""
    _records(folder, predictions, references)
    task = {"name": "t", "metric": metric, "options": options or {}, "predictions": "p.jsonl",
            "references": "r.jsonl"}
    with pytest.raises(TaskError) as caught:
        evaluate(parse_config({"tasks": [task]}, folder / "c.yaml"), batch_size=batch_size)
    return str(caught.value)


def _named(message: str, position: int, sample: str) -> None:
    assert message.endswith(f" (position {position} of the batch is id {sample!r})"), message
    assert message.count("of the batch is id") == 1, message


def _with(value, bad):
    """``value`` for every id but ``d``, which gets ``bad``."""
    return {i: (bad if i == "d" else value) for i in IDS}


BOX = [[0, 0, 1, 1]]
REGION = [{"points": [0, 0, 1, 1], "text": "x"}]
VQA = {"answers": ["x"], "lang": "en"}

RECORD_CASES = {  # metric, options, predictions, references, what the message says
    "vqa_lang": ("vqa_accuracy", {}, _with("x", "x"), _with(VQA, {"answers": ["x"], "lang": "de"}),
                 "`lang[1]` must be one of en, ru"),
    "vqa_reference": ("vqa_accuracy", {}, _with("x", "x"), _with(VQA, ["x"]), "references 1 must be one object"),
    "boxes_not_numbers": ("zero_shot_detection_f1", {}, _with({"cat": BOX}, {"cat": [[0, 0, "w", 1]]}),
                          _with({"cat": BOX}, {"cat": BOX}), "prediction 1['cat'] must be a list of"),
    "boxes_not_a_dict": ("zero_shot_detection_f1", {}, _with({"cat": BOX}, {"cat": BOX}), _with({"cat": BOX}, 5),
                         "references 1 must be a JSON object"),
    "negative_width": ("zero_shot_detection_f1", {}, _with({"cat": BOX}, {"cat": BOX}),
                       _with({"cat": BOX}, {"cat": [[0, 0, -1, 1]]}), "`target[1]['cat']` holds"),
    "run_scores": ("ranking", {}, _with({"d1": 1}, {"d1": "x"}), _with({"d1": 1}, {"d1": 1}), "prediction 1 must"),
    "qrels_too_large": ("ranking", {}, _with({"d1": 1}, {"d1": 1}), _with({"d1": 1}, {"d1": 10 ** 400}),
                        "references 1 holds a number too large"),
    "ocr_region": ("ocr_e2e", {}, _with(REGION, [{"points": [0, 0], "text": 1}]), _with(REGION, REGION),
                   "prediction 1 must be a list of"),
    "ocr_points": ("ocr_e2e", {}, _with(REGION, [{"points": [0, 0, 1], "text": "x"}]), _with(REGION, REGION),
                   "`pred_polys[1]` must have shape"),
    "ocr_infinite": ("ocr_e2e", {}, _with(REGION, REGION), _with(REGION, [{"points": [0, 0, 1, 1e400], "text": "x"}]),
                     "`gt_polys[1]` holds NaN or infinite coordinates"),
    "meteor_budget": ("meteor", {"memory_budget": 100_000}, _with("w", " ".join(["w"] * 300)),
                      _with(["w"], [" ".join(["w"] * 300)]), "METEOR 1.5: sample 1 with its reference 0"),
}


@pytest.mark.parametrize("case", sorted(RECORD_CASES))
def test_a_sample_refused_by_the_metric_or_its_adapter_is_named_by_its_id(tmp_path, case):
    metric, options, predictions, references, says = RECORD_CASES[case]
    message = _rejected(tmp_path, metric, predictions, references, options)
    assert says in message and "samples 2..3 (first id 'c')" in message, message
    _named(message, 1, "d")


def test_a_pair_metric_given_two_references_names_the_sample(tmp_path):
    (tmp_path / "vec.txt").write_text("2 2\nx 1 0\ny 0 1\n", encoding="utf-8")
    message = _rejected(tmp_path, "wmd", _with("x", "x"), _with(["y"], ["x", "y"]), {"embeddings": "vec.txt"})
    assert "references 1: this metric compares a pair of documents" in message, message
    _named(message, 1, "d")


class _FileReader(torch.nn.Module):
    """Stand-in metric (registered only inside a test): each prediction names a file; the one named ``bad`` is
    refused by an error whose message holds a bracketed number that is no position (``tagged``: and the tag)."""

    def __init__(self, tagged: bool = False):
        super().__init__()
        self.tagged = tagged

    def update(self, preds, target):
        if "bad" in preds:
            error = ValueError("cannot read 'scans/page[2].png' (named by a prediction)")
            raise at_position(error, preds.index("bad")) if self.tagged else error

    def compute(self):
        return torch.zeros(())


@pytest.mark.parametrize("tagged", [False, True])
def test_a_bracketed_number_in_a_message_names_no_sample(tmp_path, monkeypatch, tagged):
    """The message is no longer searched: its ``page[2]`` named the sample at position 2 (id 'c'), not the one the
    metric refused (id 'a'); untagged, no id is named — tagged, the tag's."""
    from gpumetrics.harness import registry

    entry = registry.TaskMetric("toy_files", lambda: _FileReader(tagged), "toy", empty_prediction=None)
    monkeypatch.setitem(registry.METRICS, entry.name, entry)
    message = _rejected(tmp_path, "toy_files", {"a": "bad", "b": "x.png", "c": "y.png"}, {i: ["r"] for i in "abc"},
                        batch_size=8)
    assert "cannot read 'scans/page[2].png'" in message, message
    if tagged:
        _named(message, 0, "a")
    else:
        assert "of the batch is id" not in message, message


# ------------------------------------------------------------------------------------------- image files (catalog)
def _bad_image(path: Path) -> None:
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 9)


def test_an_undecodable_file_named_with_brackets_names_its_own_sample(tmp_path):
    """The file ``img[3].png`` of the sample at position 1 cannot be decoded: the message searched for ``name[k]``
    named position 3 (id 'd'), now the error's tag names position 1 (id 'b')."""
    save_random_images(tmp_path / "fake", seed=1, n=5, size=(32, 32))
    save_random_images(tmp_path / "real", seed=2, n=5, size=(32, 32))
    _bad_image(tmp_path / "fake" / "img[3].png")
    predictions = {i: f"fake/{k}.png" for k, i in enumerate(IDS)} | {"b": "fake/img[3].png"}
    message = _rejected(tmp_path, "fid", predictions, {i: [f"real/{k}.png"] for k, i in enumerate(IDS)},
                        {"feature": 64, "weights": "random"}, batch_size=8)
    assert "img[3].png' cannot be decoded" in message, message
    _named(message, 1, "b")


@pytest.mark.parametrize("where", ["prediction", "reference"])
def test_a_missing_or_undecodable_image_file_names_its_sample(tmp_path, where):
    """A generated image (the batch's positions) and a real one (numbered among the batch's references, flattened:
    the tag is its sample's position)."""
    save_random_images(tmp_path / "fake", seed=1, n=5, size=(32, 32))
    save_random_images(tmp_path / "real", seed=2, n=5, size=(32, 32))
    _bad_image(tmp_path / "real" / "junk.png")
    _bad_image(tmp_path / "fake" / "junk.png")
    options = {"feature": 64, "weights": "random"}
    good = {i: [f"real/{k}.png", "real/0.png"] for k, i in enumerate(IDS)}
    for bad, says in (("no.png", "image file not found"), ("junk.png", "junk.png' cannot be decoded")):
        predictions = {i: f"fake/{k}.png" for k, i in enumerate(IDS)}
        references = dict(good)
        if where == "prediction":
            predictions["d"] = f"fake/{bad}"
        else:
            references["d"] = ["real/0.png", f"real/{bad}"]
        message = _rejected(tmp_path, "fid", predictions, references, options)
        assert says in message, message
        if bad == "no.png":
            assert f"{where} {1 if where == 'prediction' else 3}:" in message, message  # the message's own numbering
        _named(message, 1, "d")


@pytest.fixture()
def tiny_clip(tmp_path):
    from testkit.clip_models import TINY_CLIP, save_random_hf_clip

    (tmp_path / "clip").mkdir()
    return save_random_hf_clip(tmp_path / "clip", TINY_CLIP)


def test_clip_score_captions_are_named_by_their_sample(tmp_path, tiny_clip):
    """A caption that is no string reaches the CLIP metric with the images of one size (``captions[k]`` numbers it
    in that group); an empty list of captions is refused first. Under ``missing_image: zero`` the samples without
    an image are set aside, which renumbers the others."""
    save_random_images(tmp_path / "img", seed=3, n=5, size=(32, 32))
    Image.new("RGB", (20, 20)).save(tmp_path / "img" / "small.png")
    predictions = {i: f"img/{k}.png" for k, i in enumerate(IDS)} | {"c": "img/small.png"}
    message = _rejected(tmp_path, "clip_score", predictions, _with(["a cat"], [7]), {"model_name": tiny_clip})
    assert "`captions[0]` must be a string" in message, message
    _named(message, 1, "d")
    message = _rejected(tmp_path, "clip_score", predictions | {"c": "img/none.png"}, _with(["a cat"], [7]),
                        {"model_name": tiny_clip, "missing_image": "zero"})
    assert "`captions[0]` must be a string" in message, message
    _named(message, 1, "d")
    message = _rejected(tmp_path, "clip_score", predictions, _with(["a cat"], []), {"model_name": tiny_clip})
    assert "references 1 hold no caption" in message, message
    _named(message, 1, "d")


# ------------------------------------------------------------------------------------------------ AIJ image tasks
@pytest.fixture()
def captioning(tmp_path):
    """Writes records of the S_ImageCaptioning task metric for samples ``IDS`` (``images`` maps an id to its image's
    path, ``references`` replaces some reference objects) and returns ``run(images, references, **options) ->
    message``."""
    from tests.image.test_clip_score import TINY_OPEN_CLIP

    save_random_images(tmp_path / "images", seed=4, n=5, size=(30, 40))
    _bad_image(tmp_path / "images" / "img[3].png")
    (tmp_path / "clip.json").write_text(json.dumps(TINY_OPEN_CLIP), encoding="utf-8")
    (tmp_path / "syn.tsv").write_text("кот\tкошк\n", encoding="utf-8")

    def run(images: dict, references: dict = None, **options) -> str:
        refs = {i: {"image": path, "answers": ["кот"]} for i, path in images.items()} | (references or {})
        options = {"image_root": "images", "synonyms": "syn.tsv", "clip_backend": "open_clip",
                   "clip_model": str(tmp_path / "clip.json"), "clip_pretrained": "random", **options}
        return _rejected(tmp_path, "s_image_captioning", {i: "кошка" for i in images}, refs, options, batch_size=8)

    return run


def test_aij_captioning_names_the_sample_of_a_missing_or_undecodable_image(tmp_path, captioning):
    Image.new("RGB", (40, 30)).save(tmp_path / "outside.png")
    images = {i: f"{k}.png" for k, i in enumerate(IDS)}
    message = captioning(images | {"d": "none.png"})
    assert "`images[3]`: file" in message and "does not exist" in message, message
    _named(message, 3, "d")
    # a file named img[3].png: the message's bracketed number is no position (it named id 'd')
    message = captioning(images | {"b": "img[3].png"})
    assert "img[3].png' cannot be decoded" in message, message
    _named(message, 1, "b")
    # missing_image zero sets the samples without image aside: the one leaving the folder keeps its position
    message = captioning(images | {"a": "none.png", "c": "../outside.png"}, missing_image="zero")
    assert "`images[2]`: '../outside.png' leaves image_root" in message, message
    _named(message, 2, "c")


@pytest.mark.parametrize("reference, says", [
    ({"answers": ["кот"]}, "references 3: `image` must be"), ("кот", "references 3 must be one object"),
    ({"image": None, "answers": []}, "references 3: `answers` must be"),
])
def test_aij_captioning_records_are_named_by_their_sample(captioning, reference, says):
    message = captioning({i: f"{k}.png" for k, i in enumerate(IDS)}, {"d": reference})
    assert says in message, message
    _named(message, 3, "d")


# ------------------------------------------------------------------------ the sites behind the record reader's checks
def test_text_checks_tag_the_sample_they_name():
    """Text tasks never reach these (the reader refuses a non-string prediction or reference first); a direct
    caller's error still carries the position it names."""
    from gpumetrics.text.edit import word_error_rate
    from gpumetrics.text.meteor.nltk_style import as_token_batch

    cases = [
        (lambda: as_text_list(["x", 3], "preds"), r"`preds\[1\]` must be a string"),
        (lambda: as_reference_lists(["x", 3], "target"), r"`target\[1\]` must be a string or a list"),
        (lambda: as_reference_lists(["x", ["y", 3]], "target"), r"`target\[1\]\[1\]` must be a string"),
        (lambda: as_reference_lists(["x", []], "target"), r"`target\[1\]` holds no reference"),
        (lambda: word_error_rate(["x", 3], ["x", "y"]), r"`preds\[1\]` must be a string"),
        (lambda: as_token_batch(["x", "y"], ["x", ["y", 2]]), r"`references\[1\]\[1\]` must be a string"),
        (lambda: as_token_batch([["x"], ["y", 2]], [[["x"]], [["y"]]]), r"`hypotheses\[1\]\[1\]` must be a string"),
        (lambda: as_token_batch([["x"], ["y"]], [[["x"]], []]), r"`references\[1\]` holds no reference"),
    ]
    for call, says in cases:
        with pytest.raises((TypeError, ValueError), match=says) as caught:
            call()
        assert batch_position(caught.value) == 1, says


def test_image_and_code_checks_tag_the_sample_they_name():
    from gpumetrics.detection.zero_shot_f1 import zero_shot_detection_f1
    from gpumetrics.text.bleu import bleu_score
    from gpumetrics.text.codebleu import codebleu_score
    from gpumetrics.text.wmd import word_movers_distance

    boxes = {"cat": torch.tensor([[0.0, 0, 1, 1]])}
    cases = [
        (lambda: zero_shot_detection_f1([boxes, [1]], [boxes, boxes]), r"`preds\[1\]` must be a dict"),
        (lambda: codebleu_score(["x = 1", "x = '\ud800'"], ["x = 1", "x = 1"], language="python"),
         r"`preds\[1\]` holds '\\ud800'"),
        (lambda: word_movers_distance(["x", "y"], ["x", 3], embeddings={"x": [1.0], "y": [2.0]}),
         r"`target\[1\]` must be a string or a list of string tokens"),
        (lambda: bleu_score(["a b c d", "a x y z"], [["a b c d"], ["a b c d"]], mode="nltk", smooth="method6",
                            reduction="none"), re.escape("cannot score preds[1]")),
    ]
    for call, says in cases:
        with pytest.raises((TypeError, ValueError), match=says) as caught:
            call()
        assert batch_position(caught.value) == 1, says
