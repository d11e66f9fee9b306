"""The COCO caption table against pycocoevalcap's ``COCOEvalCap`` itself (Java PTB tokenizer, METEOR 1.5 jar).

``COCOEvalCap.evaluate()`` runs once per data set for the whole module (fixture): three JVM starts each. SPICE is
replaced by a stub (it needs models downloaded on first use; the table compared is the rest of its ``eval``).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import torch

from gpumetrics import BLEUScore, COCOCaptionScores, ROUGEScore
from gpumetrics.functional import bleu_score, coco_caption_scores, rouge_score
from gpumetrics.harness.records import read_coco
from gpumetrics.text.coco import COCO_KEYS
from gpumetrics.text.tokenize.ptb import coco_ptb_strings
from tests.helpers.harness import assert_close, check_metric
from tests.helpers.oracles import import_oracle
from testkit.text_data import random_caption

_ODD = ["", ".", "dog", "Dog.", "A", "café au lait", "Кошка сидит на окне", "猫が座っている", "2 1/2 pizzas",
        "call (555) 123 4567", "A man, a plan, a canal: Panama!", "THE END", "a photo of a.", "The dog's ball"]


def _caption(rng: random.Random) -> str:
    return rng.choice(_ODD) if rng.random() < 0.12 else random_caption(rng)


def write_coco_files(folder: Path, n_images: int, seed: int, skip_results: int = 0) -> tuple[Path, Path]:
    """A ``captions_*.json`` annotations file (1..7 captions per image, ids not in order) and a results file for
    all but ``skip_results`` of its images (results in shuffled order)."""
    rng = random.Random(seed)
    ids = rng.sample(range(1, 10 * n_images + 1), n_images)
    annotations, results = [], []
    for image_id in ids:
        for _ in range(rng.randint(1, 7)):
            annotations.append({"image_id": image_id, "id": len(annotations) + 1, "caption": _caption(rng)})
    rng.shuffle(annotations)  # captions of one image need not be adjacent
    for image_id in ids[skip_results:]:
        results.append({"image_id": image_id, "caption": _caption(rng)})
    rng.shuffle(results)
    folder.mkdir(parents=True, exist_ok=True)
    ann_path, res_path = folder / "captions_test.json", folder / "results.json"
    images = [{"id": image_id, "file_name": f"{image_id:012d}.jpg"} for image_id in ids]
    ann_path.write_text(json.dumps({"images": images, "annotations": annotations}, ensure_ascii=False),
                        encoding="utf-8")
    res_path.write_text(json.dumps(results, ensure_ascii=False), encoding="utf-8")
    return ann_path, res_path


class _NoSpice:
    """Stands in for pycocoevalcap's Spice (not runnable offline); its numbers are not compared."""

    def compute_score(self, gts, res):
        return float("nan"), [float("nan")] * len(gts)

    def method(self):
        return "SPICE"


def run_cocoevalcap(annotations: Path, results: Path) -> tuple[dict, dict]:
    """``COCOEvalCap.evaluate()`` as its example script runs it (only the images of the results): ``(eval,
    imgToEval)``."""
    coco_eval = import_oracle("pycocoevalcap.eval")
    from pycocotools.coco import COCO

    coco = COCO(str(annotations))
    result = coco.loadRes(str(results))
    evaluation = coco_eval.COCOEvalCap(coco, result)
    evaluation.params["image_id"] = result.getImgIds()
    spice, coco_eval.Spice = coco_eval.Spice, _NoSpice
    try:
        evaluation.evaluate()
    finally:
        coco_eval.Spice = spice
    return evaluation.eval, evaluation.imgToEval


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    """COCOEvalCap on a random 240-image set (40 images without result) and on a single image."""
    out = {}
    for name, n_images, skip in (("random", 240, 40), ("single", 1, 0)):
        annotations, results = write_coco_files(tmp_path_factory.mktemp(name), n_images, seed=len(name),
                                                skip_results=skip)
        data = read_coco(results, annotations)
        scores, per_image = run_cocoevalcap(annotations, results)
        out[name] = (data, scores, per_image)
    return out


def _per_image(per_image: dict, data, key: str) -> torch.Tensor:
    return torch.tensor([per_image[int(i)][key] for i in data.ids], dtype=torch.float64)


