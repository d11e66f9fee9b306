"""Batched IoU of axis-aligned boxes and convex quadrilaterals, on the device of the inputs.

``polygon_iou`` computes the exact intersection area of two convex quadrilaterals with Green's theorem over the
boundary of ``A ∩ B``, which is made of (a) the parts of A's edges inside B and (b) the parts of B's edges inside A:

* (a) every edge of A is clipped against B's four half-planes (Cyrus–Beck); a clipped piece ``p + [t0, t1]·e``
  contributes ``(t1 − t0)·cross(p, e) / 2``;
* (b) the part of B's edge line ``q + s·u`` inside A is delimited by the points where A's boundary crosses that line
  (the same crossing points as in (a), so both halves of the boundary meet exactly); along one line every piece
  contributes ``(s_entry − s_exit)·cross(q, u) / 2`` with ``s`` clamped to B's edge, so the pieces need no pairing.

This is Sutherland–Hodgman clipping written as a fixed-size tensor program: no Python loop over pairs, no sorting,
no data-dependent shapes. A pair's coordinates are shifted by the centre of its first polygon before any product is
formed, so coordinates ~1e5 lose nothing. float32 inputs are computed in float32 while their magnitudes keep
products of coordinates inside float32's range (non-zero |x| in [2⁻³⁰, 2⁵⁰]), else in float64 — identical boxes at
1e30 have IoU 1, not 0; float64 and integer inputs are computed in float64 (|x| ≤ 1e150).
Vertices are put into counter-clockwise order around their centroid and a reflex vertex is dropped, i.e. a
quadrilateral is taken as the convex hull of its 4 points — vertex order and orientation never matter.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core.checks import check_holds_data
from gpumetrics.kernels.ragged import (
    bucket_indices, pad_rows, pad_segments, segment_products, segment_starts, size_buckets,
)

__all__ = [
    "box_iou",
    "box_iou_paired",
    "block_box_iou_hits",
    "coordinates_in_range",
    "polygon_iou",
    "polygon_iou_paired",
    "polygon_intersection_paired",
    "normalize_quads",
    "boxes_to_quads",
    "block_pairs",
    "block_overlap_pairs",
    "paired_intersection_areas",
    "quad_areas",
    "work_dtype",
]

# pairs per chunk: bounds memory at ~40 float tensors of [chunk, 4, 4]
_CHUNK = 32_768


# float32 arithmetic is exact enough (products of coordinate differences neither overflow nor underflow) while every
# non-zero |coordinate| lies in this range; beyond it float32 / bfloat16 inputs are computed in float64
_FLOAT32_RANGE = (2.0**-30, 2.0**50)
# float64 products of differences of coordinates up to this size stay finite
MAX_COORDINATE = 1e150


def coordinates_in_range(x: Tensor) -> Tensor:
    """``BoolTensor[]`` on ``x``'s device: every coordinate is finite and within ``±MAX_COORDINATE`` (NaN fails the
    comparison too). No host read: callers fold it into a read they make anyway, and name the culprit on failure
    (:func:`work_dtype` with ``names``)."""
    return (x.abs() <= MAX_COORDINATE).all()


def _check_float_tensor(value: object, name: str, tail: tuple[int, ...], ndim: int) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"`{name}` must be a torch.Tensor, got {type(value).__name__}")
    check_holds_data(value, name)
    if value.dim() != ndim or tuple(value.shape[1:]) != tail:
        shape = "[N, " + ", ".join(str(t) for t in tail) + "]"
        raise ValueError(f"`{name}` must have shape {shape}, got {list(value.shape)}")
    if value.dtype == torch.bool or value.is_complex():
        raise TypeError(f"`{name}` must hold real coordinates, got dtype {value.dtype}")
    return value


def _magnitudes(value: Tensor) -> Tensor:
    """``[max |x|, min non-zero |x|]`` of a non-empty tensor as float64 (NaN propagates into the max)."""
    size = value.abs().double()
    return torch.stack([size.amax(), torch.where(size > 0, size, torch.inf).amin()])


def work_dtype(*tensors: Tensor, names: Optional[tuple[str, ...]] = None) -> torch.dtype:
    """The dtype coordinates are computed in, after checking them (one host sync for all tensors).

    float64 and integer inputs: float64. Halves and float32 / bfloat16: float32 (after a per-pair centre shift) when
    every non-zero |coordinate| lies in ``_FLOAT32_RANGE`` — else products of coordinates would overflow (~1e19) or
    underflow (~1e-19) float32 and e.g. two identical boxes at 1e20 would get IoU 0 — and float64 otherwise, which
    holds every float32 coordinate's products exactly enough.

    With ``names``: a NaN / infinite coordinate or one beyond ``±MAX_COORDINATE`` raises ``ValueError`` naming it.
    """
    present = [t for t in tensors if t.numel()]
    exact = any(t.dtype == torch.float64 or not t.is_floating_point() for t in tensors)
    if not present or (exact and names is None):
        return torch.float64 if exact else torch.float32
    stats = torch.stack([_magnitudes(t) for t in present]).tolist()
    if names is not None:
        for (peak, _), tensor, name in zip(stats, present, [n for t, n in zip(tensors, names) if t.numel()]):
            if not math.isfinite(peak):
                raise ValueError(f"`{name}` holds NaN or infinite coordinates")
            if peak > MAX_COORDINATE:
                raise ValueError(
                    f"`{name}` holds coordinates up to |x| = {peak:.3g}; |x| ≤ {MAX_COORDINATE:g} is supported "
                    "(products of coordinates overflow float64 beyond ~1e154): scale the coordinates down"
                )
    if exact:
        return torch.float64
    low, high = _FLOAT32_RANGE
    fits = all(peak <= high and (smallest == math.inf or smallest >= low) for peak, smallest in stats)
    return torch.float32 if fits else torch.float64


def _result_dtype(*tensors: Tensor) -> torch.dtype:
    """IoU is returned in float64 for float64 or integer inputs, else in float32 (whatever it was computed in)."""
    exact = any(t.dtype == torch.float64 or not t.is_floating_point() for t in tensors)
    return torch.float64 if exact else torch.float32


# --------------------------------------------------------------------------------------------- axis-aligned boxes
def _as_xyxy(boxes: Tensor, fmt: str, name: str) -> Tensor:
    if fmt == "xyxy":
        return boxes
    if fmt == "xywh":
        if boxes.numel() and bool((boxes[:, 2:] < 0).any()):
            raise ValueError(f"`{name}` holds [x, y, w, h] boxes with a negative width or height; w, h must be ≥ 0")
        return torch.cat([boxes[:, :2], boxes[:, :2] + boxes[:, 2:]], dim=1)
    raise ValueError(f"`fmt` must be one of 'xyxy', 'xywh'; got {fmt!r}")


def _box_area(b: Tensor) -> Tensor:
    return (b[:, 2] - b[:, 0]).clamp(min=0) * (b[:, 3] - b[:, 1]).clamp(min=0)


def box_iou(a: Tensor, b: Tensor, fmt: str = "xyxy") -> Tensor:
    """IoU of every box of ``a`` with every box of ``b``.

    Args:
        a: ``Tensor[N, 4]`` boxes, ``[x1, y1, x2, y2]`` (``fmt="xyxy"``) or ``[x, y, w, h]`` (``fmt="xywh"``).
        b: ``Tensor[M, 4]`` boxes in the same format.
        fmt: ``"xyxy"`` or ``"xywh"``.

    Returns:
        ``Tensor[N, M]`` of IoU in ``[0, 1]`` (float64 for float64 or integer inputs, else float32). An ``xyxy``
        box with ``x2 ≤ x1`` or ``y2 ≤ y1`` has zero area (torchvision leaves unordered boxes undefined: its area
        ``(x2 − x1)(y2 − y1)`` is positive when both are reversed); a pair whose union is empty has IoU 0, never NaN.

    Raises:
        TypeError: a non-tensor or non-real input. ValueError: wrong shape, non-finite coordinates or
        ``|x| > 1e150``, an ``xywh`` box with negative ``w`` or ``h``, unknown ``fmt``.

    Example:
        >>> box_iou(torch.tensor([[0., 0., 2., 2.]]), torch.tensor([[1., 0., 3., 2.], [5., 5., 6., 6.]]))
        tensor([[0.3333, 0.0000]])
    """
    a = _check_float_tensor(a, "a", (4,), 2)
    b = _check_float_tensor(b, "b", (4,), 2)
    dtype, out_dtype = work_dtype(a, b, names=("a", "b")), _result_dtype(a, b)
    a = _as_xyxy(a.to(dtype), fmt, "a")
    b = _as_xyxy(b.to(dtype), fmt, "b")
    corners_a, corners_b = [c[:, None] for c in a.unbind(1)], [c[None, :] for c in b.unbind(1)]
    return _box_iou_of_corners(corners_a, corners_b, _box_area(a)[:, None], _box_area(b)[None, :]).to(out_dtype)


def box_iou_paired(a: Tensor, b: Tensor, fmt: str = "xyxy") -> Tensor:
    """IoU of ``a[i]`` with ``b[i]``.

    Args:
        a: ``Tensor[N, 4]`` boxes (``fmt`` as in :func:`box_iou`).
        b: ``Tensor[N, 4]`` boxes.
        fmt: ``"xyxy"`` or ``"xywh"``.

    Returns:
        ``Tensor[N]`` of IoU in ``[0, 1]``.

    Example:
        >>> box_iou_paired(torch.tensor([[0., 0., 2., 2.]]), torch.tensor([[0., 0., 1., 2.]]))
        tensor([0.5000])
    """
    a = _check_float_tensor(a, "a", (4,), 2)
    b = _check_float_tensor(b, "b", (4,), 2)
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"`a` and `b` must hold the same number of boxes, got {a.shape[0]} and {b.shape[0]}")
    dtype, out_dtype = work_dtype(a, b, names=("a", "b")), _result_dtype(a, b)
    a = _as_xyxy(a.to(dtype), fmt, "a")
    b = _as_xyxy(b.to(dtype), fmt, "b")
    return _box_iou_of_corners(a.unbind(1), b.unbind(1), _box_area(a), _box_area(b)).to(out_dtype)


def block_box_iou_hits(
    a: Tensor, counts_a: Tensor, b: Tensor, counts_b: Tensor, host_a: np.ndarray, host_b: np.ndarray, threshold: float
) -> tuple[Tensor, Tensor, Tensor]:
    """The pairs of boxes of one group whose IoU is at least ``threshold``, for boxes stored group after group and
    checked already (finite, in range: nothing is checked here): the same pairs and values as :func:`block_pairs`
    then :func:`box_iou_paired` of the gathered boxes and the threshold, without building the flat pairs.

    Each group's IoU is a dense ``[A, B]`` block, groups of similar sizes padded together
    (:func:`~gpumetrics.kernels.ragged.size_buckets`) in blocks of at most ``_OVERLAP_BLOCK_CELLS`` cells: no gather
    per pair, and a block stays in cache on the CPU. One host read (``nonzero``) per block: one for an ordinary
    batch.

    Args:
        a, b: ``Tensor[N, 4]`` / ``Tensor[M, 4]`` ``xyxy`` boxes of one floating dtype.
        counts_a, counts_b: ``LongTensor[G]`` boxes of each group on either side; ``host_a``, ``host_b`` the same
            on the host.
        threshold: the least IoU kept.

    Returns:
        ``(index_a, index_b, iou)``, each ``Tensor[H]``, sorted by ``(index_a, index_b)``.

    Example:
        >>> boxes = torch.tensor([[0., 0., 2., 2.], [0., 0., 1., 2.], [5., 5., 6., 6.]])
        >>> [x.tolist() for x in block_box_iou_hits(boxes[:1], torch.tensor([1]), boxes[1:], torch.tensor([2]),
        ...                                         np.array([1]), np.array([2]), 0.5)]
        [[0], [0], [0.5]]
    """
    device = a.device
    starts_a, starts_b = segment_starts(counts_a.long()), segment_starts(counts_b.long())
    area_a, area_b = _box_area(a), _box_area(b)
    buckets = size_buckets(host_a, host_b, _OVERLAP_SLACK_CELLS)
    if buckets is None:
        both = np.flatnonzero((host_a > 0) & (host_b > 0))
        buckets = [both] if both.size else []
    found = []
    for bucket, groups in bucket_indices(buckets, device):
        width_a, width_b = int(host_a[bucket].max()), int(host_b[bucket].max())
        step = max(1, _OVERLAP_BLOCK_CELLS // (width_a * width_b))
        for first in range(0, bucket.size, step):
            g = groups[first:first + step]
            rows_a = starts_a.index_select(0, g)[:, None] + torch.arange(width_a, device=device)  # [n, A]
            rows_b = starts_b.index_select(0, g)[:, None] + torch.arange(width_b, device=device)  # [n, B]
            valid_a = rows_a < (starts_a + counts_a).index_select(0, g)[:, None]
            valid_b = rows_b < (starts_b + counts_b).index_select(0, g)[:, None]
            rows_a, rows_b = torch.where(valid_a, rows_a, 0).view(-1), torch.where(valid_b, rows_b, 0).view(-1)
            # [n, A, 1] against [n, 1, B]: gathered column by column (index_select: no [N, 4] row gather)
            ca = [column.index_select(0, rows_a).view(-1, width_a, 1) for column in (*a.t().contiguous(), area_a)]
            cb = [column.index_select(0, rows_b).view(-1, 1, width_b) for column in (*b.t().contiguous(), area_b)]
            iou = _box_iou_of_corners(ca[:4], cb[:4], ca[4], cb[4])
            hit = (iou >= threshold) & valid_a[:, :, None] & valid_b[:, None, :]
            n, i, j = hit.nonzero(as_tuple=True)  # the block's one host read
            found.append((rows_a.view(-1, width_a)[n, i], rows_b.view(-1, width_b)[n, j], iou[n, i, j]))
    if not found:
        empty = torch.zeros(0, dtype=torch.long, device=device)
        return empty, empty, a.new_zeros(0)
    index_a, index_b, iou = (torch.cat(column) for column in zip(*found))
    if len(found) > 1:  # blocks of other buckets interleave: back to (a, b) order
        order = torch.argsort(index_a * b.shape[0] + index_b)
        index_a, index_b, iou = index_a[order], index_b[order], iou[order]
    return index_a, index_b, iou


def _box_iou_of_corners(a: Sequence[Tensor], b: Sequence[Tensor], area_a: Tensor, area_b: Tensor) -> Tensor:
    """IoU of ``xyxy`` boxes given as their four corner coordinates ``(x1, y1, x2, y2)`` and areas, tensors that
    broadcast against the other side's (dense, paired or per-group blocks: one formula)."""
    w = (torch.minimum(a[2], b[2]) - torch.maximum(a[0], b[0])).clamp_(min=0)
    h = (torch.minimum(a[3], b[3]) - torch.maximum(a[1], b[1])).clamp_(min=0)
    return _iou_from_parts(w.mul_(h), area_a, area_b)


