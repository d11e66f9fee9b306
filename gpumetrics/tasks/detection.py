"""Task metrics for detection: zero-shot detection F1 (AIJ 2021 sub-task 3)."""

from __future__ import annotations

from typing import Any

import torch

from gpumetrics.detection.zero_shot_f1 import ZeroShotDetectionF1
from gpumetrics.tasks.registry import TaskMetric, register_metric


def _box_dict(value: Any, what: str) -> dict:
    if not isinstance(value, dict):
        raise TypeError(f"{what} must be a JSON object label → list of [x, y, w, h], got {type(value).__name__}")
    out = {}
    for label, boxes in value.items():
        if isinstance(boxes, list) and not boxes:
            out[label] = torch.zeros(0, 4, dtype=torch.float64)
            continue
        try:
            out[label] = torch.as_tensor(boxes, dtype=torch.float64).reshape(-1, 4)
        except (TypeError, ValueError, RuntimeError):
            raise ValueError(f"{what}[{label!r}] must be a list of [x, y, w, h] boxes, got {boxes!r:.80}") from None
    return out


def zero_shot_update_args(predictions: list[Any], references: list[list[Any]]) -> tuple:
    """Records → ``update(preds, target)``: each prediction is ``{label: [[x, y, w, h], …]}``, each reference
    record holds one such dict (``"references": {…}`` or ``"references": [{…}]``)."""
    preds = [_box_dict(p, f"prediction {i}") for i, p in enumerate(predictions)]
    target = []
    for i, refs in enumerate(references):
        ref = refs[0] if isinstance(refs, list) and len(refs) == 1 else refs
        target.append(_box_dict(ref, f"references {i}"))
    return preds, target


register_metric(TaskMetric(
    name="zero_shot_detection_f1",
    factory=ZeroShotDetectionF1,
    description="zero-shot detection F1 over queried classes, boxes [x, y, w, h] (presets: aij2021, strict) — docs/metrics.md §5",
    empty_prediction={},
    update_args=zero_shot_update_args,
    primary="f1",
))
