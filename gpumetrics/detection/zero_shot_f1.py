"""Zero-shot object detection F1 (AIJ 2021, sub-task 3; docs/metrics/detection.md).

Per image, per queried class, boxes ``[x, y, w, h]``:

* preset ``"aij2021"`` (the official ``zsOD_F1/evaluate.py``) — the queried classes are the ground truth's labels
  only: a predicted label the ground truth does not list is ignored. A queried class with no ground-truth box but
  predicted → every predicted box is FP; no predicted box for a present class → every ground-truth box is FN; otherwise
  FN = max(0, #gt − #pred) (raw list lengths), and each predicted box is TP if its IoU with any ground-truth box of that
  class is ≥ the threshold, else FP, where a box identical to the one just before it in the list is skipped (consecutive
  duplicates count once);
* preset ``"strict"`` — the queried classes are the union of both dicts' labels; one-to-one matching, greedy by
  decreasing IoU (ties: earlier prediction, then earlier ground truth) among pairs with IoU ≥ threshold; TP = matches,
  FP = #pred − TP, FN = #gt − TP.

A ground-truth class missing from the prediction dict counts as predicted empty. TP/FP/FN are micro-summed over
images and classes; precision, recall and F1 are 0 when their denominator is 0. IoU is computed in float64 whatever
the boxes' dtype (float32 coordinates are exact doubles), as the official script computes in Python floats.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core import Metric, check_choice, check_real, single_threaded
from gpumetrics.core.checks import check_holds_data
from gpumetrics.core.positions import at_position, sample_error
from gpumetrics.core.transfer import upload, upload_all
from gpumetrics.kernels.iou import MAX_COORDINATE, block_box_iou_hits, coordinates_in_range
from gpumetrics.kernels.ragged import scatter_any, segment_ids

__all__ = ["ZeroShotDetectionF1", "zero_shot_detection_f1"]

PRESETS = ("aij2021", "strict")


def _boxes(value: Any, name: str) -> Tensor:
    if isinstance(value, Tensor):
        boxes = value
    elif isinstance(value, (list, tuple)):
        if len(value) == 0:
            return torch.zeros(0, 4, dtype=torch.float64)
        try:
            boxes = torch.as_tensor(value, dtype=torch.float64)
        except (TypeError, ValueError) as err:
            raise TypeError(f"`{name}` must be a Tensor[K, 4] or a list of [x, y, w, h]: {err}") from None
    else:
        raise TypeError(f"`{name}` must be a Tensor[K, 4] or a list of [x, y, w, h], got {type(value).__name__}")
    check_holds_data(boxes, name)
    if boxes.dtype == torch.bool or boxes.is_complex():
        raise TypeError(f"`{name}` must hold real coordinates, got dtype {boxes.dtype}")
    if boxes.numel() == 0:
        return boxes.reshape(0, 4).double()
    if boxes.dim() != 2 or boxes.shape[1] != 4:
        raise ValueError(f"`{name}` must have shape [K, 4] ([x, y, w, h] boxes), got {list(boxes.shape)}")
    return boxes.double() if not boxes.is_floating_point() else boxes


def _bad_values(boxes: Tensor) -> Tensor:
    """``BoolTensor[]``: ``boxes: Tensor[K, 4]`` holds a non-finite, negative-size or out-of-range value."""
    return ~(coordinates_in_range(boxes) & (boxes[:, 2:] >= 0).all())


def _check_values(boxes: Tensor, name: str) -> None:
    """Raise naming ``name`` if ``boxes: Tensor[K, 4]`` holds a non-finite, negative-size or out-of-range value."""
    if not bool(_bad_values(boxes)):
        return
    if not bool(torch.isfinite(boxes).all()):
        raise ValueError(f"`{name}` holds NaN or infinite coordinates")
    if bool((boxes[:, 2:] < 0).any()):
        raise ValueError(f"`{name}` holds [x, y, w, h] boxes with a negative width or height; w, h must be ≥ 0")
    raise ValueError(f"`{name}` holds coordinates beyond ±{MAX_COORDINATE:g}; scale the coordinates down")


def _images(value: Any, name: str) -> list[Mapping]:
    if isinstance(value, Mapping):
        raise TypeError(f"`{name}` must be a list with one dict label → boxes per image, got a single dict")
    if isinstance(value, (str, Tensor)) or not isinstance(value, Sequence):
        raise TypeError(f"`{name}` must be a list with one dict label → boxes per image, got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise sample_error(TypeError, name, i, f"must be a dict label → boxes, got {type(item).__name__}")
    return list(value)


def _flatten(images: list[Mapping], name: str, groups: list[tuple[int, Any]]) -> tuple[Tensor, np.ndarray, list]:
    """Boxes of each (image, label) group, group after group, the host count of each group and the parts (for
    naming a bad group: :func:`_check_sides`; an error is tagged with its image's position)."""
    names = [f"{name}[{image}][{label!r}]" for image, label in groups]
    parts = []
    for (image, label), group in zip(groups, names):
        try:
            parts.append(_boxes(images[image].get(label, []), group))
        except (TypeError, ValueError) as error:
            raise at_position(error, image)
    counts = np.fromiter((boxes.shape[0] for boxes in parts), dtype=np.int64, count=len(parts))
    device = next((p.device for p in parts if p.numel()), torch.device("cpu"))
    dtype = torch.float64 if any(p.dtype == torch.float64 for p in parts) or not parts else torch.float32
    flat = torch.cat([upload(p, device, dtype) for p in parts]) if parts else torch.zeros(0, 4, dtype=dtype)
    return flat, counts, list(zip(parts, names, (image for image, _ in groups)))


def _check_sides(sides: list[tuple[Tensor, str, list]]) -> None:
    """Check the boxes of every side at once (one host read); on failure name the first offending group."""
    if not bool(torch.stack([_bad_values(flat.double()) for flat, _, _ in sides]).any()):
        return
    for flat, name, parts in sides:  # error path only
        try:
            _check_values(flat.double(), name)
        except ValueError:
            for boxes, group, image in parts:
                try:
                    _check_values(boxes.double(), group)
                except ValueError as error:
                    raise at_position(error, image)
            raise


def _zsd_update(preds: Any, target: Any, preset: str = "aij2021", iou_threshold: float = 0.5) -> Tensor:
    """``Tensor[3]`` (long): TP, FP, FN of the batch."""
    check_choice(preset, "preset", PRESETS)
    check_real(iou_threshold, "iou_threshold", at_least=0, at_most=1)
    preds, target = _images(preds, "preds"), _images(target, "target")
    if len(preds) != len(target):
        raise ValueError(f"`preds` and `target` must have the same number of samples, "
                         f"got {len(preds)} and {len(target)}")
    groups = []
    for i, (p, t) in enumerate(zip(preds, target)):
        labels = list(t) if preset == "aij2021" else list(p) + [label for label in t if label not in p]
        groups.extend((i, label) for label in labels)
    pb, host_p, parts_p = _flatten(preds, "preds", groups)
    gb, host_g, parts_g = _flatten(target, "target", groups)
    device = pb.device if pb.numel() else gb.device
    pb, gb = upload(pb, device), upload(gb, device)  # no-ops unless one side came from the host
    stats = torch.zeros(3, dtype=torch.long, device=device)
    if not groups:
        return stats
    _check_sides([(pb, "preds", parts_p), (gb, "target", parts_g)])
    cp, cg = upload_all([host_p, host_g], device)
    # IoU is compared with the threshold in float64, as the official script does in Python floats: float32
    # arithmetic flips hits whose IoU is within rounding of the threshold (a box shifted by a third of its width)
    pb, gb = pb.double(), gb.double()
    # the pairs of a group at or above the threshold, by dense per-group IoU blocks of the boxes checked above (one
    # host read for an ordinary batch); w, h ≥ 0
    ip, ig, iou = block_box_iou_hits(_xyxy(pb), cp, _xyxy(gb), cg, host_p, host_g, float(iou_threshold))
    if preset == "aij2021":
        group_of_pred = segment_ids(cp, pb.shape[0])
        absent = cg == 0  # class not in the ground truth: every predicted box is FP
        tp_candidates = scatter_any(torch.ones_like(ip, dtype=torch.bool), ip, pb.shape[0])
        dup = torch.zeros(pb.shape[0], dtype=torch.bool, device=device)
        if pb.shape[0] > 1:
            dup[1:] = (group_of_pred[1:] == group_of_pred[:-1]) & (pb[1:] == pb[:-1]).all(dim=1)
        scored = ~dup & ~absent[group_of_pred]
        stats[0] = (tp_candidates & scored).sum()
        stats[1] = (~tp_candidates & scored).sum() + torch.where(absent, cp, 0).sum()
        stats[2] = torch.where(cp == 0, cg, (cg - cp).clamp(min=0)).sum()
        return stats

    rounds = int(np.minimum(host_p, host_g).max())
    matches = _greedy_by_iou(ip, ig, iou, pb.shape[0], gb.shape[0], rounds).sum()
    stats[0] = matches
    stats[1] = cp.sum() - matches
    stats[2] = cg.sum() - matches
    return stats


def _xyxy(boxes: Tensor) -> Tensor:
    """``[x, y, w, h]`` → ``[x1, y1, x2, y2]`` (``Tensor[K, 4]``)."""
    return torch.cat([boxes[:, :2], boxes[:, :2] + boxes[:, 2:]], dim=1)


_FIRST_BURST = 4  # rounds of _greedy_by_iou before its first host read


def _greedy_by_iou(ip: Tensor, ig: Tensor, iou: Tensor, n_p: int, n_g: int, rounds: int) -> Tensor:
    """The greedy one-to-one matching by decreasing IoU among pairs that may all match, in rounds of mutually-best
    pairs.

    With a strict total order on pairs (IoU, then earlier prediction, then earlier ground truth), repeatedly taking
    every remaining pair that is the best remaining pair of both its prediction and its ground truth gives exactly
    the sequential greedy matching. Groups (image, class) share no box, and each round takes at least the best
    remaining pair of every group that has one, so ``rounds`` = the most matches a group can have (``min(#pred,
    #gt)``, from host sizes) ends every group. The caller hands over only the pairs at or above the threshold.
    Rounds run in bursts on fixed shapes (no mask indexing): 4 rounds, then 8, 16 … (~16 kernel launches a round);
    between bursts one host read compacts the pairs still alive and ends the loop when none is. Groups of at most 4
    boxes a side end within the first burst (no read); a crowded class needing R rounds costs at most
    ⌈log₂(R / 4)⌉ + 1 reads and at most twice its rounds of work on ever fewer pairs (a fixed ``rounds`` loop over
    all pairs would cost ``rounds`` × pairs). Memory linear in the pairs.

    Args:
        ip, ig: ``LongTensor[E]`` flat prediction / ground-truth index of each pair, sorted by ``(ip, ig)``.
        iou: ``Tensor[E]`` their IoU.
        n_p, n_g: numbers of predictions and ground truths.
        rounds: an upper bound on the matches of one group.

    Returns:
        ``BoolTensor[E]``: the matched pairs.
    """
    device, n = ip.device, ip.numel()
    matched = torch.zeros(n, dtype=torch.bool, device=device)
    if n == 0:
        return matched
    order = torch.argsort(-iou, stable=True)  # pairs come sorted by (prediction, ground truth): the ties' order
    ip, ig, alive = ip[order], ig[order], torch.ones(n, dtype=torch.bool, device=device)
    rank = torch.arange(n, device=device)  # a pair's place in the order; kept through the compactions
    taken = torch.zeros(n + 1, dtype=torch.bool, device=device)  # by rank; taken[n]: "no pair", never taken
    done, burst = 0, _FIRST_BURST
    while True:
        for _ in range(min(burst, rounds - done)):
            key = torch.where(alive, rank, n)
            best_p = torch.full((n_p,), n, dtype=torch.long, device=device).scatter_reduce_(0, ip, key, reduce="amin")
            best_g = torch.full((n_g,), n, dtype=torch.long, device=device).scatter_reduce_(0, ig, key, reduce="amin")
            bp, bg = best_p[ip], best_g[ig]
            taken[rank] |= (bp == rank) & (bg == rank)
            # a box is used once the best remaining pair of its own was taken
            alive &= ~(taken[bp] | taken[bg])
        done += burst
        if done >= rounds:
            break
        keep = alive.nonzero().squeeze(1)  # the one host read of a burst
        if keep.numel() == 0:
            break
        ip, ig, rank, alive = ip[keep], ig[keep], rank[keep], alive[keep]
        burst *= 2
    matched[order] = taken[:n]
    return matched


def _zsd_compute(stats: Tensor) -> dict[str, Tensor]:
    tp, fp, fn = stats.double().unbind()
    precision = torch.where(tp + fp > 0, tp / (tp + fp).clamp(min=1), 0.0)
    recall = torch.where(tp + fn > 0, tp / (tp + fn).clamp(min=1), 0.0)
    denom = precision + recall
    f1 = torch.where(denom > 0, 2 * precision * recall / torch.where(denom > 0, denom, 1.0), 0.0)
    return {"precision": precision, "recall": recall, "f1": f1, "tp": stats[0], "fp": stats[1], "fn": stats[2]}


@single_threaded
def zero_shot_detection_f1(
    preds: Sequence[Mapping[Any, Tensor]],
    target: Sequence[Mapping[Any, Tensor]],
    preset: str = "aij2021",
    iou_threshold: float = 0.5,
) -> dict[str, Tensor]:
    """Zero-shot detection precision / recall / F1 over images and queried classes.

    Args:
        preds: per image, a dict ``label → Tensor[K, 4]`` of predicted ``[x, y, w, h]`` boxes (a list of 4-number
            lists is accepted too; an empty list means "queried, nothing found").
        target: per image, a dict ``label → Tensor[K, 4]`` of ground-truth ``[x, y, w, h]`` boxes; a label absent
            or with no box is a negative query.
        preset: ``"aij2021"`` (AIJ 2021 rules: the ground truth's labels only, any-overlap TP) or ``"strict"``
            (union of labels, greedy one-to-one by IoU).
        iou_threshold: a prediction hits a ground-truth box when IoU ≥ this value.

    Returns:
        dict of float64 scalars ``precision``, ``recall``, ``f1`` and the integer counts ``tp``, ``fp``, ``fn``.

    Raises:
        TypeError / ValueError: naming the argument — not a list of dicts, boxes not ``[K, 4]``, NaN/inf
        coordinates, a negative ``w`` or ``h``, different numbers of images, unknown preset.

    Example:
        >>> box = torch.tensor([[5., 5., 2., 2.]])
        >>> preds = [{"cat": torch.tensor([[0., 0., 10., 10.], [0., 0., 10., 10.]]), "dog": box, "bird": box}]
        >>> target = [{"cat": torch.tensor([[1., 1., 10., 10.], [50., 50., 5., 5.]]), "dog": torch.zeros(0, 4)}]
        >>> {k: float(v) for k, v in zero_shot_detection_f1(preds, target).items()}  # "bird" is not queried
        {'precision': 0.5, 'recall': 1.0, 'f1': 0.6666666666666666, 'tp': 1.0, 'fp': 1.0, 'fn': 0.0}
        >>> float(zero_shot_detection_f1(preds, target, preset="strict")["fp"])  # union of labels, one-to-one
        3.0
    """
    return _zsd_compute(_zsd_update(preds, target, preset, iou_threshold))


class ZeroShotDetectionF1(Metric):
    """Zero-shot detection F1 accumulated over images (rules: :func:`zero_shot_detection_f1`).

    ``update(preds, target)`` with per-image dicts ``label → Tensor[K, 4]`` (``[x, y, w, h]``); the state is the
    three integer sums TP, FP, FN.

    Args:
        preset: ``"aij2021"`` or ``"strict"``.
        iou_threshold: a prediction hits a ground-truth box when IoU ≥ this value.

    Example:
        >>> metric = ZeroShotDetectionF1()
        >>> metric.update([{"cat": torch.tensor([[0., 0., 4., 4.]])}], [{"cat": torch.tensor([[0., 0., 4., 4.]])}])
        >>> metric.update([{"cat": torch.tensor([[0., 0., 4., 4.]])}], [{"cat": torch.zeros(0, 4)}])
        >>> float(metric.compute()["f1"])
        0.6666666666666666
    """

    signature_name = "zero_shot_detection_f1"
    kernel_threads = 1
    higher_is_better = True

    def __init__(self, preset: str = "aij2021", iou_threshold: float = 0.5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        check_choice(preset, "preset", PRESETS)
        check_real(iou_threshold, "iou_threshold", at_least=0, at_most=1)
        self.preset, self.iou_threshold = preset, iou_threshold
        self.add_state("stats", default=torch.zeros(3, dtype=torch.long), dist_reduce_fx="sum")

    def update(self, preds: Any, target: Any) -> None:
        self.stats += upload(_zsd_update(preds, target, self.preset, self.iou_threshold), self.stats.device)

    def compute(self) -> dict[str, Tensor]:
        return _zsd_compute(self.stats)

    def _signature_fields(self) -> dict[str, Any]:
        return {"preset": self.preset, "iou": f">={self.iou_threshold}", "box": "xywh"}
