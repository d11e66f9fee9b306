"""Zero-shot detection F1 against independent loop implementations of the aij2021 and strict rules."""

import random

import pytest
import torch

from gpumetrics import ZeroShotDetectionF1
from gpumetrics.functional import zero_shot_detection_f1
from gpumetrics.catalog import get_metric
from tests.helpers.harness import check_metric


def _iou_xywh(a, b):
    # as the official script: corners first, the areas from the corners (not w·h, which rounds differently)
    ax2, ay2, bx2, by2 = a[0] + a[2], a[1] + a[3], b[0] + b[2], b[1] + b[3]
    iw = max(0.0, min(ax2, bx2) - max(a[0], b[0]))
    ih = max(0.0, min(ay2, by2) - max(a[1], b[1]))
    inter = iw * ih
    union = (ax2 - a[0]) * (ay2 - a[1]) + (bx2 - b[0]) * (by2 - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _lists(d):
    # Python numbers stay doubles (``torch.as_tensor`` of a list would round them to float32)
    boxes = {k: v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=torch.float64) for k, v in d.items()}
    return {k: [list(map(float, box)) for box in v.reshape(-1, 4).tolist()] for k, v in boxes.items()}


def _scores(tp, fp, fn):
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "tp": float(tp), "fp": float(fp), "fn": float(fn)}


def aij2021_reference(preds, target, thr=0.5):
    tp = fp = fn = 0
    for pred, gt in zip(preds, target):
        pred, gt = _lists(pred), _lists(gt)
        for label in gt:  # the queried labels: the ground truth's (a predicted label it does not list is ignored)
            p, g = pred.get(label, []), gt.get(label, [])
            if not g:
                fp += len(p)
                continue
            if not p:
                fn += len(g)
                continue
            fn += max(0, len(g) - len(p))
            previous = None
            for box in p:
                if box == previous:
                    continue
                previous = box
                if any(_iou_xywh(box, t) >= thr for t in g):
                    tp += 1
                else:
                    fp += 1
    return _scores(tp, fp, fn)


def strict_reference(preds, target, thr=0.5):
    tp = fp = fn = 0
    for pred, gt in zip(preds, target):
        pred, gt = _lists(pred), _lists(gt)
        for label in set(pred) | set(gt):
            p, g = pred.get(label, []), gt.get(label, [])
            pairs = sorted(((-_iou_xywh(a, b), i, j) for i, a in enumerate(p) for j, b in enumerate(g)))
            used_p, used_g, matches = set(), set(), 0
            for neg_iou, i, j in pairs:
                if -neg_iou >= thr and i not in used_p and j not in used_g:
                    used_p.add(i)
                    used_g.add(j)
                    matches += 1
            tp += matches
            fp += len(p) - matches
            fn += len(g) - matches
    return _scores(tp, fp, fn)


LABELS = ["cat", "dog", "кошка", "猫", "🐈 tabby", "person on a bike"]


def _random_data(seed, n):
    r = random.Random(seed)
    preds, target = [], []
    for _ in range(n):
        gt, pred = {}, {}
        for label in r.sample(LABELS, r.randint(0, 4)):
            boxes = [[r.randint(0, 50), r.randint(0, 50), r.randint(0, 20), r.randint(1, 20)]
                     for _ in range(r.randint(0, 4))]
            gt[label] = torch.tensor(boxes, dtype=torch.float64).reshape(-1, 4)
        for label in r.sample(LABELS, r.randint(0, 4)):
            boxes = []
            for _ in range(r.randint(0, 5)):
                if label in gt and len(gt[label]) and r.random() < 0.6:
                    x, y, w, h = r.choice(gt[label].tolist())
                    boxes.append([x + r.randint(-3, 3), y + r.randint(-3, 3), max(0, w + r.randint(-2, 2)), h])
                else:
                    boxes.append([r.randint(0, 50), r.randint(0, 50), r.randint(1, 20), r.randint(1, 20)])
                if boxes and r.random() < 0.25:
                    boxes.append(list(boxes[-1]))  # consecutive duplicate
            pred[label] = torch.tensor(boxes, dtype=torch.float64).reshape(-1, 4)
        preds.append(pred)
        target.append(gt)
    return preds, target


@pytest.mark.parametrize("preset,reference", [("aij2021", aij2021_reference), ("strict", strict_reference)])
def test_matches_independent_implementation(preset, reference):
    preds, target = _random_data(1, 300)
    ours = zero_shot_detection_f1(preds, target, preset=preset)
    ref = reference(preds, target)
    for key, value in ref.items():
        assert float(ours[key]) == pytest.approx(value, abs=1e-12), key
    assert ref["tp"] > 50 and ref["fp"] > 50 and ref["fn"] > 20