def boxes_to_quads(boxes: Tensor) -> Tensor:
    """``Tensor[N, 4]`` xyxy boxes → ``Tensor[N, 4, 2]`` quadrilaterals (counter-clockwise in a y-up frame).

    Example:
        >>> boxes_to_quads(torch.tensor([[0., 0., 2., 1.]])).tolist()
        [[[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [0.0, 1.0]]]
    """
    x1, y1, x2, y2 = boxes.unbind(-1)
    return torch.stack([torch.stack([x1, y1], -1), torch.stack([x2, y1], -1),
                        torch.stack([x2, y2], -1), torch.stack([x1, y2], -1)], dim=-2)


# ------------------------------------------------------------------------------------------- convex quadrilaterals
def normalize_quads(quads: Tensor) -> Tensor:
    """Put the 4 vertices of each quadrilateral in counter-clockwise order; a reflex vertex becomes a duplicate.

    The result is the convex hull of the 4 points, listed counter-clockwise (a y-up frame; in image coordinates
    this is clockwise on screen). Vertex order and orientation of the input do not matter.

    Args:
        quads: ``Tensor[N, 4, 2]`` of floating coordinates.

    Returns:
        ``Tensor[N, 4, 2]``, same dtype.

    Example:
        >>> normalize_quads(torch.tensor([[[0., 0.], [1., 1.], [1., 0.], [0., 1.]]])).tolist()
        [[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]]
    """
    if quads.shape[0] == 0:
        return quads
    # sort around the vertex mean taken relative to vertex 0: differences of nearby coordinates are exact, so the
    # point stays inside a thin quad at large coordinates (a mean of the raw float32 values at 1e6 is off by ~0.1)
    rel = quads - quads[:, :1]
    rel = rel - _centre(rel)[:, None]
    # a pseudo-angle in (-2, 2], monotone in atan2(y, x) and much cheaper
    rx, ry = rel[..., 0], rel[..., 1]
    norm1 = rx.abs() + ry.abs()
    pseudo = 1 - rx / torch.where(norm1 > 0, norm1, 1.0)
    order = torch.where(ry < 0, -pseudo, pseudo).argsort(dim=1)
    index = order[..., None].expand(-1, -1, 2)
    quads, rel = quads.gather(1, index), rel.gather(1, index)
    # among 4 points at most one lies inside the triangle of the others: it is the only reflex vertex
    prev, nxt = rel.roll(1, dims=1), rel.roll(-1, dims=1)
    turn = (rel[..., 0] - prev[..., 0]) * (nxt[..., 1] - rel[..., 1]) - (rel[..., 1] - prev[..., 1]) * (
        nxt[..., 0] - rel[..., 0]
    )
    reflex = (turn < 0)[..., None]
    return torch.where(reflex, quads.roll(1, dims=1), quads)


