"""Image files into one side of FID / KID: the one loop the CLI and the tasks share (read in batches, extract,
report progress), which consults a :class:`~gpumetrics.image.feature_cache.FeatureCache` when given one."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, Optional, Sequence, Union

import torch

from gpumetrics.image.feature_cache import FeatureCache, ProgressFn, reference_key, warn_unusable
from gpumetrics.image.features import RealFakeFeatureMetric, side_of
from gpumetrics.image.io import ImageBatches


def add_image_files(
    metric: RealFakeFeatureMetric,
    files: Sequence[Union[str, Path]],
    real: bool,
    batch_size: int,
    device: Union[str, torch.device],
    cache: Optional[FeatureCache] = None,
    root: Optional[Union[str, Path]] = None,
    progress: Optional[ProgressFn] = None,
    phase: str = "images",
    workers: Optional[int] = None,
    decode: str = "pil",
    reader: Optional[ImageBatches] = None,
    part: int = 0,
    max_bytes_in_flight: Optional[int] = None,
) -> None:
    """Add the features of ``files`` to the ``real`` (or generated) side of ``metric``.

    Files are decoded in chunks of ``batch_size`` by ``workers`` processes (``same_size_batches``: prefetched, pinned
    and copied without blocking to a CUDA ``device``) and passed through the metric's extractor. With a ``cache``, the
    side's states are looked up under :func:`~gpumetrics.image.feature_cache.reference_key` first — a hit sets them
    without running the extractor, to the bit what the pass would give — and stored after a pass. A custom feature
    module is never cached.

    Args:
        metric: a FID / KID metric; with a ``cache`` its ``real`` side must be empty.
        files: image paths, read in this order.
        real: which side.
        batch_size: images per extractor call.
        device: where the images go (the metric's device).
        cache: the cache to consult, or None.
        root: the folder the cache key takes the files' relative paths from (required with ``cache``).
        progress: ``progress(phase, done, total)`` after each batch (and once at 0) — ``"hashing <phase>"`` while the
            cache key is computed, then ``phase`` while images are extracted.
        phase: the name of the extraction in ``progress``.
        workers, decode: see :func:`~gpumetrics.image.io.same_size_batches` (the values do not depend on
            ``workers``; ``decode="nvjpeg"`` changes the pixels and is part of the cache key).
        reader: None (default: the files are read by a reader of their own), or the
            :class:`~gpumetrics.image.io.ImageBatches` of a run whose list ``part`` is ``files``, read with the same
            ``batch_size``, ``workers``, ``decode`` and ``device`` — its batches are taken (a cache hit skips the
            list), so that the decoding processes of several sides start once and before the network is built.
        max_bytes_in_flight: the bound of decoded pixels in flight of the files' own reader (see
            :func:`~gpumetrics.image.io.same_size_batches`; ``reader`` has its own).

    Raises:
        ValueError: ``cache`` without ``root``, or with a side that already holds samples.
    """
    side = side_of(real)
    key = None
    if cache is not None and files:
        if root is None:
            raise ValueError("`root` is required with `cache`: the key holds the files' paths relative to it")
        if not metric.side_is_empty(side):
            raise ValueError(f"`cache` needs an empty {side} side: it stores and restores the whole side")
        key = reference_key(metric, side, files, root, batch_size, device, progress, f"hashing {phase}", decode)
    if key is not None:
        states = cache.load(key)
        if states is not None:
            try:
                metric.restore_side_states(side, states)
                if reader is not None:
                    reader.skip(part)
                return
            except ValueError as err:
                warn_unusable(cache.path(key), err)
    if progress is not None:
        progress(phase, 0, len(files))
    if reader is None:
        with ImageBatches([files], batch_size, workers=workers, decode=decode, device=device,
                          max_bytes_in_flight=max_bytes_in_flight) as own:
            _add_batches(metric, own.batches(0), real, len(files), progress, phase)
    else:
        _add_batches(metric, reader.batches(part), real, len(files), progress, phase)
    if key is not None:
        cache.store(key, metric.side_states(side))


def _add_batches(metric: RealFakeFeatureMetric, batches: Iterator[tuple[list[int], torch.Tensor]], real: bool,
                 total: int, progress: Optional[ProgressFn], phase: str) -> None:
    """``batches`` through ``metric``'s extractor into one side, ``progress`` told after each."""
    done = 0
    for indices, images in batches:
        metric.update(images, real=real)
        done += len(indices)
        if progress is not None:
            progress(phase, done, total)