def test_aij2021_rules_one_by_one():
    box = [[0.0, 0.0, 10.0, 10.0]]
    far = [[50.0, 50.0, 10.0, 10.0]]

    def score(pred, gt):
        out = zero_shot_detection_f1([{k: torch.tensor(v).reshape(-1, 4) for k, v in pred.items()}],
                                     [{k: torch.tensor(v).reshape(-1, 4) for k, v in gt.items()}])
        return int(out["tp"]), int(out["fp"]), int(out["fn"])

    assert score({"a": box + far}, {"a": []}) == (0, 2, 0)  # queried class without GT box: every box FP
    assert score({"a": box + far}, {}) == (0, 0, 0)  # label the GT does not query: ignored
    assert score({"a": []}, {"a": box + far}) == (0, 0, 2)  # empty prediction: every GT box FN
    assert score({}, {"a": box}) == (0, 0, 1)  # class not in the prediction dict: as empty
    assert score({"a": box}, {"a": box + far}) == (1, 0, 1)  # FN = #gt − #pred
    assert score({"a": box + box + box}, {"a": box}) == (1, 0, 0)  # consecutive duplicates once
    assert score({"a": box + far + box}, {"a": box}) == (2, 1, 0)  # non-consecutive duplicates each
    assert score({"a": [[0.0, 0.0, 10.0, 5.0]]}, {"a": box}) == (1, 0, 0)  # IoU exactly 0.5 is a hit


@pytest.mark.ddp
def test_module_functional_reference_and_ddp():
    preds, target = _random_data(2, 24)
    batches = [(preds[:10], target[:10]), (preds[10:11], target[10:11]), (preds[11:], target[11:])]
    check_metric(ZeroShotDetectionF1, zero_shot_detection_f1, aij2021_reference, batches,
                 metric_kwargs={"preset": "aij2021"})


def test_strict_module_accumulates():
    preds, target = _random_data(3, 40)
    metric = ZeroShotDetectionF1(preset="strict")
    for i in range(0, 40, 7):
        metric.update(preds[i : i + 7], target[i : i + 7])
    expected = strict_reference(preds, target)
    for key, value in expected.items():
        assert float(metric.compute()[key]) == pytest.approx(value, abs=1e-12)


def test_task_adapter_reads_json_records():
    entry = get_metric("zero_shot_detection_f1")
    predictions = [{"cat": [[0, 0, 10, 10], [0, 0, 10, 10]], "dog": []}, {}, {"person": [[1, 1, 2, 2]]}]
    references = [[{"cat": [[1, 1, 10, 10]], "dog": [[5, 5, 5, 5]]}], [{"cat": [[0, 0, 1, 1]]}], {"person": []}]
    metric = entry.build({"preset": "aij2021"})
    metric.update(*entry.update_args(predictions, references))
    out = metric.compute()
    assert (int(out["tp"]), int(out["fp"]), int(out["fn"])) == (1, 1, 2)
    assert entry.primary == "f1" and entry.empty_prediction == {}
    with pytest.raises(ValueError, match="prediction 0"):
        entry.update_args([{"cat": [[1, 2, 3]]}], [[{}]])


def test_bad_inputs_name_the_argument():
    good = [{"a": torch.zeros(1, 4)}]
    with pytest.raises(TypeError, match="`preds`"):
        zero_shot_detection_f1({"a": torch.zeros(1, 4)}, good)
    with pytest.raises(TypeError, match=r"`target\[0\]`"):
        zero_shot_detection_f1(good, [torch.zeros(1, 4)])
    with pytest.raises(ValueError, match=r"`preds\[0\]\['a'\]` must have shape \[K, 4\]"):
        zero_shot_detection_f1([{"a": torch.zeros(1, 5)}], good)
    with pytest.raises(ValueError, match=r"`target\[0\]\['a'\]`.*NaN"):
        zero_shot_detection_f1(good, [{"a": torch.tensor([[0.0, float("nan"), 1.0, 1.0]])}])
    with pytest.raises(ValueError, match="same number of samples"):
        zero_shot_detection_f1(good + good, good)
    with pytest.raises(ValueError, match="`preset`"):
        ZeroShotDetectionF1(preset="coco")
    with pytest.raises(ValueError, match="`iou_threshold`"):
        zero_shot_detection_f1(good, good, iou_threshold=-0.1)
    assert "preset:strict" in ZeroShotDetectionF1(preset="strict").signature()


WIDE_LABELS = ["cat", "Cat", "", " ", "кошка", "猫", "🐈", "a\u0301", "á", 0, 1, "0"]