def _centre(quads: Tensor) -> Tensor:
    """Vertex mean ``Tensor[N, 2]`` of ``Tensor[N, 4, 2]`` (explicit sum: faster than ``mean`` over a dim of 4)."""
    return (quads[:, 0] + quads[:, 1] + quads[:, 2] + quads[:, 3]) * 0.25


def quad_areas(quads: Tensor) -> Tensor:
    """Area of normalised quads ``Tensor[N, 4, 2]``, computed around the same centre as the pair kernel uses.

    An area below the kernel's resolution (``≤ 8·eps·extent²``, extent = the larger side of the bounding box) is 0:
    such a quad is a segment or a point written in floating point (e.g. ``(0, 0), (0.1, 0.1), (0.3, 0.3), (0.7,
    0.7)``), its computed area is rounding noise, and the IoU of two of them would be noise of any size in [0, 1].
    """
    rel = quads - _centre(quads)[:, None]
    x, y = rel[..., 0].unbind(1), rel[..., 1].unbind(1)
    twice = (x[0] * y[1] - y[0] * x[1]) + (x[1] * y[2] - y[1] * x[2]) + (x[2] * y[3] - y[2] * x[3]) + (
        x[3] * y[0] - y[3] * x[0]
    )
    extent = (quads.amax(dim=1) - quads.amin(dim=1)).amax(dim=1)
    noise = 16 * torch.finfo(quads.dtype).eps * extent * extent
    return 0.5 * torch.where(twice > noise, twice, 0.0)