@pytest.mark.parametrize("name", ["random", "single"])
def test_table_equals_cocoevalcap(oracle, name):
    data, scores, per_image = oracle[name]
    ours = coco_caption_scores(data.predictions, data.references)
    assert list(ours) == list(COCO_KEYS)
    for key in COCO_KEYS:
        assert abs(ours[key].item() - scores[key]) <= 1e-9, (key, ours[key].item(), scores[key])
    every = coco_caption_scores(data.predictions, data.references, reduction="none")
    for key in COCO_KEYS:
        assert_close(every[key], _per_image(per_image, data, key), 1e-9, what=f"per-image {key}")


def test_module_in_batches_equals_cocoevalcap(oracle):
    data, scores, _ = oracle["random"]
    metric = COCOCaptionScores()
    # one PTB call per batch and side (a caption ending "… a." sees the next one only within its batch)
    for start in range(0, len(data.ids), 64):
        metric.update(data.predictions[start : start + 64], data.references[start : start + 64])
    values = metric.compute()
    for key in COCO_KEYS:
        assert abs(values[key].item() - scores[key]) <= 1e-9, key


def test_coco_modes_equal_their_scorers(oracle):
    data, scores, per_image = oracle["random"]
    for n in range(1, 5):
        weights = (1 / n,) * n
        assert abs(bleu_score(data.predictions, data.references, mode="coco", weights=weights).item()
                   - scores[f"Bleu_{n}"]) <= 1e-9
        assert_close(bleu_score(data.predictions, data.references, mode="coco", weights=weights, reduction="none"),
                     _per_image(per_image, data, f"Bleu_{n}"), 1e-9, what=f"Bleu_{n}")
    rouge = rouge_score(data.predictions, data.references, mode="coco")
    assert abs(rouge["rougeL_fmeasure"].item() - scores["ROUGE_L"]) <= 1e-9
    per = rouge_score(data.predictions, data.references, mode="coco", reduction="none")["rougeL_fmeasure"]
    assert_close(per, _per_image(per_image, data, "ROUGE_L"), 1e-9, what="ROUGE_L")
    # tokenize="none" on COCOEvalCap's tokenised strings is the scorer called directly
    hyps, refs = coco_ptb_strings(data.predictions, data.references)
    assert abs(bleu_score(hyps, refs, mode="coco", tokenize="none").item() - scores["Bleu_4"]) <= 1e-9
    assert abs(rouge_score(hyps, refs, mode="coco", tokenize="none")["rougeL_fmeasure"].item()
               - scores["ROUGE_L"]) <= 1e-9
    table = coco_caption_scores(hyps, refs, tokenize="none")
    for key in COCO_KEYS:
        assert abs(table[key].item() - scores[key]) <= 1e-9, key


def test_rouge_takes_best_precision_and_best_recall_apart():
    # precision 1 from the short reference, recall 1 from the long one: F = 1, where rouge-score's best-F gives less
    preds, target = ["a cat"], [["a cat", "a black cat on a mat"]]
    assert rouge_score(preds, target, mode="coco", tokenize="none")["rougeL_fmeasure"].item() == 1.0
    preds, target = ["a cat sat"], [["a cat", "cat sat down"]]
    values = rouge_score(preds, target, mode="coco", tokenize="none")
    p, r = 2 / 3, 2 / 2
    assert values["rougeL_precision"].item() == p and values["rougeL_recall"].item() == r
    assert abs(values["rougeL_fmeasure"].item() - (1 + 1.44) * p * r / (r + 1.44 * p)) < 1e-15
    # an empty caption is one empty word: it matches an empty reference
    assert rouge_score([""], [["", "x"]], mode="coco", tokenize="none")["rougeL_fmeasure"].item() == 1.0


def _pretokenised_batches(seed: int, sizes=(7, 3, 9, 5)):
    rng = random.Random(seed)
    batches = []
    for size in sizes:
        preds = [_caption(rng) for _ in range(size)]
        target = [[_caption(rng) for _ in range(rng.randint(1, 7))] for _ in range(size)]
        batches.append(coco_ptb_strings(preds, target))
    return batches


@pytest.mark.ddp
def test_module_merge_checkpoint_and_ddp_per_image():
    # module == functional, forward, merge_state, state_dict (full and mid-stream), pickle, reset, 2-process gloo DDP
    # with uneven splits (an empty rank included); per-image values keep their order across ranks
    check_metric(COCOCaptionScores, coco_caption_scores, None, _pretokenised_batches(3),
                 metric_kwargs={"tokenize": "none", "reduction": "none"})


