"""Samples whose image file is missing or cannot be decoded, kept in metric states (``missing_image: zero``).

A task metric that scores such samples instead of stopping (the AIJ-2022 tasks, the ``fid`` / ``kid`` /
``clip_score`` tasks with ``missing_image: zero``) counts them in two sum states, ``<prefix>_failed`` (every such
sample) and ``<prefix>_undecodable`` (those whose file exists but cannot be decoded), and names the first
:data:`NAMED_UNDECODABLE` undecodable files, with the decoder's reason, in the ``cat`` state ``undecodable_named``:
one ``uint8`` tensor per file holding the UTF-8 bytes ``path\\0reason\\0``. Being states, the names travel as the
counts do — in a checkpoint (``--resume``), through ``merge_state`` (in call order; the state keeps its first entries:
``Metric.add_state(keep_first=…)``) and under DDP (in rank order) — and ``reset()`` clears them; the one warning at
``compute()`` names files read by any process or before a resume (not the value of one batch that ``forward``
computes: a training loop is warned once, by the ``compute()`` over its batches).
"""

from __future__ import annotations

from typing import Any, Sequence

import torch
from torch import Tensor

from gpumetrics.core.checks import check_choice
from gpumetrics.core.warn import warn_caller

#: what a task does with a sample whose image file is missing or cannot be decoded: ``"error"`` (raise, naming the
#: file) or ``"zero"`` (score it as the AIJ-2022 scripts' ``try/except`` does, counted and warned about)
MISSING_IMAGE = ("error", "zero")

#: undecodable image files a task metric names in its warning (the count covers them all)
NAMED_UNDECODABLE = 3

#: the longest decoder reason kept per file (characters): the names stay small whatever a decoder says
REASON_CHARS = 300

#: the ``cat`` state that names the undecodable files
NAMES_STATE = "undecodable_named"


def check_missing_image(value: Any, name: str = "missing_image") -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is one of :data:`MISSING_IMAGE`."""
    check_choice(value, name, MISSING_IMAGE)


def add_failed_image_states(metric: Any, prefix: str) -> None:
    """Register on ``metric`` the sum states ``<prefix>_failed`` and ``<prefix>_undecodable`` (0-d float64) and the
    ``cat`` state ``undecodable_named`` (module docstring)."""
    metric.add_state(f"{prefix}_failed", torch.zeros((), dtype=torch.float64), dist_reduce_fx="sum")
    metric.add_state(f"{prefix}_undecodable", torch.zeros((), dtype=torch.float64), dist_reduce_fx="sum")
    metric.add_state(NAMES_STATE, [], dist_reduce_fx="cat", keep_first=NAMED_UNDECODABLE)


def count_failed_images(metric: Any, prefix: str, count: int, undecodable: Sequence[tuple[int, Exception]] = ()) -> int:
    """Count ``count`` failed samples (no image file) and the ``undecodable`` ones (``(index, error)`` from
    :func:`~gpumetrics.image.io.same_size_batches`) in ``metric``'s states of :func:`add_failed_image_states`, and
    name the undecodable files. Returns how many samples failed in all."""
    count += len(undecodable)
    if count:
        failed = getattr(metric, f"{prefix}_failed")
        setattr(metric, f"{prefix}_failed", failed + count)
    if undecodable:
        bad = getattr(metric, f"{prefix}_undecodable")
        setattr(metric, f"{prefix}_undecodable", bad + len(undecodable))
        name_undecodable_images(metric, [(getattr(error, "path", ""), getattr(error, "reason", str(error)))
                                         for _, error in undecodable], bad.device)
    return count


def _encoded(text: str) -> bytes:
    return text.replace("\0", "\\0").encode("utf-8", "backslashreplace")


def name_undecodable_images(metric: Any, named: Sequence[tuple[str, str]], device: torch.device) -> None:
    """Append ``(path, reason)`` of undecodable files to ``metric.undecodable_named`` (tensors on ``device``) while
    it holds fewer than :data:`NAMED_UNDECODABLE` entries, so its memory stays bounded."""
    kept: list[Tensor] = getattr(metric, NAMES_STATE)
    room = max(NAMED_UNDECODABLE - len(kept), 0)
    for path, reason in named[:room]:
        data = _encoded(str(path)) + b"\0" + _encoded(str(reason)[:REASON_CHARS]) + b"\0"
        kept.append(torch.frombuffer(bytearray(data), dtype=torch.uint8).to(device))


def undecodable_images(metric: Any) -> list[tuple[str, str]]:
    """``(path, reason)`` of the first :data:`NAMED_UNDECODABLE` undecodable files ``metric`` names, in the order they
    were read (merged metrics in call order, DDP ranks in rank order). Reads the names (a host sync) only when there
    are some."""
    parts = [t.reshape(-1) for t in getattr(metric, NAMES_STATE) if t.numel()]
    if not parts:
        return []
    fields = bytes(torch.cat([t.to(torch.uint8) for t in parts]).tolist()).split(b"\0")
    pairs = [(fields[i].decode("utf-8", "replace"), fields[i + 1].decode("utf-8", "replace"))
             for i in range(0, len(fields) - 1, 2)]
    return pairs[:NAMED_UNDECODABLE]


def warn_undecodable_images(metric: Any, prefix: str, consequence: str) -> None:
    """One warning for all the image files ``metric`` could not decode: how many (the ``<prefix>_undecodable``
    count), ``consequence`` (what was done with them), and the first few with the decoder's reason. Nothing — and
    no host sync — when no file is named, or while ``forward`` computes one batch's value (the ``compute()`` over
    every batch warns)."""
    if getattr(metric, "computing_batch_value", False):
        return
    named = undecodable_images(metric)
    if not named:
        return
    count = int(getattr(metric, f"{prefix}_undecodable").tolist())
    listed = "; ".join(f"'{path}': {reason}" if path else reason for path, reason in named)
    more = ", …" if count > len(named) else ""
    name = getattr(metric, "signature_name", "") or type(metric).__name__
    warn_caller(f"{name}: {count} image file(s) cannot be decoded, {consequence} ({listed}{more})")