def _intersection_kernel(ax: Tensor, ay: Tensor, bx: Tensor, by: Tensor) -> Tensor:
    """Intersection area of pairs of normalised (CCW, convex) quads given as shifted coordinates ``Tensor[4, P]``.

    Work tensors are ``[4 (A vertex i), 4 (B edge k), P]`` so that every elementwise op runs along the long,
    contiguous pair dimension.
    """
    bex, bey = bx.roll(-1, 0) - bx, by.roll(-1, 0) - by  # B edge k: b_k + s·be_k
    len2 = bex * bex + bey * bey
    inv_len2 = 1.0 / torch.where(len2 > 0, len2, 1.0)
    dx = ax[:, None] - bx[None]
    dy = ay[:, None] - by[None]
    ux, uy = bex[None], bey[None]
    d0 = ux * dy - uy * dx  # cross(be_k, a_i − b_k) ≥ 0  ⇔  a_i is inside B's half-plane k
    in0 = d0 >= 0
    in1 = in0.roll(-1, 0)  # the same for a_{i+1}
    crossing = in0 != in1
    t = d0 / (d0 - d0.roll(-1, 0))  # where A's edge i crosses line k; only read where `crossing`

    # (a) Cyrus–Beck: the piece [lo, hi] of A's edge i inside all four half-planes
    lo = torch.where(in0, 0.0, torch.where(in1, t, 1.0)).amax(dim=1)
    hi = torch.where(in1, 1.0, torch.where(in0, t, 0.0)).amin(dim=1)
    # cross(a_i, ae_i) = cross(a_i, a_{i+1}): the shoelace term, so that A ⊂ B gives exactly area(A)
    edge_part = ((hi - lo).clamp(min=0) * (ax * ay.roll(-1, 0) - ay * ax.roll(-1, 0))).sum(dim=0)

    # (b) pieces of B's edge line k inside A: s is the crossing point's position along B's edge, clamped to it
    s0 = (dx * ux + dy * uy) * inv_len2[None]
    s = torch.lerp(s0, s0.roll(-1, 0), t).clamp(0, 1)
    signed = torch.where(crossing, torch.where(in1, s, -s), 0.0).sum(dim=0)  # Σ s_entry − Σ s_exit per line k
    line_part = (signed * (bx * bey - by * bex)).sum(dim=0)
    return 0.5 * (edge_part + line_part)