def _wide_random_data(seed, n, scale, offset, as_type):
    """Zero-width / zero-height boxes, consecutive duplicates, near-copies of ground truths, empty box lists,
    int / Unicode / look-alike labels, tiny and huge coordinates; boxes as float tensors, int tensors or lists."""
    r = random.Random(seed)

    def box():
        w, h = r.uniform(0, 10) * scale, r.uniform(0, 10) * scale
        k = r.random()
        return [r.uniform(0, 30) * scale + offset, r.uniform(0, 30) * scale + offset, 0.0 if k < 0.1 else w,
                0.0 if 0.1 <= k < 0.15 else h]

    preds, target = [], []
    for _ in range(n):
        gt = {label: [box() for _ in range(r.randint(0, 3))] for label in r.sample(WIDE_LABELS, r.randint(0, 4))}
        pred = {}
        for label in r.sample(WIDE_LABELS, r.randint(0, 4)):
            boxes = []
            for _ in range(r.randint(0, 4)):
                if gt.get(label) and r.random() < 0.6:
                    x, y, w, h = r.choice(gt[label])
                    j = r.choice([0, 0, 0.05, 0.3]) * scale
                    boxes.append([x + r.uniform(-j, j) * 10, y + r.uniform(-j, j) * 10, w + r.uniform(-j, j), h])
                else:
                    boxes.append(box())
                if r.random() < 0.3:
                    boxes.append(list(boxes[-1]))
            pred[label] = boxes
        preds.append(pred)
        target.append(gt)
    if as_type == "int":
        return ([{k: torch.tensor(v).round().long().reshape(-1, 4) for k, v in d.items()} for d in preds],
                [{k: torch.tensor(v).round().long().reshape(-1, 4) for k, v in d.items()} for d in target])
    if as_type == "list":
        return preds, target
    return ([{k: torch.tensor(v, dtype=as_type).reshape(-1, 4) for k, v in d.items()} for d in preds],
            [{k: torch.tensor(v, dtype=as_type).reshape(-1, 4) for k, v in d.items()} for d in target])


@pytest.mark.parametrize("scale, offset, as_type", [(1, 0, torch.float64), (1e-6, 0, torch.float32), (1e5, 0, "int"),
                                                    (1, 1e6, torch.float64), (1, 0, "list")])
@pytest.mark.parametrize("preset,reference", [("aij2021", aij2021_reference), ("strict", strict_reference)])
def test_wide_random_degenerate_boxes_labels_and_scales(scale, offset, as_type, preset, reference):
    preds, target = _wide_random_data(7, 40, scale, offset, as_type)
    ours = zero_shot_detection_f1(preds, target, preset=preset)
    metric = ZeroShotDetectionF1(preset=preset)
    for start in range(0, 40, 9):
        metric.update(preds[start : start + 9], target[start : start + 9])
    module = metric.compute()
    expected = reference(preds, target)
    for key, value in expected.items():
        assert float(ours[key]) == pytest.approx(value, abs=1e-12), key
        assert float(module[key]) == float(ours[key]), key
    assert expected["tp"] >= 5 and expected["fp"] >= 5


def test_negative_size_and_out_of_range_boxes_are_an_error_naming_the_argument():
    good = [{"a": torch.tensor([[0.0, 0.0, 2.0, 2.0]])}]
    # was: accepted; a box [x, y, -w, h] "reaching back" was scored against the others
    with pytest.raises(ValueError, match=r"`preds\[0\]\['a'\]` holds \[x, y, w, h\] boxes with a negative width"):
        zero_shot_detection_f1([{"a": torch.tensor([[3.0, 3.0, -2.0, 2.0]])}], good)
    with pytest.raises(ValueError, match=r"`target\[1\]\['b'\]` holds \[x, y, w, h\] boxes with a negative"):
        zero_shot_detection_f1(good + good, good + [{"b": [[0, 0, 1, -1]]}])
    with pytest.raises(ValueError, match=r"`target\[0\]\['a'\]` holds coordinates beyond"):
        zero_shot_detection_f1(good, [{"a": torch.tensor([[0.0, 0.0, 1e200, 1e200]], dtype=torch.float64)}])
    zero_size = zero_shot_detection_f1([{"a": [[0.0, 0.0, 0.0, 2.0]]}], good)  # zero width is a valid empty box
    assert float(zero_size["fp"]) == 1.0


