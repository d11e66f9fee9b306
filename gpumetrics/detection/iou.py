"""Input handling shared by the detection metrics: per-image polygon / box lists → one flat tensor + counts.

The IoU kernels themselves live in :mod:`gpumetrics.kernels.iou` and are re-exported here for convenience.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core.checks import check_holds_data
from gpumetrics.core.positions import convert_each, sample_error
from gpumetrics.core.transfer import upload
from gpumetrics.kernels.iou import (
    block_pairs,
    box_iou,
    box_iou_paired,
    boxes_to_quads,
    polygon_intersection_paired,
    polygon_iou,
    polygon_iou_paired,
)

__all__ = [
    "as_quads",
    "check_finite_quads",
    "flatten_quads",
    "box_iou",
    "box_iou_paired",
    "polygon_iou",
    "polygon_iou_paired",
    "polygon_intersection_paired",
    "block_pairs",
]


def as_quads(value: Any, name: str, device: Optional[torch.device] = None, check_finite: bool = True) -> Tensor:
    """One image's shapes as ``Tensor[P, 4, 2]``.

    Accepts ``Tensor[P, 4, 2]`` quadrilaterals, ``Tensor[P, 8]`` flat ``x1 y1 … x4 y4`` quadrilaterals or
    ``Tensor[P, 4]`` axis-aligned ``xyxy`` boxes (or nested lists of numbers of those shapes; an empty list is P=0).

    Raises:
        TypeError: not a tensor / list of numbers. ValueError: another shape, NaN or infinite coordinates.

    Example:
        >>> as_quads(torch.tensor([[0., 0., 2., 1.]]), "preds").tolist()
        [[[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [0.0, 1.0]]]
    """
    if not isinstance(value, Tensor):
        if isinstance(value, (list, tuple)):
            if len(value) == 0:
                return torch.zeros(0, 4, 2, device=device)
            try:
                value = upload(torch.as_tensor(value, dtype=torch.float64), device)
            except (TypeError, ValueError) as err:
                raise TypeError(f"`{name}` must be a tensor or a nested list of numbers: {err}") from None
        else:
            raise TypeError(f"`{name}` must be a Tensor[P, 4, 2], Tensor[P, 8] or Tensor[P, 4], "
                            f"got {type(value).__name__}")
    check_holds_data(value, name)
    if value.dtype == torch.bool or value.is_complex():
        raise TypeError(f"`{name}` must hold real coordinates, got dtype {value.dtype}")
    if value.dim() == 3 and tuple(value.shape[1:]) == (4, 2):
        quads = value
    elif value.dim() == 2 and value.shape[1] == 8:
        quads = value.reshape(-1, 4, 2)
    elif value.dim() == 2 and value.shape[1] == 4:
        quads = boxes_to_quads(value)
    elif value.numel() == 0:
        quads = value.reshape(0, 4, 2)
    else:
        raise ValueError(f"`{name}` must have shape [P, 4, 2], [P, 8] or [P, 4] (xyxy), got {list(value.shape)}")
    if not value.is_floating_point():
        quads = quads.double()
    if check_finite and quads.numel() and not bool(torch.isfinite(quads).all()):
        raise ValueError(f"`{name}` holds NaN or infinite coordinates")
    return quads


def flatten_quads(images: Any, name: str, check_finite: bool = True) -> tuple[Tensor, Tensor]:
    """A per-image list of shapes → ``(Tensor[ΣP, 4, 2], counts Tensor[B])`` on the first tensor's device.

    Args:
        images: per image, shapes as :func:`as_quads` takes them.
        name: the argument's name in error messages.
        check_finite: raise on NaN / infinite coordinates (:func:`check_finite_quads`, one host sync); a caller that
            checks its values together with other reads passes False.

    Example:
        >>> quads, counts = flatten_quads([torch.zeros(2, 4), torch.zeros(0, 4)], "pred_polys")
        >>> quads.shape, counts.tolist()
        (torch.Size([2, 4, 2]), [2, 0])
    """
    if isinstance(images, Tensor) or not isinstance(images, Sequence) or isinstance(images, str):
        raise TypeError(f"`{name}` must be a list with one tensor of shapes per image, got {type(images).__name__}")
    device = next((x.device for x in images if isinstance(x, Tensor)), None)
    quads = convert_each(lambda x, where: as_quads(x, where, device, check_finite=False), images,
                         f"{name}[{{}}]".format)
    counts = upload(np.fromiter((q.shape[0] for q in quads), dtype=np.int64, count=len(quads)), device)
    if not quads:
        return torch.zeros(0, 4, 2, device=device), counts
    dtype = torch.float64 if any(q.dtype == torch.float64 for q in quads) else torch.float32
    flat = torch.cat([q.to(dtype) for q in quads])
    if check_finite:
        check_finite_quads(flat, counts, name)
    return flat, counts


def check_finite_quads(flat: Tensor, counts: Tensor, name: str) -> None:
    """Raise ``ValueError`` naming the first image (``name[i]``, tagged with ``i``) whose shapes hold a NaN or infinite
    coordinate.

    Args:
        flat: ``Tensor[ΣP, 4, 2]`` the shapes of all images, image after image; ``counts``: ``LongTensor[B]``.

    Example:
        >>> check_finite_quads(torch.full((1, 4, 2), float("nan")), torch.tensor([0, 1]), "gts")
        Traceback (most recent call last):
        ...
        ValueError: `gts[1]` holds NaN or infinite coordinates
    """
    finite = torch.isfinite(flat).flatten(1).all(dim=1)
    if not bool(finite.all()):  # one check for the batch; name the first image at fault
        image = int(torch.searchsorted(torch.cumsum(counts, 0), (~finite).nonzero()[0, 0], right=True))
        raise sample_error(ValueError, name, image, "holds NaN or infinite coordinates")