_COMPILED: dict[str, object] = {}


def _kernel(compiled: bool):
    """The eager kernel, or its ``torch.compile`` fusion (one generated loop instead of ~30 tensor passes)."""
    if not compiled:
        return _intersection_kernel
    if "kernel" not in _COMPILED:
        _COMPILED["kernel"] = torch.compile(_intersection_kernel, dynamic=True)
    return _COMPILED["kernel"]


def paired_intersection_areas(
    a: Tensor, b: Tensor, area_a: Tensor, area_b: Tensor, compiled: bool = False, overlapping: bool = False
) -> Tensor:
    """Intersection areas of normalised quads ``a[i]``, ``b[i]`` (``Tensor[P, 4, 2]``), chunked, AABB-filtered.

    ``overlapping``: every pair is known to have overlapping bounding boxes and positive areas (as
    :func:`block_overlap_pairs` gives them for quads of positive area): no filter, so no host read.
    """
    n = a.shape[0]
    inter = a.new_zeros(n)
    if n == 0:
        return inter
    if overlapping:
        idx = torch.arange(n, device=a.device)
    else:
        amin, amax = a.amin(dim=1), a.amax(dim=1)
        bmin, bmax = b.amin(dim=1), b.amax(dim=1)
        overlap = ((amin < bmax) & (bmin < amax)).all(dim=1) & (area_a > 0) & (area_b > 0)
        idx = overlap.nonzero().squeeze(1)
    kernel = _kernel(compiled)
    for start in range(0, idx.numel(), _CHUNK):
        sel = idx[start : start + _CHUNK]
        pa, pb = a[sel], b[sel]
        centre = _centre(pa)[:, None]  # shift each pair before forming products
        pa, pb = pa - centre, pb - centre
        pa, pb = pa.permute(2, 1, 0).contiguous(), pb.permute(2, 1, 0).contiguous()  # [2, 4, P]
        value = kernel(pa[0], pa[1], pb[0], pb[1])
        inter[sel] = torch.minimum(value.clamp(min=0), torch.minimum(area_a[sel], area_b[sel]))
    return inter