@pytest.mark.ddp
def test_module_ddp_corpus():
    check_metric(COCOCaptionScores, coco_caption_scores, None, _pretokenised_batches(4, sizes=(4, 8, 2)),
                 metric_kwargs={"tokenize": "none"}, check_forward=False)


def test_coco_mode_modules_equal_functions():
    batches = _pretokenised_batches(5, sizes=(4, 6))
    check_metric(BLEUScore, bleu_score, None, batches, metric_kwargs={"mode": "coco", "tokenize": "none"}, ddp=False)
    check_metric(ROUGEScore, rouge_score, None, batches, metric_kwargs={"mode": "coco", "tokenize": "none"},
                 ddp=False)


def test_empty_inputs_are_defined():
    values = coco_caption_scores([], [])
    assert list(values) == list(COCO_KEYS) and all(v.item() == 0.0 for v in values.values())
    per_image = coco_caption_scores([], [], reduction="none")
    assert all(v.shape == (0,) for v in per_image.values())
    assert all(v.item() == 0.0 for v in COCOCaptionScores().compute().values())
    assert all(v.shape == (0,) for v in COCOCaptionScores(reduction="none").compute().values())
    metric = COCOCaptionScores(reduction="none")
    metric.update(["a dog"], [["a dog runs"]])
    assert all(v.shape == (1,) for v in metric.compute().values())  # one image keeps its dimension
    # an empty caption scores 0 everywhere but ROUGE_L against an empty reference (one empty word each)
    single = coco_caption_scores([""], [["a dog", ""]], reduction="none")
    assert single["Bleu_1"].item() < 1e-6 and single["METEOR"].item() == 0.0 and single["ROUGE_L"].item() == 1.0


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="tokenize"):
        coco_caption_scores(["a"], [["a"]], tokenize="13a")
    with pytest.raises(ValueError, match="reduction"):
        COCOCaptionScores(reduction="mean")
    with pytest.raises(ValueError, match="preds"):
        coco_caption_scores(["a", "b"], [["a"]])
    with pytest.raises(ValueError, match="target"):
        coco_caption_scores(["a"], [[]])
    with pytest.raises(TypeError, match="preds"):
        coco_caption_scores([1], [["a"]])
    with pytest.raises(ValueError, match="smooth"):
        bleu_score(["a"], [["a"]], mode="coco", smooth="exp")
    with pytest.raises(ValueError, match="weights"):
        bleu_score(["a"], [["a"]], mode="coco", weights=(0.5, 0.3, 0.2))
    with pytest.raises(ValueError, match="tokenize"):
        bleu_score(["a"], [["a"]], mode="coco", tokenize="13a")
    with pytest.raises(ValueError, match="rouge_keys"):
        rouge_score(["a"], [["a"]], mode="coco", rouge_keys=("rouge1",))
    with pytest.raises(ValueError, match="use_stemmer"):
        rouge_score(["a"], [["a"]], mode="coco", use_stemmer=True)
    with pytest.raises(ValueError, match="mode"):
        rouge_score(["a"], [["a"]], mode="pycoco")


def test_signatures_name_the_modes():
    assert COCOCaptionScores().signature().startswith("coco_caption|tok:ptb|bleu:coco|meteor:meteor-1.5|rouge:coco")
    assert BLEUScore(mode="coco").signature().startswith("bleu|mode:coco|tok:ptb|smooth:coco|order:4")
    assert ROUGEScore(mode="coco", tokenize="none").signature().startswith("rouge|mode:coco|keys:rougeL|tokenizer:none")


@pytest.mark.slow
def test_large_random_set_equals_cocoevalcap(tmp_path):
    # 2,000 images (≈ 8,000 references): every key and every per-image value
    annotations, results = write_coco_files(tmp_path, 2000, seed=2024, skip_results=100)
    data = read_coco(results, annotations)
    scores, per_image = run_cocoevalcap(annotations, results)
    ours = coco_caption_scores(data.predictions, data.references)
    every = coco_caption_scores(data.predictions, data.references, reduction="none")
    for key in COCO_KEYS:
        assert abs(ours[key].item() - scores[key]) <= 1e-9, key
        assert_close(every[key], _per_image(per_image, data, key), 1e-9, what=f"per-image {key}")
