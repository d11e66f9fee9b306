"""What the catalog's entries need beyond a factory: update-argument adapters for non-text records, per-sample
scorers and the runner hooks (``safe_cut``, ``prepare``). Metric modules are imported inside the functions, on use."""

from __future__ import annotations

from typing import Any, Callable, Optional

import torch

from gpumetrics.core import Metric


# ---------------------------------------------------------------------------------------------------- hooks
def ptb_safe_cut(metric: Metric) -> Optional[Callable[[Any, Any], bool]]:
    """``TaskMetric.safe_cut`` of the metrics that can tokenise a batch as one pycocoevalcap PTB call (BLEU coco,
    CIDEr, ROUGE coco, the COCO table): in such a call a caption's tokens can depend on the next sample's, so the
    runner cuts batches only after samples where that cannot happen (``text.tokenize.ptb.ptb_sample_reads_next``)."""
    if not metric.ptb_reads_next_sample:
        return None
    from gpumetrics.text.tokenize.ptb import ptb_sample_reads_next

    return ptb_sample_reads_next


# ---------------------------------------------------------------------------------------------------- per sample
def error_rate_per_sample(cls_path: str) -> Callable[[dict, Any], Callable[..., Any]]:
    """Each sample's own rate: its edits / its best reference's length (the corpus rate pools these)."""

    def build(options: dict, device: Any) -> Callable[..., Any]:
        from gpumetrics.harness.registry import resolve
        from gpumetrics.text.edit import error_rate_compute, error_rate_pairs

        metric = resolve(cls_path)(**options)  # checks the options and resolves the default transform

        def score(preds: list, target: list) -> Any:
            return error_rate_compute(*error_rate_pairs(preds, target, metric.unit, metric.backend, device, metric.transform))

        return score

    return build


# ---------------------------------------------------------------------------------------------------- adapters
def single_reference(refs: Any) -> Any:
    """A sample's one reference: ``"references": {…}`` or ``[{…}]``."""
    return refs[0] if isinstance(refs, list) and len(refs) == 1 else refs


def vqa_update_args(predictions: list[Any], references: list[Any]) -> tuple:
    """Records → ``update(preds, target, lang)``: each reference is ``{"answers": [gold, …], "lang": "en" | "ru"}``
    (``"references": {…}`` or ``[{…}]``).

    Raises:
        TypeError: naming the sample (its index in the batch).
    """
    target, langs = [], []
    for index, refs in enumerate(references):
        ref = single_reference(refs)
        if not isinstance(ref, dict) or "answers" not in ref or "lang" not in ref:
            raise TypeError(f'references {index} must be one object {{"answers": [gold, …], "lang": "en"|"ru"}}, '
                            f"got {ref!r:.80}")
        target.append(ref["answers"])
        langs.append(ref["lang"])
    return predictions, target, langs


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
    target = [_box_dict(single_reference(refs), f"references {i}") for i, refs in enumerate(references)]
    return preds, target