def _iou_from_parts(inter: Tensor, area_a: Tensor, area_b: Tensor) -> Tensor:
    union = area_a + area_b - inter
    ok = union > 0
    return torch.where(ok, inter / torch.where(ok, union, 1), 0).clamp_(0, 1)


def polygon_intersection_paired(a: Tensor, b: Tensor, compiled: bool = False) -> tuple[Tensor, Tensor, Tensor]:
    """Intersection area of ``a[i]`` and ``b[i]`` with both areas, for metrics that need more than IoU.

    Args:
        a: ``Tensor[N, 4, 2]`` convex quadrilaterals (any vertex order).
        b: ``Tensor[N, 4, 2]`` convex quadrilaterals.
        compiled: run the clipping kernel through ``torch.compile`` (see :func:`polygon_iou`).

    Returns:
        ``(intersection, area_a, area_b)``, each ``Tensor[N]`` in the working dtype: float64 for float64 or integer
        inputs and for float32 inputs whose magnitudes need it (areas ≳ 1e38 do not fit float32), else float32.

    Example:
        >>> sq = torch.tensor([[[0., 0.], [2., 0.], [2., 2.], [0., 2.]]])
        >>> [x.tolist() for x in polygon_intersection_paired(sq, sq + 1)]
        [[1.0], [4.0], [4.0]]
    """
    a = _check_float_tensor(a, "a", (4, 2), 3)
    b = _check_float_tensor(b, "b", (4, 2), 3)
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"`a` and `b` must hold the same number of polygons, got {a.shape[0]} and {b.shape[0]}")
    dtype = work_dtype(a, b, names=("a", "b"))
    a, b = normalize_quads(a.to(dtype)), normalize_quads(b.to(dtype))
    area_a, area_b = quad_areas(a), quad_areas(b)
    return paired_intersection_areas(a, b, area_a, area_b, compiled), area_a, area_b


def polygon_iou_paired(a: Tensor, b: Tensor, compiled: bool = False) -> Tensor:
    """IoU of convex quadrilateral ``a[i]`` with ``b[i]``.

    Args:
        a: ``Tensor[N, 4, 2]`` convex quadrilaterals, vertices in any order (taken as the convex hull of the 4 points).
        b: ``Tensor[N, 4, 2]`` convex quadrilaterals.
        compiled: run the clipping kernel through ``torch.compile`` (see :func:`polygon_iou`).

    Returns:
        ``Tensor[N]`` IoU in ``[0, 1]``; float64 for float64 or integer inputs, else float32 (computed after a per-pair
        centre shift). Zero-area polygons give 0.

    Raises:
        TypeError: non-tensor / non-real input. ValueError: wrong shape, N mismatch, NaN or infinite coordinates.

    Example:
        >>> sq = torch.tensor([[[0., 0.], [2., 0.], [2., 2.], [0., 2.]]])
        >>> polygon_iou_paired(sq, sq + 1)
        tensor([0.1429])
    """
    inter, area_a, area_b = polygon_intersection_paired(a, b, compiled)
    return _iou_from_parts(inter, area_a, area_b).to(_result_dtype(a, b))