@pytest.mark.parametrize("exponent", [-80, 80])
def test_float32_boxes_at_extreme_scales_score_as_at_unit_scale(exponent):
    # float32 IoU of boxes at 1e24 was 0 (products overflow), so every hit became a miss
    preds, target = _wide_random_data(11, 30, 1, 0, torch.float32)
    scaled = [[{k: v * 2.0**exponent for k, v in d.items()} for d in side] for side in (preds, target)]
    for preset in ("aij2021", "strict"):
        expected = zero_shot_detection_f1(preds, target, preset=preset)
        ours = zero_shot_detection_f1(*scaled, preset=preset)
        assert {k: float(v) for k, v in ours.items()} == {k: float(v) for k, v in expected.items()}
        assert float(expected["tp"]) >= 5


@pytest.mark.parametrize("preset,reference", [("aij2021", aij2021_reference), ("strict", strict_reference)])
def test_float32_boxes_at_the_threshold_decide_as_the_official_doubles(preset, reference):
    # a box shifted by a third of its width has IoU 0.5 up to rounding: float32 arithmetic flipped about a quarter
    # of these hits against the official script, which computes on the same coordinates in Python floats
    r = random.Random(3)
    preds, target = [], []
    for _ in range(200):
        x, y, w, h = r.uniform(0, 20), r.uniform(0, 20), r.uniform(0.5, 10), r.uniform(0.5, 10)
        target.append({"a": torch.tensor([[x, y, w, h]], dtype=torch.float32)})
        preds.append({"a": torch.tensor([[x + w / 3, y, w, h]], dtype=torch.float32)})
    expected = reference(preds, target)
    assert 20 < expected["tp"] < 180  # both sides of the threshold occur
    ours = zero_shot_detection_f1(preds, target, preset=preset)
    assert {k: float(v) for k, v in ours.items()} == pytest.approx(expected, abs=1e-12)



@pytest.mark.parametrize("preset,reference", [("aij2021", aij2021_reference), ("strict", strict_reference)])
def test_iou_rounds_as_the_official_script_and_lists_are_doubles(preset, reference):
    # found fuzzing at iou_threshold=1 against an oracle with areas w·h (identical boxes: IoU 0.9999999999999993,
    # a miss; the official corners-first IoU is exactly 1) that read lists through float32 (two different doubles
    # became one box); the library reads lists as float64 and rounds as the official script
    box = [5.94349288345359, 10.435224934777086, 4.4984051272788035, 0.8297475024383574]
    near = [6.924287796020508, 2.783233880996704, 1.682540774345398, 0.6796483397483826]  # float32 values
    near64 = [6.924287816212284, 2.783233812243216, 1.6825407385089262, 0.6796483318949913]  # rounds to `near`
    cases = [
        ({"a": torch.tensor([box], dtype=torch.float64)}, {"a": torch.tensor([box], dtype=torch.float64)}, 1),
        ({"a": [box]}, {"a": torch.tensor([box], dtype=torch.float64)}, 1),
        ({"b": [near]}, {"b": [near64]}, 0),
        ({"b": torch.tensor([near], dtype=torch.float32)}, {"b": [near]}, 1),
    ]
    for pred, gt, hit in cases:
        ours = zero_shot_detection_f1([pred], [gt], preset=preset, iou_threshold=1.0)
        assert (float(ours["tp"]), float(ours["fp"])) == (hit, 1 - hit), (pred, gt)
        assert {k: float(v) for k, v in ours.items()} == reference([pred], [gt], 1.0)


def test_meta_boxes_are_errors_naming_the_argument():
    """Boxes on the ``meta`` device (no values) failed deep inside torch (``NotImplementedError``); found by fuzzing."""
    box = torch.tensor([[0.0, 0.0, 1.0, 1.0]])
    with pytest.raises(ValueError, match=r"`preds\[0\]\['cat'\]` is a tensor on the meta device"):
        zero_shot_detection_f1([{"cat": box.to("meta")}], [{"cat": box}])
    metric = ZeroShotDetectionF1()
    with pytest.raises(ValueError, match=r"`target\[0\]\['cat'\]` is a tensor on the meta device"):
        metric.update([{"cat": box}], [{"cat": box.to("meta")}])
    metric.update([{"cat": box}], [{"cat": box}])
    assert float(metric.compute()["f1"]) == 1.0


@pytest.mark.parametrize("name", ["zero_shot_f1_strict", "zero_shot_f1_strict_crowded"])
def test_benchmark_case_runs_at_a_tiny_size(name):
    from benchmarks.__main__ import CASES, load_cases, run_case

    load_cases()
    rows = run_case(CASES[name], 3, "cpu", repeats=1)  # raises when gpumetrics and the anchor disagree
    assert rows and all(row["ours_s"] > 0 for row in rows)
