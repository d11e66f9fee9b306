"""OCR end-to-end evaluation: detection (bbox) and detection + recognition (e2e) precision / recall / F1.

Two matching rules (docs/metrics/detection.md):

* ``"many-to-many"``: with IoU > threshold, a prediction is matched if it overlaps any cared ground
  truth, a ground truth is matched if any prediction overlaps it; e2e also needs equal text. A prediction that is
  not matched but overlaps a don't-care ground truth (text ``"###"``) is don't-care and leaves the precision
  denominator. Precision 0/0 = 1, recall 0/0 = 1.
* ``"icdar15"`` (ICDAR 2015 Robust Reading, incidental text): predictions covering a don't-care ground truth by
  intersection / prediction area > 0.5 are don't-care; then greedy one-to-one matching in ground-truth order, each
  ground truth taking the first free prediction with IoU > threshold; e2e counts the matched pairs whose texts are
  equal ignoring case. Global precision / recall are 0 when their denominators are 0; per-image values follow the
  ICDAR script (no cared ground truth → recall 1, precision 1 if no cared prediction else 0).

With no image at all (``compute()`` before any ``update``, or updates with empty image lists) every rate is 0.0 under
both rules, as for every gpumetrics score with nothing to score; the 0/0 rules above apply to images that were
evaluated, e.g. images whose ground truths are all don't-care.

IoU is computed in float64 for every input dtype (float32 coordinates are exact doubles), so a pair within float32
rounding of the threshold is decided as in double arithmetic. A pair whose IoU (or ICDAR intersection / prediction
area) equals the threshold up to the float64 noise of its areas (64·eps·extent²) is an exact tie and does not
overlap (strict >): grid quads at IoU exactly 1/2, or that only touch at threshold 0, round either way otherwise
(shapely too). All counts are integers micro-summed over images, so
the DDP state is one all-reduce of 9 numbers.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core import Metric, check_choice, check_real, single_threaded
from gpumetrics.core.positions import sample_error
from gpumetrics.core.transfer import upload, upload_all
from gpumetrics.detection.iou import check_finite_quads, flatten_quads
from gpumetrics.kernels.iou import (
    block_overlap_pairs, coordinates_in_range, normalize_quads, paired_intersection_areas, quad_areas, work_dtype,
)
from gpumetrics.kernels.ragged import scatter_any, segment_ids, segment_starts
from gpumetrics.kernels.vocab import dense_ids

__all__ = ["OCREndToEnd", "ocr_end_to_end"]

MATCHINGS = ("many-to-many", "icdar15")
# columns of the per-image count table
_COUNTS = (
    "n_pred",
    "n_gt",
    "bbox_matched_pred",
    "bbox_matched_gt",
    "bbox_dontcare_pred",
    "e2e_matched_pred",
    "e2e_matched_gt",
    "e2e_dontcare_pred",
    "n_images",
)
_ICDAR_AREA_PRECISION = 0.5
_TIE_ULPS = 64  # |error| of a pair's area terms in units of eps·extent² (the quad kernel's resolution is 16)


def _texts(value: Any, name: str, counts: list[int]) -> list[str]:
    if isinstance(value, (str, Tensor)) or not isinstance(value, Sequence):
        raise TypeError(f"`{name}` must be a list with one list of strings per image, got {type(value).__name__}")
    if len(value) != len(counts):
        raise ValueError(f"`{name}` has {len(value)} images but its polygons have {len(counts)}")
    flat: list[str] = []
    for i, (texts, n) in enumerate(zip(value, counts)):
        if isinstance(texts, str) or not isinstance(texts, Sequence):
            raise sample_error(TypeError, name, i, f"must be a list of strings, got {type(texts).__name__}")
        if len(texts) != n:
            raise sample_error(ValueError, name, i, f"has {len(texts)} strings but the image has {n} polygons")
        for j, text in enumerate(texts):
            if not isinstance(text, str):
                raise sample_error(TypeError, name, i, f"must be a string, got {type(text).__name__}", inner=[j])
        flat.extend(texts)
    return flat


def _check_options(matching: str, iou_threshold: float, dont_care: str, case_sensitive: Optional[bool]) -> bool:
    check_choice(matching, "matching", MATCHINGS)
    check_real(iou_threshold, "iou_threshold", at_least=0, at_most=1)
    if not isinstance(dont_care, str):
        raise TypeError(f"`dont_care` must be a string, got {type(dont_care).__name__}")
    if case_sensitive is None:
        return matching != "icdar15"
    if not isinstance(case_sensitive, bool):
        raise TypeError(f"`case_sensitive` must be a bool or None, got {type(case_sensitive).__name__}")
    return case_sensitive


def _ocr_e2e_update(
    pred_polys: Any,
    pred_texts: Any,
    gt_polys: Any,
    gt_texts: Any,
    matching: str = "many-to-many",
    iou_threshold: float = 0.5,
    dont_care: str = "###",
    case_sensitive: Optional[bool] = None,
) -> Tensor:
    """Per-image counts ``Tensor[B, 9]`` (long; columns ``_COUNTS``)."""
    case_sensitive = _check_options(matching, iou_threshold, dont_care, case_sensitive)
    preds, n_pred = flatten_quads(pred_polys, "pred_polys", check_finite=False)
    gts, n_gt = flatten_quads(gt_polys, "gt_polys", check_finite=False)
    if n_pred.numel() != n_gt.numel():
        raise ValueError(f"`pred_polys` and `gt_polys` must hold the same number of images, "
                         f"got {n_pred.numel()} and {n_gt.numel()}")
    device = preds.device if preds.numel() else gts.device
    n_pred, n_gt = upload(n_pred, device), upload(n_gt, device)
    n_img, total_p, total_g = n_pred.numel(), preds.shape[0], gts.shape[0]
    # float64 whatever the input dtype: IoU is compared with a threshold, and float32 arithmetic decided pairs whose
    # IoU (on the very same coordinates) lies within ~1e-6 of it the other way from shapely's double arithmetic
    preds, gts = upload(preds, device, torch.float64), upload(gts, device, torch.float64)
    # one host read: the sizes and the coordinate checks (NaN, ±inf and |x| > MAX_COORDINATE all fail the test)
    in_range = torch.stack([coordinates_in_range(x) for x in (preds, gts)]).long()
    head = np.array(torch.cat([n_pred, n_gt, in_range]).tolist(), dtype=np.int64)
    host_p, host_g = head[:n_img], head[n_img : 2 * n_img]
    if not head[2 * n_img :].all():  # error path: name the image, or the coordinate beyond the supported range
        check_finite_quads(preds, n_pred, "pred_polys")
        check_finite_quads(gts, n_gt, "gt_polys")
        work_dtype(preds, gts, names=("pred_polys", "gt_polys"))
    p_texts = _texts(pred_texts, "pred_texts", host_p.tolist())
    g_texts = _texts(gt_texts, "gt_texts", host_g.tolist())

    # text ids: equal ids ⇔ equal texts (after case folding when case-insensitive), from the shared vocabulary builder
    texts = [*p_texts, *g_texts]
    text_ids, _ = dense_ids(texts if case_sensitive else [text.upper() for text in texts])
    g_dc_host = np.fromiter((t == dont_care for t in g_texts), dtype=np.int64, count=len(g_texts))
    text_ids, g_dc = upload_all([np.asarray(text_ids, dtype=np.int64), g_dc_host], device)  # one host-to-device copy
    p_ids, g_ids = text_ids[: len(p_texts)], text_ids[len(p_texts):]
    g_dc = g_dc.bool()

    pred_img = segment_ids(n_pred, total_p)
    gt_img = segment_ids(n_gt, total_g)

    # IoU of every (prediction, ground truth) pair of the same image whose bounding boxes overlap
    preds, gts = normalize_quads(preds), normalize_quads(gts)
    area_p, area_g = quad_areas(preds), quad_areas(gts)
    # a quad of zero area overlaps nothing (its pairs could not pass either test below): an empty bounding box
    low_p, high_p, low_g, high_g = (
        torch.where(area[:, None] > 0, corners, fill)
        for area, corners, fill in ((area_p, preds.amin(1), math.inf), (area_p, preds.amax(1), -math.inf),
                                    (area_g, gts.amin(1), math.inf), (area_g, gts.amax(1), -math.inf))
    )
    ip, ig = block_overlap_pairs(low_p, high_p, n_pred, low_g, high_g, n_gt, host_counts=(host_p, host_g))
    inter = paired_intersection_areas(preds[ip], gts[ig], area_p[ip], area_g[ig], overlapping=True)
    # IoU > t  ⇔  (1 + t)·inter − t·(area_p + area_g) > 0, decided beyond the float64 noise of the pair's areas: an
    # exact tie (IoU = t on grid coordinates, polygons that only touch when t = 0) rounds either way otherwise
    extent = (torch.maximum(high_p[ip], high_g[ig]) - torch.minimum(low_p[ip], low_g[ig])).amax(1)
    noise = _TIE_ULPS * torch.finfo(torch.float64).eps * extent * extent
    overlap = (1 + iou_threshold) * inter - iou_threshold * (area_p[ip] + area_g[ig]) > noise
    same_text = p_ids[ip] == g_ids[ig]
    pair_dc = g_dc[ig]

    counts = torch.zeros(n_img, len(_COUNTS), dtype=torch.long, device=device)
    counts[:, 0] = n_pred
    counts[:, 1] = n_gt - torch.zeros(n_img, dtype=torch.long, device=device).index_add_(0, gt_img, g_dc.long())
    counts[:, 8] = 1

    def per_image(flags: Tensor, image: Tensor) -> Tensor:
        return torch.zeros(n_img, dtype=torch.long, device=device).index_add_(0, image, flags.long())

    if matching == "many-to-many":
        cared = overlap & ~pair_dc
        touches_dc = scatter_any(overlap & pair_dc, ip, total_p)
        bbox_pm = scatter_any(cared, ip, total_p)
        bbox_gm = scatter_any(overlap, ig, total_g) & ~g_dc
        e2e_pm = scatter_any(cared & same_text, ip, total_p)
        e2e_gm = scatter_any(overlap & same_text, ig, total_g) & ~g_dc
        counts[:, 2] = per_image(bbox_pm, pred_img)
        counts[:, 3] = per_image(bbox_gm, gt_img)
        counts[:, 4] = per_image(~bbox_pm & touches_dc, pred_img)
        counts[:, 5] = per_image(e2e_pm, pred_img)
        counts[:, 6] = per_image(e2e_gm, gt_img)
        counts[:, 7] = per_image(~e2e_pm & touches_dc, pred_img)
        return counts

    # icdar15: don't-care predictions by intersection / prediction area, then greedy one-to-one in GT order
    covered = inter - _ICDAR_AREA_PRECISION * area_p[ip] > noise  # intersection / prediction area > 0.5, ties as above
    p_dc = scatter_any(pair_dc & covered, ip, total_p)
    eligible = overlap & ~pair_dc & ~p_dc[ip]
    pair_img = pred_img[ip]
    gt_pos = ig - segment_starts(n_gt)[pair_img]
    taken = _greedy_in_gt_order(ip, pair_img, gt_pos, eligible, total_p, int(host_g.max(initial=0)))
    counts[:, 2] = counts[:, 3] = per_image(taken, pair_img)
    counts[:, 4] = counts[:, 7] = per_image(p_dc, pred_img)
    counts[:, 5] = counts[:, 6] = per_image(taken & same_text, pair_img)
    return counts


def _greedy_in_gt_order(
    ip: Tensor, image: Tensor, gt_pos: Tensor, eligible: Tensor, total_p: int, max_gt: int
) -> Tensor:
    """ICDAR greedy one-to-one matching: ground truths in order, each taking the first free eligible prediction.

    Images are independent, so this is the sequential greedy over each image's pairs in (ground truth, prediction)
    order. Step ``k`` decides the ``k``-th ground truth of every image at once, on the slice of eligible pairs of
    that position (sorted by position, then prediction): each image's first pair whose prediction is still free is
    taken (a segment ``amin``). The slices' sizes are the one host read; the steps read nothing and index no mask.
    Work and memory are linear in the pairs; 8 kernel launches per step, one step per ground-truth position that has
    an eligible pair in some image (at most ``max_gt``).

    Args:
        ip: ``LongTensor[E]`` flat prediction index of each candidate pair.
        image: ``LongTensor[E]`` image of each pair.
        gt_pos: ``LongTensor[E]`` position of the pair's ground truth inside its image (``< max_gt``).
        eligible: ``BoolTensor[E]`` pairs that may match.
        total_p: number of predictions (``ip < total_p``).
        max_gt: most ground truths of an image.

    Returns:
        ``BoolTensor[E]``: the matched pairs.
    """
    n, device = ip.numel(), ip.device
    taken = torch.zeros(n, dtype=torch.bool, device=device)
    if n == 0:
        return taken
    position = torch.where(eligible, gt_pos, max_gt)  # ineligible pairs last, in no step
    order = torch.argsort(position * total_p + ip)  # flat prediction indices run image after image
    ip, image, position = ip[order], image[order], position[order]
    sizes = torch.zeros(max_gt + 1, dtype=torch.long, device=device).index_add_(0, position, torch.ones_like(ip))
    sizes = sizes[:max_gt].tolist()  # the one host read
    # segment: the pairs of one ground truth (a position in an image); its first free prediction is the lowest rank
    first = torch.ones(n, dtype=torch.bool, device=device)
    first[1:] = (position[1:] != position[:-1]) | (image[1:] != image[:-1])
    segment = torch.cumsum(first, 0) - 1
    rank = torch.arange(n, device=device)
    best = torch.full((n,), n, dtype=torch.long, device=device)
    free = torch.ones(total_p, dtype=torch.bool, device=device)
    taken_sorted = torch.zeros(n, dtype=torch.bool, device=device)
    lo = 0
    for size in sizes:
        if size == 0:
            continue
        hi = lo + size
        p, seg, r = ip[lo:hi], segment[lo:hi], rank[lo:hi]
        ok = free[p]
        best.scatter_reduce_(0, seg, torch.where(ok, r, n), reduce="amin")
        take = best[seg] == r
        free[p] = ok ^ take  # a step's predictions are distinct: one ground truth per image
        taken_sorted[lo:hi] = take
        lo = hi
    taken[order] = taken_sorted
    return taken


def _ratio(num: Tensor, den: Tensor, empty: float) -> Tensor:
    num, den = num.double(), den.double()
    return torch.where(den > 0, num / torch.where(den > 0, den, 1.0), torch.full_like(den, empty))


def _f1(p: Tensor, r: Tensor) -> Tensor:
    return torch.where(p + r > 0, 2 * p * r / torch.where(p + r > 0, p + r, 1.0), torch.zeros_like(p))


def _scores(c: Tensor, matching: str, per_image: bool) -> dict[str, Tensor]:
    """Precision / recall / F1 from counts ``Tensor[..., 9]``; 0.0 where no image was evaluated."""
    n_pred, n_gt = c[..., 0], c[..., 1]
    evaluated = c[..., 8] > 0
    out: dict[str, Tensor] = {}
    for kind, (m_pred, m_gt, dc) in {"bbox": (c[..., 2], c[..., 3], c[..., 4]),
                                     "e2e": (c[..., 5], c[..., 6], c[..., 7])}.items():
        cared_pred = n_pred - dc
        if matching == "many-to-many":
            p, r = _ratio(m_pred, cared_pred, 1.0), _ratio(m_gt, n_gt, 1.0)
        elif per_image:  # ICDAR per-image rule
            no_gt = n_gt == 0
            p = torch.where(no_gt, (cared_pred == 0).double(), _ratio(m_pred, cared_pred, 0.0))
            r = torch.where(no_gt, torch.ones_like(p), _ratio(m_gt, n_gt, 0.0))
        else:  # ICDAR global rule
            p, r = _ratio(m_pred, cared_pred, 0.0), _ratio(m_gt, n_gt, 0.0)
        p, r = torch.where(evaluated, p, 0.0), torch.where(evaluated, r, 0.0)
        out[f"{kind}_precision"], out[f"{kind}_recall"], out[f"{kind}_f1"] = p, r, _f1(p, r)
    return out


def _ocr_e2e_compute(counts: Tensor, matching: str, per_image_counts: Optional[Tensor] = None) -> dict[str, Any]:
    """``counts``: ``Tensor[9]`` micro sums; ``per_image_counts``: optional ``Tensor[B, 9]``."""
    result: dict[str, Any] = dict(_scores(counts, matching, per_image=False))
    for i, name in enumerate(_COUNTS):
        result[name] = counts[i]
    if per_image_counts is not None:
        result["per_image"] = _scores(per_image_counts, matching, per_image=True)
    return result


@single_threaded
def ocr_end_to_end(
    pred_polys: Sequence[Tensor],
    pred_texts: Sequence[Sequence[str]],
    gt_polys: Sequence[Tensor],
    gt_texts: Sequence[Sequence[str]],
    matching: str = "many-to-many",
    iou_threshold: float = 0.5,
    dont_care: str = "###",
    case_sensitive: Optional[bool] = None,
    per_image: bool = False,
) -> dict[str, Any]:
    """OCR end-to-end precision / recall / F1 of detection (``bbox_*``) and detection + text (``e2e_*``).

    Args:
        pred_polys: per image, ``Tensor[P_i, 4, 2]`` quadrilaterals (any vertex order), ``Tensor[P_i, 8]`` or
            ``Tensor[P_i, 4]`` axis-aligned ``xyxy`` boxes.
        pred_texts: per image, ``list[str]`` of length ``P_i``.
        gt_polys: per image, ``Tensor[G_i, 4, 2]`` / ``[G_i, 8]`` / ``[G_i, 4]``.
        gt_texts: per image, ``list[str]`` of length ``G_i``; ``dont_care`` marks a don't-care region.
        matching: ``"many-to-many"`` (docs/metrics/detection.md) or ``"icdar15"`` (ICDAR 2015 greedy one-to-one).
        iou_threshold: a pair overlaps when IoU > this value.
        dont_care: ground-truth text of don't-care regions.
        case_sensitive: compare texts case-sensitively; None = preset default (True for many-to-many, False for
            icdar15, which compares ``str.upper()`` forms as the ICDAR script does).
        per_image: also return ``per_image``: a dict of ``Tensor[B]`` precision / recall / F1 per image.

    Returns:
        dict with ``bbox_precision``, ``bbox_recall``, ``bbox_f1``, ``e2e_precision``, ``e2e_recall``, ``e2e_f1``
        (float64 scalars) and the integer counts ``n_pred``, ``n_gt`` (cared ground truths), ``bbox_matched_pred``,
        ``bbox_matched_gt``, ``bbox_dontcare_pred``, ``e2e_matched_pred``, ``e2e_matched_gt``, ``e2e_dontcare_pred``,
        ``n_images``. With no image every rate is 0.0 (under both rules).

    Raises:
        TypeError / ValueError: naming the argument — wrong container types or shapes, NaN/inf coordinates, a text
        list whose length differs from its image's polygon count, different numbers of images, unknown options.

    Example:
        >>> unit = lambda k: [k, 0.0, k + 1.0, 1.0]
        >>> preds = [torch.tensor([unit(0), unit(1), unit(2)])]
        >>> gts = [torch.tensor([unit(0), unit(1), unit(2)])]
        >>> out = ocr_end_to_end(preds, [["a", "b", "x"]], gts, [["a", "b", "###"]])
        >>> float(out["bbox_precision"]), float(out["e2e_recall"])
        (1.0, 1.0)
    """
    counts = _ocr_e2e_update(pred_polys, pred_texts, gt_polys, gt_texts, matching, iou_threshold, dont_care,
                             case_sensitive)
    return _ocr_e2e_compute(counts.sum(0), matching, counts if per_image else None)


class OCREndToEnd(Metric):
    """OCR end-to-end evaluation accumulated over images (see :func:`ocr_end_to_end` for the rules).

    ``update(pred_polys, pred_texts, gt_polys, gt_texts)`` takes per-image lists; the state is 9 integer sums.
    (Per-image scores are offered by :func:`ocr_end_to_end` only: image order is not defined across DDP ranks.)
    ``compute()`` before any image gives 0.0 for every rate.

    Args:
        matching: ``"many-to-many"`` or ``"icdar15"``.
        iou_threshold: a pair overlaps when IoU > this value.
        dont_care: ground-truth text of don't-care regions.
        case_sensitive: None = preset default (True for many-to-many, False for icdar15).

    Example:
        >>> metric = OCREndToEnd()
        >>> box = torch.tensor([[0.0, 0.0, 1.0, 1.0]])
        >>> metric.update([box], [["hello"]], [box], [["hello"]])
        >>> metric.update([box], [["world"]], [box], [["word"]])
        >>> float(metric.compute()["e2e_f1"])
        0.5
    """

    signature_name = "ocr_e2e"
    kernel_threads = 1
    higher_is_better = True

    def __init__(
        self,
        matching: str = "many-to-many",
        iou_threshold: float = 0.5,
        dont_care: str = "###",
        case_sensitive: Optional[bool] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.case_sensitive = _check_options(matching, iou_threshold, dont_care, case_sensitive)
        self.matching, self.iou_threshold, self.dont_care = matching, iou_threshold, dont_care
        self.add_state("counts", default=torch.zeros(len(_COUNTS), dtype=torch.long), dist_reduce_fx="sum")

    def update(self, pred_polys: Any, pred_texts: Any, gt_polys: Any, gt_texts: Any) -> None:
        counts = _ocr_e2e_update(
            pred_polys, pred_texts, gt_polys, gt_texts, self.matching, self.iou_threshold, self.dont_care,
            self.case_sensitive,
        )
        self.counts += upload(counts.sum(0), self.counts.device)

    def compute(self) -> dict[str, Any]:
        return _ocr_e2e_compute(self.counts, self.matching)

    def _signature_fields(self) -> dict[str, Any]:
        return {
            "matching": self.matching,
            "iou": f">{self.iou_threshold}",
            "dontcare": self.dont_care,
            "case": "sensitive" if self.case_sensitive else "upper",
        }