def polygon_iou(a: Tensor, b: Tensor, compiled: bool = False) -> Tensor:
    """IoU of every convex quadrilateral of ``a`` with every one of ``b``, exact, batched and chunked.

    Pairs whose bounding boxes do not overlap are skipped; the others are clipped in chunks of a fixed number of
    pairs, so memory stays bounded (10k × 10k works) and only the ``[N, M]`` result scales with ``N·M``.

    Args:
        a: ``Tensor[N, 4, 2]`` convex quadrilaterals ``x1y1…x4y4``, vertices in any order and orientation (a
            non-convex input is taken as the convex hull of its 4 points).
        b: ``Tensor[M, 4, 2]`` convex quadrilaterals.
        compiled: run the clipping kernel through ``torch.compile`` (inductor: C++ on CPU, Triton on CUDA), which
            fuses its ~30 tensor passes into one loop — about 20–30× faster on CPU for large inputs, at a one-off
            compilation cost of tens of seconds per process (cached on disk by inductor). Same results.

    Returns:
        ``Tensor[N, M]`` IoU in ``[0, 1]``; float64 for float64 or integer inputs, else float32 (computed after a
        per-pair centre shift so large coordinates lose nothing). Degenerate (zero-area, collinear) polygons give 0,
        never NaN.

    Raises:
        TypeError: non-tensor / non-real input. ValueError: wrong shape, NaN or infinite coordinates.

    Example:
        >>> sq = torch.tensor([[[0., 0.], [2., 0.], [2., 2.], [0., 2.]]])
        >>> diamond = torch.tensor([[[1., 0.], [2., 1.], [1., 2.], [0., 1.]], [[1., 3.], [0., 2.], [1., 1.], [2., 2.]]])
        >>> polygon_iou(sq, diamond)
        tensor([[0.5000, 0.2000]])
    """
    a = _check_float_tensor(a, "a", (4, 2), 3)
    b = _check_float_tensor(b, "b", (4, 2), 3)
    dtype, out_dtype = work_dtype(a, b, names=("a", "b")), _result_dtype(a, b)
    a, b = normalize_quads(a.to(dtype)), normalize_quads(b.to(dtype))
    n, m = a.shape[0], b.shape[0]
    area_a, area_b = quad_areas(a), quad_areas(b)
    out = a.new_zeros(n, m, dtype=out_dtype)
    if n == 0 or m == 0:
        return out
    amin, amax = a.amin(dim=1), a.amax(dim=1)
    bmin, bmax = b.amin(dim=1), b.amax(dim=1)
    rows_per_block = max(1, (1 << 22) // m)  # bound the [rows, M] overlap mask too
    for r0 in range(0, n, rows_per_block):
        r1 = min(n, r0 + rows_per_block)
        overlap = (
            (amin[r0:r1, None, :] < bmax[None, :, :]) & (bmin[None, :, :] < amax[r0:r1, None, :])
        ).all(dim=2)
        overlap &= (area_a[r0:r1, None] > 0) & (area_b[None, :] > 0)
        ia, ib = overlap.nonzero(as_tuple=True)
        if ia.numel() == 0:
            continue
        ia = ia + r0
        inter = paired_intersection_areas(a[ia], b[ib], area_a[ia], area_b[ib], compiled)
        out[ia, ib] = _iou_from_parts(inter, area_a[ia], area_b[ib]).to(out_dtype)
    return out


# ------------------------------------------------------------------------------------------------ grouped pairs
def block_pairs(counts_a: Tensor, counts_b: Tensor, total: Optional[int] = None) -> tuple[Tensor, Tensor, Tensor]:
    """All pairs ``(i, j)`` of items in the same group, for items stored group after group.

    Args:
        counts_a: ``Tensor[G]`` number of ``a`` items of each group (items of group g follow those of group g−1).
        counts_b: ``Tensor[G]`` number of ``b`` items of each group.
        total: ``Σ counts_a·counts_b`` when known on the host (no host sync).

    Returns:
        ``(index_a, index_b, group)``, each ``Tensor[Σ counts_a·counts_b]`` (long), group-major, then a, then b.

    Example:
        >>> [x.tolist() for x in block_pairs(torch.tensor([2, 1]), torch.tensor([1, 2]))]
        [[0, 1, 2, 2], [0, 0, 1, 2], [0, 0, 1, 1]]
    """
    counts_a, counts_b = counts_a.long(), counts_b.long()
    group, local_a, local_b = segment_products(counts_a, counts_b, total)
    return (segment_starts(counts_a).index_select(0, group) + local_a,
            segment_starts(counts_b).index_select(0, group) + local_b, group)


_OVERLAP_BLOCK_CELLS = 1 << 24  # (a, b) cells of the padded overlap test built at once
_OVERLAP_SLACK_CELLS = 1 << 22  # padding a batch may waste before its groups are split by size


def _overlap_block(
    lo_a: Tensor, hi_a: Tensor, lo_b: Tensor, hi_b: Tensor, group: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """Overlapping ``(group, a, b)`` positions of padded ``[G, A, 2]`` / ``[G, B, 2]`` corner blocks, tested
    ``_OVERLAP_BLOCK_CELLS`` cells at a time; ``group: LongTensor[G]`` the groups' indices."""
    step = max(1, _OVERLAP_BLOCK_CELLS // max(1, lo_a.shape[1] * lo_b.shape[1]))
    parts = []
    for g0 in range(0, lo_a.shape[0], step):
        g1 = g0 + step
        hit = ((lo_a[g0:g1, :, None] < hi_b[g0:g1, None]) & (lo_b[g0:g1, None] < hi_a[g0:g1, :, None])).all(dim=3)
        g, i, j = hit.nonzero(as_tuple=True)
        parts.append((group[g + g0], i, j))
    return tuple(torch.cat(column) for column in zip(*parts))


def block_overlap_pairs(
    min_a: Tensor,
    max_a: Tensor,
    counts_a: Tensor,
    min_b: Tensor,
    max_b: Tensor,
    counts_b: Tensor,
    host_counts: Optional[tuple[np.ndarray, np.ndarray]] = None,
) -> tuple[Tensor, Tensor]:
    """Pairs ``(i, j)`` of the same group whose axis-aligned bounding boxes overlap with positive area.

    Items are stored group after group (as in :func:`block_pairs`); the test runs on padded ``[groups, A, B]``
    blocks of bounded size, never on a gathered list of every pair. Groups of very different sizes are padded in
    buckets of similar sizes, so the work and memory follow ``Σ A·B``, not ``groups · max A · max B``.

    Args:
        min_a, max_a: ``Tensor[ΣA, 2]`` lower / upper corners of the ``a`` items' bounding boxes.
        counts_a: ``Tensor[G]`` items of ``a`` per group.
        min_b, max_b: ``Tensor[ΣB, 2]`` corners of the ``b`` items.
        counts_b: ``Tensor[G]`` items of ``b`` per group.
        host_counts: ``counts_a`` and ``counts_b`` as host ``int64[G]`` arrays when the caller has them (no host
            read); read from the tensors otherwise (one host sync).

    Returns:
        ``(index_a, index_b)``, long, sorted by group, then ``a``, then ``b``.

    Example:
        >>> lo = torch.tensor([[0., 0.], [5., 5.], [0., 0.]])
        >>> [x.tolist() for x in block_overlap_pairs(lo, lo + 1, torch.tensor([2, 1]),
        ...                                          lo, lo + 1, torch.tensor([2, 1]))]
        [[0, 1, 2], [0, 1, 2]]
    """
    counts_a, counts_b = counts_a.long(), counts_b.long()
    device = counts_a.device
    empty = torch.zeros(0, dtype=torch.long, device=device)
    if min_a.shape[0] == 0 or min_b.shape[0] == 0:
        return empty, empty
    inf = float("inf")
    start_a, start_b = segment_starts(counts_a), segment_starts(counts_b)
    if host_counts is None:
        host_counts = np.array(torch.stack([counts_a, counts_b]).tolist(), dtype=np.int64)  # one host sync: the sizes
    host_a, host_b = (np.asarray(host, dtype=np.int64) for host in host_counts)
    buckets = size_buckets(host_a, host_b, _OVERLAP_SLACK_CELLS)
    if buckets is None:
        width_a, width_b = int(host_a.max()), int(host_b.max())
        lo_a, hi_a = pad_segments(min_a, counts_a, inf, width_a), pad_segments(max_a, counts_a, -inf, width_a)
        lo_b, hi_b = pad_segments(min_b, counts_b, inf, width_b), pad_segments(max_b, counts_b, -inf, width_b)
        g, i, j = _overlap_block(lo_a, hi_a, lo_b, hi_b, torch.arange(counts_a.numel(), device=device))
        return start_a[g] + i, start_b[g] + j
    parts = []
    for groups, group in bucket_indices(buckets, device):
        sides = []
        for low, high, counts, host in ((min_a, max_a, counts_a, host_a), (min_b, max_b, counts_b, host_b)):
            # one gather and one padding: the negated upper corners padded with +inf are the upper corners with -inf
            corners, _ = pad_rows(torch.cat([low, -high], 1), counts, group, host[groups], inf)
            sides.append((corners[..., :2], -corners[..., 2:]))
        (lo_a, hi_a), (lo_b, hi_b) = sides
        g, i, j = _overlap_block(lo_a, hi_a, lo_b, hi_b, group)
        parts.append((start_a[g] + i, start_b[g] + j))
    index_a, index_b = (torch.cat(column) for column in zip(*parts))
    order = torch.sort(index_b, stable=True).indices  # buckets come in size order: back to group, a, b order
    order = order[torch.sort(index_a[order], stable=True).indices]
    return index_a[order], index_b[order]
