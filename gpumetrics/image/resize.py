"""Pillow's bilinear resampling (``Image.resize(size, Image.BILINEAR)``) as tensor ops on the images' device.

Two pipelines resize with PIL before their network and so need Pillow's exact pixels: ruclip's image transform
(:mod:`gpumetrics.image.ruclip`) and the AIJ-2022 organisers' FID (``TF.Resize((256, 256))`` on PIL images, the
``"aij2022"`` resize mode of :mod:`gpumetrics.image.inception`). For 8-bit images Pillow resamples with 22-bit
fixed-point weights, one pass per axis, rounding and clipping to 0..255 after each; the weights here are computed
with the same operations in the same order, so integer images give Pillow's pixels exactly.
"""

from __future__ import annotations

import functools

import torch
from torch import Tensor

_PRECISION_BITS = 22  # Pillow's fixed-point precision for 8-bit images (32 - 8 - 2)


@functools.lru_cache(maxsize=64)
def pil_bilinear_weights(in_size: int, out_size: int) -> tuple[tuple[float, ...], ...]:
    """Pillow's bilinear (triangle, antialiasing when shrinking) resampling weights, ``out_size`` rows of
    ``in_size`` doubles, computed with Pillow's ``precompute_coeffs`` arithmetic (same operations, same order)."""
    scale = in_size / out_size
    filter_scale = max(scale, 1.0)
    support = filter_scale  # the triangle filter's support is 1
    inverse = 1.0 / filter_scale
    rows = []
    for out in range(out_size):
        center = (out + 0.5) * scale
        low = max(int(center - support + 0.5), 0)
        high = min(int(center + support + 0.5), in_size)
        taps = [max(0.0, 1.0 - abs((x - center + 0.5) * inverse)) for x in range(low, high)]
        total = 0.0
        for tap in taps:
            total += tap
        if total != 0.0:
            taps = [tap / total for tap in taps]
        rows.append((0.0,) * low + tuple(taps) + (0.0,) * (in_size - high))
    return tuple(rows)


def _resize_matrix(in_size: int, out_size: int, fixed_point: bool, device: torch.device) -> Tensor:
    """``DoubleTensor[out, in]``: the weights, or Pillow's 22-bit fixed-point integers of them (held as doubles)."""
    weights = torch.tensor(pil_bilinear_weights(in_size, out_size), dtype=torch.float64)
    if fixed_point:  # Pillow's normalize_coeffs_8bpc: round half away from zero
        weights = torch.trunc(weights * (1 << _PRECISION_BITS) + torch.where(weights < 0, -0.5, 0.5))
    return weights.to(device)


def pil_bilinear_resize(images: Tensor, size: tuple[int, int]) -> Tensor:
    """``PIL.Image.resize(size, BILINEAR)`` of each image, as tensor ops on the images' device.

    Args:
        images: ``Tensor[N, C, H, W]``: an integer dtype holding 0..255 (resized exactly as Pillow resizes 8-bit
            images: fixed-point weights, horizontal pass, rounding and clipping to 0..255, then the vertical pass),
            or floating point (any range: Pillow's float-image arithmetic, without rounding).
        size: ``(height, width)`` of the output.

    Returns:
        ``Tensor[N, C, height, width]``: float64 holding integers 0..255 for integer input, float64 otherwise.

    The pass order is Pillow's C ``ImagingResampleInner``: horizontal first (Pillow 9, as in the 2022 AIJ runs).
    Newer Pillow versions go vertical first in some cases (``Image.resize`` of images over 100× taller than wide that
    shrink in height; the Pillow 13.0 build here also for some resizes that scale the two axes differently), where a
    few values then differ by 1. A square → square resize, the only one ruclip's transform makes, is unaffected
    (tested against the installed Pillow).
    """
    exact = not images.is_floating_point()
    height, width = size
    x = images.to(torch.float64)
    for dim, out_size in ((3, width), (2, height)):  # Pillow: horizontal pass first
        if x.shape[dim] == out_size:
            continue  # an identity pass (Pillow skips it; its weights would be the identity too)
        matrix = _resize_matrix(x.shape[dim], out_size, exact, x.device)
        x = x.movedim(dim, -1) @ matrix.T
        if exact:  # integers below 2^53: the float64 sums are exact; floor((s + 2^21) / 2^22) is Pillow's shift
            x = torch.floor((x + (1 << (_PRECISION_BITS - 1))) / (1 << _PRECISION_BITS)).clamp_(0, 255)
        x = x.movedim(-1, dim)
    return x
