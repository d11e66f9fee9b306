"""Zero-shot detection F1 (``preset="strict"``: greedy one-to-one by decreasing IoU per image and class) against a
plain NumPy + Python implementation of the same rule, on the same boxes in the same process. The AIJ-2021
organisers' script (the ``aij2021`` preset's reference) cannot be installed, and no package implements ``strict``."""

from __future__ import annotations

import numpy as np
import torch

from benchmarks.registry import Contenders, register
from gpumetrics.functional import zero_shot_detection_f1

#: case → (classes an image, boxes a class on each side)
SHAPES = {"zero_shot_f1_strict": (5, 10), "zero_shot_f1_strict_crowded": (2, 200)}


def _boxes(rng: np.random.Generator, n: int) -> np.ndarray:
    """``float64[n, 4]`` ``[x, y, w, h]`` boxes of 5–45 pixels in a 200-pixel square."""
    return np.concatenate([rng.uniform(0, 200, (n, 2)), rng.uniform(5, 45, (n, 2))], 1)


def _data(images: int, classes: int, boxes: int, seed: int = 0) -> tuple[list[dict], list[dict]]:
    rng = np.random.default_rng(seed)
    labels = [f"class {k}" for k in range(classes)]
    preds = [{label: _boxes(rng, boxes) for label in labels} for _ in range(images)]
    target = [{label: _boxes(rng, boxes) for label in labels} for _ in range(images)]
    return preds, target


def _iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of every ``[x, y, w, h]`` box of ``a`` with every one of ``b``: ``float64[len(a), len(b)]``."""
    low = np.maximum(a[:, None, :2], b[None, :, :2])
    high = np.minimum(a[:, None, :2] + a[:, None, 2:], b[None, :, :2] + b[None, :, 2:])
    inter = np.clip(high - low, 0, None).prod(2)
    union = a[:, None, 2:].prod(2) + b[None, :, 2:].prod(2) - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def strict_numpy(preds: list[dict], target: list[dict], threshold: float = 0.5) -> tuple[int, int, int]:
    """``(tp, fp, fn)``: per image and class, the IoU matrix in NumPy, then the pairs at or above the threshold by
    decreasing IoU (ties: earlier prediction, then earlier ground truth), each taken when both boxes are free."""
    tp = fp = fn = 0
    for pred, gt in zip(preds, target):
        for label in pred.keys() | gt.keys():
            p, g = pred.get(label, np.zeros((0, 4))), gt.get(label, np.zeros((0, 4)))
            matches = 0
            if len(p) and len(g):
                iou = _iou_matrix(p, g)
                ii, jj = np.nonzero(iou >= threshold)
                order = np.lexsort((jj, ii, -iou[ii, jj]))
                used_p, used_g = set(), set()
                for i, j in zip(ii[order].tolist(), jj[order].tolist()):
                    if i not in used_p and j not in used_g:
                        used_p.add(i)
                        used_g.add(j)
                matches = len(used_p)
            tp, fp, fn = tp + matches, fp + len(p) - matches, fn + len(g) - matches
    return tp, fp, fn


def _case(name: str, size: int, device: str) -> Contenders:
    classes, boxes = SHAPES[name]
    preds, target = _data(size, classes, boxes)
    as_tensors = [[{label: torch.from_numpy(b).to(device) for label, b in image.items()} for image in side]
                  for side in (preds, target)]

    def ours() -> tuple[int, int, int]:
        out = zero_shot_detection_f1(*as_tensors, preset="strict")
        return int(out["tp"]), int(out["fp"]), int(out["fn"])

    return Contenders(
        ours={"zero_shot_detection_f1(preset=strict)": ours},
        anchors={"NumPy IoU matrix + Python greedy per image and class": lambda: strict_numpy(preds, target)},
        check=lambda x, y: x == y,
        note=f"{classes} classes an image, {boxes} predicted and {boxes} ground-truth boxes a class (uniform in a "
             "200-pixel square, 5–45 pixels a side), float64",
    )


@register("zero_shot_f1_strict", sizes=(1_000,), quick_sizes=(50,), unit="images × 5 classes × 10 boxes", repeats=5)
def zero_shot_f1_strict_case(size: int, device: str) -> Contenders:
    return _case("zero_shot_f1_strict", size, device)


@register("zero_shot_f1_strict_crowded", sizes=(20,), quick_sizes=(2,), unit="images × 2 classes × 200 boxes",
          repeats=3)
def zero_shot_f1_strict_crowded_case(size: int, device: str) -> Contenders:
    return _case("zero_shot_f1_strict_crowded", size, device)
